"""Comparisons inside ``chronoprobe check``: its models against each other, and the whole check against an
earlier one (``--baseline DIR``), each paired on the items both were asked (:mod:`chronoprobe.reports.compare`).

- **Several models** (``--model A --model B``): each lens's run holds both; the paragraph ends with the paired
  verdicts, one per metric a lens names a verdict for (``fresher``, ``more persuadable`` ...), and the card
  shows every headline difference with its interval.
- **A baseline**: an earlier check folder, of the same model or another (how a replacement is gated). Each of
  its lens runs is checked before any model loads: one asked with other settings (another budget, snapshot,
  sample) was asked other items, and is refused unless ``--allow-different-items``. After the lenses run, each
  model is compared with the baseline's (the one of the same name, else the baseline's only or same-placed
  model), and a ``--require`` on ``METRIC[.CLASS].delta`` is judged on that paired difference.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chronoprobe.checkup.baseline_items import check_baseline_items
from chronoprobe.checkup.report import read_record
from chronoprobe.checkup.select import Chosen, config_json
from chronoprobe.checkup.thresholds import NOTHING_SHARED, GateResult, Threshold, judge
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.metrics.paired import Draws
from chronoprobe.metrics.records import ALL
from chronoprobe.paths import latest_named
from chronoprobe.records.fields import spelling
from chronoprobe.records.runlog import Metric, Run, read_folder
from chronoprobe.reports.compare import (
    CompareRow,
    Comparison,
    Side,
    cannot_tell,
    compare_runs,
    compare_sides,
    counted,
    needs_text,
    sentence,
)
from chronoprobe.reports.plain_words import difference

__all__ = ["Baseline", "baseline_comparisons", "baseline_lines", "judge_deltas", "open_baseline", "verdicts"]

IGNORED = frozenset({"models", "out"})
"""Config fields that do not decide which items a lens asks."""


@dataclass
class Baseline:
    """An earlier check folder and its lens runs."""

    path: Path
    runs: dict[str, Run] = field(default_factory=dict)
    allow_different_items: bool = False
    units: dict[str, set[str]] = field(default_factory=dict)
    """Lens -> the units (facts, questions) its run holds, where the lens compares paired (read in the pre-flight)."""


def _recorded(run: Run) -> dict[str, Any]:
    log = json.loads((run.path / "run.json").read_text(encoding="utf-8"))
    config = log.get("config")
    return config if isinstance(config, dict) else {}


def _own_folder(recorded: Any, planned: Any, earlier: Path, out: Path) -> bool:
    """Both values name the same lens folder of their own check (editing reads its check's outdated run)."""
    if not isinstance(recorded, str) or not isinstance(planned, str):
        return False
    first, second = Path(recorded), Path(planned)
    return (
        first.name == second.name
        and first.parent.resolve() == earlier.resolve()
        and second.parent.resolve() == out.resolve()
    )


def _differences(
    recorded: Mapping[str, Any], planned: Mapping[str, Any], outputs: frozenset[str], earlier: Path, out: Path
) -> list[str]:
    skipped = IGNORED | outputs
    keys = sorted((set(recorded) | set(planned)) - skipped)
    return [
        key
        for key in keys
        if recorded.get(key) != planned.get(key) and not _own_folder(recorded.get(key), planned.get(key), earlier, out)
    ]


def open_baseline(
    path: Path,
    chosen: Sequence[Chosen],
    out: Path,
    thresholds: Sequence[Threshold] = (),
    *,
    allow_different_items: bool = False,
) -> Baseline:
    """The check folder at ``path`` with its lens runs; a ConfigError (before any model loads) when it is not one,
    when a lens of it was asked other items than this check will ask (unless ``allow_different_items``), when its
    answers are empty or damaged, or when it has no items for a metric a ``.delta`` threshold gates."""
    path = latest_named(path) or path  # results/check/smollm2: its latest smollm2-<timestamp>
    record = read_record(path) if path.is_dir() else None
    if record is None:
        raise ConfigError("--baseline", f"{path} is not a check folder (no check.json): give an earlier check's --out")
    baseline = Baseline(path, allow_different_items=allow_different_items)
    for entry in record.lenses:
        if entry.folder is None:
            continue
        try:
            run = read_folder(path / entry.folder, label=str(path / entry.folder))
        except DataError as exc:
            raise ConfigError("--baseline", f"its {entry.lens} folder does not read ({exc})") from None
        if run is not None:
            baseline.runs[entry.lens] = run
    if not baseline.runs:
        raise ConfigError("--baseline", f"{path} holds no finished lens run to compare with")
    for item in chosen:
        earlier = baseline.runs.get(item.name)
        if item.lens is None or earlier is None or allow_different_items:
            continue
        differ = _differences(
            _recorded(earlier), config_json(item.lens), spelling(type(item.lens.config)).outputs, path, out
        )
        if differ:
            raise ConfigError(
                "--baseline",
                f"its {item.name} run asked other items than this check will ({', '.join(differ)} differ); "
                "give --allow-different-items to compare the items they share",
            )
    for threshold in (t for t in thresholds if t.delta and t.lens not in baseline.runs):
        raise ConfigError(
            f"--require {threshold.text!r}",
            f"the baseline {path} has no finished {threshold.lens} run to compare with "
            f"(it has {', '.join(baseline.runs)})",
        )
    baseline.units = check_baseline_items(baseline.runs, {c.name for c in chosen if c.lens is not None}, thresholds)
    return baseline


def _partner(baseline: Run, side: Side, position: int) -> Side | None:
    """The baseline's model to compare ``side`` with: the same name, else its only model, else the same place."""
    entries = baseline.models
    named = next((e for e in entries if e.name == side.name), None)
    if named is None and entries:
        named = entries[0] if len(entries) == 1 else entries[min(position, len(entries) - 1)]
    return Side(baseline, named.key, named.name) if named is not None else None


def baseline_comparisons(baseline: Baseline, runs: Mapping[str, Run]) -> list[Comparison]:
    """Every model of every lens run of this check (B) against its baseline model (A), paired."""
    draws = Draws()
    found = []
    for lens, run in runs.items():
        earlier = baseline.runs.get(lens)
        if earlier is None:
            continue
        for position, entry in enumerate(run.models):
            side = Side(run, entry.key, entry.name)
            partner = _partner(earlier, side, position)
            if partner is not None:
                found.append(
                    compare_sides(partner, side, allow_different_items=baseline.allow_different_items, draws=draws)
                )
    return found


def _delta_record(row: CompareRow, model: str) -> Metric:
    return Metric(
        model=model,
        group=row.group,
        name=f"{row.metric}.delta",
        value=row.delta,
        n=row.n,
        ci_low=row.ci_low,
        ci_high=row.ci_high,
        unit=row.unit,
    )


def judge_deltas(
    thresholds: Sequence[Threshold], comparisons: Sequence[Comparison], baseline: Path | None, *, strict: bool
) -> list[GateResult]:
    """Each ``.delta`` threshold for each model compared with the baseline: on the paired interval of B − A unless
    ``strict`` (the point difference); a metric the comparison did not give fails as not measured, and one over no shared item fails as such. The result
    names the model and the baseline (``smollm2 vs baseline results/check/last-week``)."""
    results: list[GateResult] = []
    for threshold in (t for t in thresholds if t.delta):
        mine = [c for c in comparisons if c.lens == threshold.lens]
        if not mine:
            name = f"every model vs baseline {baseline}"
            results.append(GateResult(threshold, name, None, passed=False, why="not measured"))
            continue
        for comparison in mine:
            model = f"{comparison.second.name} vs baseline {baseline} ({comparison.first.name})"
            row = next(
                (r for r in comparison.rows if r.metric == threshold.metric and r.group == threshold.group), None
            )
            if _shares_nothing(comparison, row):  # a change over nothing never holds, whatever the records say
                results.append(GateResult(threshold, model, None, passed=False, why=NOTHING_SHARED))
                continue
            record = _delta_record(row, comparison.second.name) if row is not None else None
            results.append(judge(threshold, record, model, strict=strict))
    return results


def _shares_nothing(comparison: Comparison, row: CompareRow | None) -> bool:
    """The two sides share no unit: over the whole lens, or (a paired row) over the row's class."""
    if comparison.shared == 0:
        return True
    return row is not None and row.paired is not None and row.paired.n == 0


def baseline_lines(comparisons: Sequence[Comparison], thresholds: Sequence[Threshold]) -> list[str]:
    """The list "Against the baseline": per comparison what it left out, then one line per metric a ``.delta``
    threshold gates or whose paired difference decides (over every item; per class for a lens with no overall
    numbers), else one line saying that none decides."""
    said = []
    for comparison in comparisons:
        a, b = comparison.names
        gated = {(t.metric, t.group) for t in thresholds if t.delta and t.lens == comparison.lens}
        overall = any(row.group == ALL for row in comparison.rows)
        shown = [
            row
            for row in comparison.rows
            if (row.metric, row.group) in gated or (row.decides and (row.group == ALL or not overall))
        ]
        said += comparison.notes()
        if comparison.shared == 0:
            said.append(f"{comparison.lens}: {b} and {a} share no {comparison.unit}: nothing is compared")
            continue
        said += [_change_line(comparison.lens, row, a, b) for row in shown]
        if not any(row.decides for row in shown):
            over = f" over {counted(comparison.shared, comparison.unit)}" if comparison.shared is not None else ""
            said.append(f"{comparison.lens}: no headline difference between {b} and {a} decides{over}")
    return said


def _change_line(lens: str, row: CompareRow, a: str, b: str) -> str:
    """``outdated.soft_constraint_pct.up-to-date: B gives a current answer on ... (+20.8 points, ...)``."""
    name = f"{lens}.{row.metric}" + ("" if row.group == ALL else f".{row.group}")
    text = sentence(row, a, b, any_class=True)
    if text is None:  # no paired test: the two records' difference alone
        change = "not measured on both" if row.delta is None else difference(row.delta, row.unit)
        return f"{name}: {b} − {a}: {change} (no paired test)"
    return f"{name}: {text.removeprefix(f'{row.metric}: ')}"


def verdicts(runs: Mapping[str, Run]) -> list[str]:
    """The paired verdicts between the models of each lens's run (a check of two models or more): per metric the lens
    names a verdict for, the sentence where the difference decides, else what a difference of its size needs."""
    said = []
    for run in runs.values():
        if len(run.models) < 2:
            continue
        for comparison in compare_runs([run]):
            said += _lens_verdicts(comparison)
    return said


_VERBS = ("knows", "has", "gives")
"""A verdict that starts with one of these is a predicate of its own (``knows more``); the others follow "is"."""


def _lens_verdicts(comparison: Comparison) -> list[str]:
    """Per verdict the lens names (``knows more``, ``fresher where both answer`` ...), in the order its rows come."""
    rows = [r for r in comparison.rows if r.outcome is not None and r.outcome.verdict]
    said: list[str] = []
    for verdict in dict.fromkeys(r.outcome.verdict for r in rows if r.outcome is not None):
        said += _verdict_sentences(
            comparison, [r for r in rows if r.outcome is not None and r.outcome.verdict == verdict]
        )
    return said


def _verdict_sentences(comparison: Comparison, rows: list[CompareRow]) -> list[str]:
    """One verdict's sentences: each class where the paired difference decides, else one "cannot tell" (with how
    many items both models have, where the lens names them: "cannot tell (both date only 11 facts)")."""
    a, b = comparison.names
    measured = [r for r in rows if r.delta is not None]
    deciding = [r for r in measured if r.decides]
    said = []
    for row in deciding:
        assert row.outcome is not None and row.delta is not None
        winner = b if row.delta > 0 else a
        where = "" if row.group == ALL else f" on {row.group} {row.outcome.unit}"
        text = sentence(row, a, b, any_class=True, named=False)
        said.append(f"{row.outcome.verdict.capitalize()}{where}: {winner}. {text}")
    if deciding or not rows:
        return said
    shown = next((r for r in measured if r.group == ALL), None) or max(
        measured or rows, key=lambda r: abs(r.delta or 0.0)
    )
    assert shown.outcome is not None
    where = "" if shown.group == ALL else f" on {shown.group} {shown.outcome.unit}"
    reason = f"; {needs_text(shown)}" if shown.paired is not None and shown.delta is not None else ""
    verdict = shown.outcome.verdict
    asked = verdict if verdict.split()[0] in _VERBS else f"is {verdict}"
    return [f"Which of {a} and {b} {asked}{where}: {cannot_tell(shown)}{reason}"]
