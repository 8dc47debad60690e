"""What ``chronoprobe snapshot`` shows and does, below the command line: the snapshots on hand, a diff
of two, a snapshot's current answers or one fact's statements, each as a :class:`TableView`, and a
live fetch saved as a new snapshot (:func:`fetch_snapshot`).

A view is plain data (:class:`~chronoprobe.tables.TableView`): the command draws it, a Python user reads
the same rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from rich.markup import escape

from chronoprobe import paths
from chronoprobe.errors import ChronoprobeError, ConfigError
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.snapshot import (
    diff_snapshots,
    list_snapshots,
    load_snapshot,
    save_snapshot,
    shipped_dir,
    snapshot_path,
)
from chronoprobe.knowledge.types import Snapshot
from chronoprobe.knowledge.wikidata import WDQS_ENDPOINT, WikidataClient
from chronoprobe.records.publish import check_not_input, check_output_folder
from chronoprobe.tables import TableView

__all__ = ["TableView", "diff_view", "fact_view", "fetch_snapshot", "listing_view", "snapshot_view"]

ProgressTicks = Callable[[str, int], Callable[[int], None]]
"""``ticks(description, total)`` -> the callback advancing that task."""


def listing_view() -> TableView:
    """The snapshots available by name (yours and the shipped ones)."""

    shipped = shipped_dir().resolve()
    rows, damaged = [], []
    for name, path in list_snapshots():
        where = "shipped" if path.resolve().parent == shipped else "user"
        try:
            snapshot = load_snapshot(str(path))
        except ChronoprobeError as exc:  # one damaged file is named, and the others still listed
            rows.append((name, "?", "?", f"{where}, unreadable", str(path)))
            damaged.append(f"[yellow]warning[/]: {escape(str(exc))}")
            continue
        rows.append((name, snapshot.retrieved.isoformat(), str(len(snapshot.answers)), where, str(path)))
    columns = ("name", "retrieved", "facts", "where", "path")
    return TableView("Snapshots", columns, rows, after=tuple(damaged), droppable=("path",))


def diff_view(old: str, new: str, *, statements: bool = False) -> TableView:
    """Which facts' current answers changed from snapshot ``old`` to ``new`` (names or files); with
    ``statements``, every added and removed statement after the table."""
    diff = diff_snapshots(load_snapshot(old), load_snapshot(new))
    rows = [
        (
            fact.fact_id,
            "; ".join(fact.old_current) or "-",
            "; ".join(fact.new_current) or "-",
            str(len(fact.added)),
            str(len(fact.removed)),
        )
        for fact in diff.changed_current
    ]
    after = [
        f"{sign} {fact.fact_id}: {item.label} [{item.span()}]"
        for fact in (diff.facts if statements else [])
        for sign, items in (("+", fact.added), ("-", fact.removed))
        for item in items
    ]
    after.append(
        f"{len(diff.changed_current)} facts with changed current answers, "
        f"{len(diff.facts)} with any statement change, "
        f"{len(diff.only_in_old)} only in {diff.old}, {len(diff.only_in_new)} only in {diff.new}"
    )
    title = f"Current answers: {diff.old} -> {diff.new}"
    return TableView(title, ("fact", "was", "now", "+stmts", "-stmts"), rows, after=tuple(after))


def snapshot_view(name: str | None = None) -> TableView:
    """A snapshot's current answers per fact (``name``: a name or file; None: the shipped one)."""
    snapshot = load_snapshot(name)
    rows = [
        (fact_id, "; ".join(s.label for s in answers.current()) or "[dim]none[/]", str(len(answers.statements)))
        for fact_id, answers in snapshot.answers.items()
    ]
    title = f"{snapshot.name} (retrieved {snapshot.retrieved} from {snapshot.endpoint})"
    return TableView(title, ("fact", "current answer(s)", "statements"), rows, caption=f"source: {snapshot.source}")


def fact_view(name: str | None, fact: str) -> TableView:
    """Every statement of ``fact`` in the snapshot ``name``, oldest first; a ConfigError if it has no such fact."""
    snapshot = load_snapshot(name)
    if fact not in snapshot.answers:
        raise ConfigError(f"--fact {fact!r}", f"not in snapshot {snapshot.name}")
    ordered = sorted(
        snapshot.answers[fact].statements,
        key=lambda s: (s.start is None, s.start.first_day() if s.start else (0, 0, 0), s.label),
    )
    # The shipped DyKnow snapshot holds English labels only: no QID or alias columns to leave empty.
    with_qids = any(item.qid for item in ordered)
    with_aliases = any(item.aliases for item in ordered)
    columns = ("answer", *(["QID"] if with_qids else []), "valid", "current", *(["aliases"] if with_aliases else []))
    rows = [
        (
            item.label,
            *([item.qid or "-"] if with_qids else []),
            item.span(),
            "yes" if item.current_on(snapshot.retrieved) else "",
            *([", ".join(item.aliases)] if with_aliases else []),
        )
        for item in ordered
    ]
    note = () if with_qids else (f"{snapshot.name} has labels only (no QIDs or aliases); source: {snapshot.source}",)
    return TableView(f"{fact} ({snapshot.name}, retrieved {snapshot.retrieved})", columns, rows, after=note)


def fetch_snapshot(
    *,
    endpoint: str = WDQS_ENDPOINT,
    catalogue: Path | None = None,
    limit: int | None = None,
    name: str | None = None,
    timeout: float = 30.0,
    output_dir: Path | None = None,
    replace: bool = False,
    progress_display: Callable[[], AbstractContextManager[ProgressTicks | None]] | None = None,
) -> tuple[Snapshot, Path]:
    """Query ``endpoint`` now for every fact of the catalogue (the shipped DyKnow one by default) and save the
    answers as a new snapshot: the snapshot and where it went.

    Every refusal comes before the first request: an unwritable ``output_dir``, a name that would overwrite
    the catalogue, an existing snapshot without ``replace``. A mostly empty answer (fewer than half of the
    facts with a dated statement) is an error and saves nothing.
    """

    check_output_folder(output_dir if output_dir is not None else paths.home() / "snapshots", "--output-dir")
    name = name or f"wikidata-{dt.date.today().isoformat()}"
    path = snapshot_path(name, output_dir)
    check_not_input(path, {"--catalogue": catalogue}, "--name")
    if path.exists() and not replace:  # checked before any request; save_snapshot checks again
        raise ConfigError(f"--name {name}", f"{path} already exists; pass --replace to overwrite it, or another --name")
    facts = load_catalogue(catalogue)[:limit] if limit else load_catalogue(catalogue)
    with WikidataClient(endpoint=endpoint, timeout_s=timeout) as client, (progress_display or nullcontext)() as ticks:
        advance = ticks("querying Wikidata", len(facts)) if ticks is not None else None
        snapshot = client.fetch(facts, progress=advance, name=name)
    return snapshot, save_snapshot(snapshot, output_dir, replace=replace)
