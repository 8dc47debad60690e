"""``chronoprobe history``: is a deployed model getting staler? Its audits across gold snapshots.

A model does not change after it ships, but the world does. Re-judging its cached answers
against a newer snapshot (``check --live`` or ``--snapshot NEW``; no model call) gives one audit
per snapshot. This module reads them back from any mix of check folders and ``outdated run``
folders and builds, per model:

- the up-to-date, outdated and irrelevant shares (soft constraint, over every fact, with their
  95% intervals) by snapshot date;
- for each two consecutive snapshots, the facts whose current gold answer changed
  (:func:`chronoprobe.knowledge.snapshot.diff_snapshots`) and which of the model's answers those
  changes turned from up-to-date to outdated.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from chronoprobe.errors import ChronoprobeError, DataError
from chronoprobe.io import write_json_atomic, write_text_atomic
from chronoprobe.knowledge.snapshot import diff_snapshots, load_snapshot
from chronoprobe.lenses.outdated.audit import ResponseRecord
from chronoprobe.lenses.outdated.plots import COLOURS, save_figure
from chronoprobe.metrics.records import ALL
from chronoprobe.records.runlog import ITEMS, Metric, Provenance, read_items
from chronoprobe.reports.markdown import table
from chronoprobe.reports.plain_words import brief
from chronoprobe.reports.tidy_table import find_runs
from chronoprobe.tables import TableView

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from chronoprobe.records.runlog import Run

SHARES = ("up-to-date", "outdated", "irrelevant")
KIND = "outdated run"
HISTORY_KIND = "history"


class Point(BaseModel):
    """One audit of one model: its snapshot and the verdict shares over every fact."""

    run: str
    model: str
    """The run's key for the model (its given name, else its spec)."""
    name: str
    spec: str = ""
    """The model itself: two runs of one spec are one model's history, whatever each named it."""
    snapshot: str
    retrieved: dt.date | None
    created: str = ""
    shares: dict[str, Metric]
    """Verdict -> the ``soft_constraint_pct.<verdict>`` record over every fact."""


class Turned(BaseModel):
    """An answer that was up-to-date against the older snapshot and is outdated against the newer one."""

    fact_id: str
    template_index: int
    response: str
    was: list[str]
    """The fact's current gold answer(s) in the older snapshot."""
    now: list[str]


class FactChange(BaseModel):
    fact_id: str
    was: list[str]
    now: list[str]


class Change(BaseModel):
    """Between two consecutive snapshots of one model's audits."""

    model: str
    before: str
    after: str
    facts: list[FactChange]
    """Facts whose current gold answer changed."""
    turned: list[Turned]
    note: str = ""


class History(BaseModel):
    points: list[Point]
    changes: list[Change]
    warnings: list[str] = []

    def label(self, point: Point) -> str:
        """The model's name, with its spec when another model of this history goes by the same name."""
        shared = {p.spec for p in self.points if p.name == point.name}
        return point.name if len(shared) <= 1 else f"{point.name} ({point.spec})"


def _retrieved(provenance: Provenance) -> tuple[str, dt.date | None]:
    snapshot = provenance.snapshot
    if snapshot is None:
        return "unknown", None
    name = str(snapshot.get("name") or "unknown")
    try:
        return name, dt.date.fromisoformat(str(snapshot.get("retrieved")))
    except ValueError:
        return name, None


def _points(run: Run) -> list[Point]:
    snapshot, retrieved = _retrieved(run.provenance)
    names = {m.key: m.name for m in run.models}
    specs = {m.key: m.spec for m in run.models}
    found = []
    for key in run.summary.models:
        shares = {
            verdict: metric
            for metric in run.summary.metrics
            for verdict in SHARES
            if metric.model == key and metric.group == ALL and metric.name == f"soft_constraint_pct.{verdict}"
        }
        if shares:
            found.append(
                Point(
                    run=run.label,
                    model=key,
                    name=names.get(key, key),
                    spec=specs.get(key, key),
                    snapshot=snapshot,
                    retrieved=retrieved,
                    created=run.provenance.created,
                    shares=shares,
                )
            )
    return found


def _rows(folder: Path) -> list[ResponseRecord]:
    path = folder / ITEMS if (folder / ITEMS).is_file() else folder / "responses.jsonl"
    return [row for row in read_items(path, ResponseRecord) if isinstance(row, ResponseRecord)]


def _diff(before: str, after: str) -> tuple[list[FactChange] | None, dict[str, FactChange]]:
    """The facts whose current answer changed, or None when a snapshot cannot be found by name."""

    try:
        diff = diff_snapshots(load_snapshot(before), load_snapshot(after))
    except ChronoprobeError:
        return None, {}
    facts = [
        FactChange(fact_id=f.fact_id, was=list(f.old_current), now=list(f.new_current)) for f in diff.changed_current
    ]
    return facts, {f.fact_id: f for f in facts}


def _change(earlier: Point, later: Point, folders: dict[str, Path], shown: str) -> Change:
    """What changed for one model (one spec) from its audit ``earlier`` to ``later`` (each keyed as its run keys it)."""
    facts, by_fact = _diff(earlier.snapshot, later.snapshot)
    old = {(r.fact_id, r.template_index): r for r in _rows(folders[earlier.run]) if r.model == earlier.model}
    new = {(r.fact_id, r.template_index): r for r in _rows(folders[later.run]) if r.model == later.model}
    turned = []
    for key, before in old.items():
        after = new.get(key)
        if after is None or before.verdict != "up-to-date" or after.verdict != "outdated":
            continue
        if facts is not None and key[0] not in by_fact:
            continue  # the verdict moved without a change of gold (another judge setting): not the world's doing
        change = by_fact.get(key[0])
        turned.append(
            Turned(
                fact_id=key[0],
                template_index=key[1],
                response=after.response,
                was=change.was if change else [],
                now=change.now if change else [],
            )
        )
    note = (
        ""
        if facts is not None
        else f"snapshot {earlier.snapshot} or {later.snapshot} not found: answers compared by verdict only"
    )
    return Change(
        model=shown, before=earlier.snapshot, after=later.snapshot, facts=facts or [], turned=turned, note=note
    )


def read_history(paths: Sequence[Path], models: Sequence[str] = ()) -> History:
    """Every ``outdated run`` under ``paths`` (check folders included), by model and snapshot date; ``models``
    (names or specs): only those."""

    found = find_runs(paths)
    runs = [r for r in found.runs if r.lens == "outdated" and r.kind == KIND]
    if not runs:
        raise DataError(", ".join(str(p) for p in paths), "holds no outdated run (a check folder or `outdated run`)")
    folders = {r.label: r.path for r in runs}
    points = [p for r in runs for p in _points(r) if not models or {p.model, p.name, p.spec} & set(models)]
    if not points:
        raise DataError("--only-model", f"{', '.join(map(repr, models))} in none of these runs")
    points.sort(key=lambda p: (p.spec, p.retrieved or dt.date.min, p.created, p.run))
    history = History(points=points, changes=[], warnings=found.warnings)
    for spec in dict.fromkeys(p.spec for p in points):  # by the model itself: one name may be two models
        mine = [p for p in points if p.spec == spec]
        history.changes += [
            _change(a, b, folders, history.label(b))
            for a, b in itertools.pairwise(mine)
            if a.snapshot != b.snapshot  # two audits against one snapshot: the same gold, nothing changed
        ]
    return history


# --- writing -----------------------------------------------------------------------------------


def _cell(metric: Metric | None) -> str:

    return brief(metric) if metric is not None else "–"


def history_view(history: History, *, wide: bool = False) -> TableView:
    """The shares by run folder and snapshot (soft constraint, 95% intervals), as ``chronoprobe history`` shows them:
    narrowed to the terminal (the retrieval date left out first), or whole at its own width when ``wide``."""
    rows = [
        (
            history.label(point),
            point.snapshot,
            str(point.retrieved or "?"),
            *(_cell(point.shares.get(v)) for v in SHARES),
        )
        for point in history.points
    ]
    title = "Answers judged against each snapshot (soft constraint, 95% intervals)"
    columns = ("model", "snapshot", "retrieved", *SHARES)
    return TableView(title, columns, rows, droppable=("retrieved",), wide=wide, widen_hint="--wide shows them")


def change_lines(history: History) -> list[str]:
    """Per model and two consecutive snapshots (rich markup): the facts whose current answer changed, each answer
    that turned outdated, and any note."""
    lines: list[str] = []
    for change in history.changes:
        facts = ", ".join(f.fact_id for f in change.facts) or "none"
        lines.append(f"{change.model}: {change.before} -> {change.after}: current answer changed for {facts}")
        lines.extend(
            f"  turned outdated: {turned.fact_id} #{turned.template_index} {turned.response!r} "
            f"(was current: {'; '.join(turned.was) or '?'}; now: {'; '.join(turned.now) or '?'})"
            for turned in change.turned
        )
        if change.note:
            lines.append(f"  [yellow]note[/]: {change.note}")
    return lines


def history_markdown(history: History) -> str:

    lines = ["# Is the model getting staler?", ""]
    lines.append(
        "Soft-constraint shares over every fact, judged against each snapshot, with 95% Wilson intervals. "
        "The model's answers are the same in every row (the call cache serves them); only the gold answers change."
    )
    lines.append("")
    rows = [
        [
            history.label(p),
            p.snapshot,
            str(p.retrieved or "?"),
            *(_cell(p.shares.get(v)) for v in SHARES),
            str(p.shares[SHARES[0]].n if SHARES[0] in p.shares else "–"),
        ]
        for p in history.points
    ]
    lines += [
        table(["model", "snapshot", "retrieved", *SHARES, "facts"], rows),
        "",
        "![shares by snapshot](history.png)",
        "",
    ]
    for change in history.changes:
        lines += [f"## {change.model}: {change.before} → {change.after}", ""]
        if change.note:
            lines += [f"Note: {change.note}.", ""]
        if change.facts:
            lines.append(f"{len(change.facts)} fact(s) whose current answer changed:")
            lines.append("")
            lines.append(
                table(["fact", "was", "now"], [[f.fact_id, "; ".join(f.was), "; ".join(f.now)] for f in change.facts])
            )
        else:
            lines.append("No current answer changed between these snapshots.")
        lines.append("")
        if change.turned:
            lines.append(f"{len(change.turned)} answer(s) these changes turned from up-to-date to outdated:")
            lines.append("")
            rows = [
                [t.fact_id, str(t.template_index), t.response, "; ".join(t.was), "; ".join(t.now)]
                for t in change.turned
            ]
            lines.append(table(["fact", "paraphrase", "answer", "was current", "now current"], rows))
        else:
            lines.append("No answer turned from up-to-date to outdated.")
        lines.append("")
    return "\n".join(lines)


def history_figure(history: History) -> Figure:
    """The shares by snapshot, one panel per model, the intervals as error bars."""
    from matplotlib.figure import Figure  # deferred: matplotlib

    models = list(dict.fromkeys(p.spec for p in history.points))
    fig = Figure(figsize=(6.5, 3.2 * len(models)))
    axes = fig.subplots(len(models), 1, squeeze=False)[:, 0]
    for ax, key in zip(axes, models, strict=True):
        mine = [p for p in history.points if p.spec == key]
        x = list(range(len(mine)))
        for offset, verdict in zip((-0.08, 0.0, 0.08), SHARES, strict=True):
            values = [p.shares[verdict].value if verdict in p.shares else None for p in mine]
            low = [p.shares[verdict].ci_low if verdict in p.shares else None for p in mine]
            high = [p.shares[verdict].ci_high if verdict in p.shares else None for p in mine]
            ys = [v if v is not None else float("nan") for v in values]
            below = [(v - lo) if v is not None and lo is not None else 0.0 for v, lo in zip(values, low, strict=True)]
            above = [(hi - v) if v is not None and hi is not None else 0.0 for v, hi in zip(values, high, strict=True)]
            ax.errorbar(
                [i + offset for i in x],
                ys,
                yerr=[below, above],
                marker="o",
                capsize=3,
                color=COLOURS[verdict],
                label=verdict,
            )
        ax.set_xticks(x, [f"{p.snapshot}\n{p.retrieved or '?'}" for p in mine], fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_ylabel("% of facts (soft constraint)")
        ax.set_title(f"{history.label(mine[0])}: answers judged against each snapshot", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def write_history(folder: Path, history: History) -> None:
    """``history.md``, ``history.json`` and ``history.png`` (with its SVG) into ``folder``."""

    write_text_atomic(folder / "history.md", history_markdown(history))
    write_json_atomic(folder / "history.json", history.model_dump(mode="json"))
    save_figure(history_figure(history), folder / "history.png")
