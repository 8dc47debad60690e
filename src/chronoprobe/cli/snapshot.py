"""``chronoprobe snapshot``: list, fetch, compare and inspect gold-answer snapshots."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from chronoprobe.cli.options import check_endpoint, check_snapshot_name, check_snapshot_ref
from chronoprobe.cli.progress_display import console, progress_bar
from chronoprobe.errors import ConfigError
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.snapshot import (
    diff_snapshots,
    list_snapshots,
    load_snapshot,
    save_snapshot,
    shipped_dir,
    snapshot_path,
)
from chronoprobe.knowledge.types import Statement
from chronoprobe.knowledge.wikidata import WDQS_ENDPOINT, WikidataClient

app = typer.Typer(
    help="Pinned Wikidata answer snapshots for the outdated audit: list, fetch live, diff, show.",
    no_args_is_help=True,
)
out = Console()


def _span(statement: Statement) -> str:
    start = str(statement.start) if statement.start else "?"
    end = str(statement.end) if statement.end else "now"
    span = f"{start} - {end}"
    if statement.point_in_time:
        span += f" (at {statement.point_in_time})"
    return span


@app.command("list")
def list_command() -> None:
    """List the snapshots available by name (yours and the shipped ones)."""
    table = Table(title="Snapshots")
    for column in ("name", "retrieved", "facts", "where", "path"):
        table.add_column(column, overflow="fold")  # a long path wraps, never cut
    shipped = shipped_dir().resolve()
    for name, path in list_snapshots():
        snapshot = load_snapshot(str(path))
        where = "shipped" if path.resolve().parent == shipped else "user"
        table.add_row(name, snapshot.retrieved.isoformat(), str(len(snapshot.answers)), where, str(path))
    out.print(table)


@app.command("fetch")
def fetch_command(
    endpoint: Annotated[
        str, typer.Option(help="SPARQL endpoint (WDQS or a compatible mirror).", callback=check_endpoint)
    ] = WDQS_ENDPOINT,
    catalogue: Annotated[
        Path | None, typer.Option(help="Fact catalogue JSON (default: the shipped DyKnow one).")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N facts.")] = None,
    name: Annotated[
        str | None, typer.Option(help="Snapshot name (default: wikidata-<today>).", callback=check_snapshot_name)
    ] = None,
    timeout: Annotated[float, typer.Option(min=1.0, help="Seconds per request.")] = 30.0,
    output_dir: Annotated[
        Path | None, typer.Option(help="Where to save (default: the user snapshot directory).")
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Overwrite an existing snapshot of the same name.")
    ] = False,
) -> None:
    """Query Wikidata now for every fact of the catalogue and save a new snapshot.

    A mostly empty answer (fewer than half of the facts with a dated statement)
    is an error and saves nothing; an existing snapshot is kept unless --replace.
    """
    from chronoprobe import paths
    from chronoprobe.publish import check_not_input, check_output_folder

    check_output_folder(output_dir if output_dir is not None else paths.home() / "snapshots", "--output-dir")
    name = name or f"wikidata-{dt.date.today().isoformat()}"
    path = snapshot_path(name, output_dir)
    check_not_input(path, {"--catalogue": catalogue}, "--name")
    if path.exists() and not replace:  # checked before any request; save_snapshot checks again
        raise ConfigError(f"--name {name}", f"{path} already exists; pass --replace to overwrite it, or another --name")
    facts = load_catalogue(catalogue)[:limit] if limit else load_catalogue(catalogue)
    with WikidataClient(endpoint=endpoint, timeout_s=timeout) as client, progress_bar(transient=True) as progress:
        task = progress.add_task("querying Wikidata", total=len(facts))
        snapshot = client.fetch(facts, progress=lambda k: progress.advance(task, k), name=name)
    path = save_snapshot(snapshot, output_dir, replace=replace)
    statements = sum(len(a.statements) for a in snapshot.answers.values())
    console.print(f"saved {len(snapshot.answers)} facts ({statements} dated statements) to {path}")
    for fact_id, warning in snapshot.warnings.items():
        console.print(f"[yellow]warning[/] {fact_id}: {warning}", highlight=False)


@app.command("diff")
def diff_command(
    old: Annotated[str, typer.Argument(help="Older snapshot (name or file).", callback=check_snapshot_ref)],
    new: Annotated[str, typer.Argument(help="Newer snapshot (name or file).", callback=check_snapshot_ref)],
    statements: Annotated[bool, typer.Option("--statements", help="Also list added/removed statements.")] = False,
) -> None:
    """Show which facts' current answers changed between two snapshots."""
    diff = diff_snapshots(load_snapshot(old), load_snapshot(new))
    table = Table(title=f"Current answers: {diff.old} -> {diff.new}")
    for column in ("fact", "was", "now", "+stmts", "-stmts"):
        table.add_column(column, overflow="fold")  # a long path wraps, never cut
    for fact in diff.changed_current:
        table.add_row(
            fact.fact_id,
            "; ".join(fact.old_current) or "-",
            "; ".join(fact.new_current) or "-",
            str(len(fact.added)),
            str(len(fact.removed)),
        )
    out.print(table)
    if statements:
        for fact in diff.facts:
            for sign, items in (("+", fact.added), ("-", fact.removed)):
                for item in items:
                    out.print(f"{sign} {fact.fact_id}: {item.label} [{_span(item)}]", highlight=False)
    out.print(
        f"{len(diff.changed_current)} facts with changed current answers, "
        f"{len(diff.facts)} with any statement change, "
        f"{len(diff.only_in_old)} only in {diff.old}, {len(diff.only_in_new)} only in {diff.new}",
        highlight=False,
    )


@app.command("show")
def show_command(
    name: Annotated[
        str | None,
        typer.Argument(help="Snapshot name or file (default: the shipped one).", callback=check_snapshot_ref),
    ] = None,
    fact: Annotated[str | None, typer.Option(help="Show every statement of this fact id.")] = None,
) -> None:
    """Show a snapshot's current answers, or all statements of one fact."""
    snapshot = load_snapshot(name)
    if fact is not None:
        if fact not in snapshot.answers:
            raise ConfigError(f"--fact {fact!r}", f"not in snapshot {snapshot.name}")
        ordered = sorted(
            snapshot.answers[fact].statements,
            key=lambda s: (s.start is None, s.start.earliest() if s.start else dt.date.min, s.label),
        )
        # The shipped DyKnow snapshot holds English labels only: no QID or alias columns to leave empty.
        with_qids = any(item.qid for item in ordered)
        with_aliases = any(item.aliases for item in ordered)
        table = Table(title=f"{fact} ({snapshot.name}, retrieved {snapshot.retrieved})")
        columns = [
            "answer",
            *(["QID"] if with_qids else []),
            "valid",
            "current",
            *(["aliases"] if with_aliases else []),
        ]
        for column in columns:
            table.add_column(column, overflow="fold")  # a long path wraps, never cut
        for item in ordered:
            row = [item.label, *([item.qid or "-"] if with_qids else []), _span(item), "yes" if item.is_current else ""]
            table.add_row(*row, *([", ".join(item.aliases)] if with_aliases else []))
        out.print(table)
        if not with_qids:
            out.print(
                f"{snapshot.name} has labels only (no QIDs or aliases); source: {snapshot.source}", highlight=False
            )
        return
    table = Table(title=f"{snapshot.name} (retrieved {snapshot.retrieved} from {snapshot.endpoint})")
    table.caption = f"source: {snapshot.source}"
    for column in ("fact", "current answer(s)", "statements"):
        table.add_column(column, overflow="fold")  # a long path wraps, never cut
    for fact_id, answers in snapshot.answers.items():
        current = "; ".join(s.label for s in answers.current()) or "[dim]none[/]"
        table.add_row(fact_id, current, str(len(answers.statements)))
    out.print(table)
