"""``check --baseline``: the baseline's answers read in the pre-flight, before any model loads.

A baseline that holds nothing, or whose ``items.jsonl`` is damaged (a copy cut short), or that holds no item
for a metric a ``.delta`` threshold gates, is refused in one line naming the file: a gate must never pass on
nothing, and a damaged file found after the lenses ran would leave a half-made check folder.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from chronoprobe.checkup.thresholds import Threshold
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.metrics.paired import ItemOutcomes
from chronoprobe.records.runlog import ITEMS, Run
from chronoprobe.reports.compare import Side, comparable_of

__all__ = ["check_baseline_items", "check_shared"]


def _outcomes(run: Run) -> list[ItemOutcomes] | None:
    """Every model's item outcomes in ``run``; None when its lens gives none (its runs do not compare paired)."""
    found: list[ItemOutcomes] = []
    for entry in run.models:
        comparable = comparable_of(Side(run, entry.key, entry.name))
        if comparable is None:
            return None
        found += comparable.outcomes
    return found


def _check_gated(threshold: Threshold, run: Run, outcomes: list[ItemOutcomes] | None, items: Path) -> None:
    """The baseline records the gated metric over the gated class, and holds items for it."""
    groups = list(dict.fromkeys(m.group for m in run.summary.metrics if m.name == threshold.metric))
    if threshold.group not in groups:
        known = f"records it for the classes {', '.join(groups)}" if groups else f"does not record {threshold.metric}"
        raise ConfigError(f"--require {threshold.text!r}", f"the baseline's {threshold.lens} run {known}")
    mine = [o for o in outcomes or () if o.metric == threshold.metric]
    if mine and not any(o.values for o in mine if o.group == threshold.group):
        raise ConfigError(
            str(items),
            f"holds no items for {threshold.metric} over {threshold.group}: a change over nothing cannot be gated",
        )


def _units(outcomes: Sequence[ItemOutcomes]) -> set[str]:
    return {o.unit_of(item) for o in outcomes for item in o.values}


def check_baseline_items(
    runs: Mapping[str, Run], running: Collection[str], thresholds: Sequence[Threshold]
) -> dict[str, set[str]]:
    """Each baseline run of a lens this check runs: its answers read whole, some there, and items for every
    metric a ``.delta`` threshold gates; a ConfigError naming the file otherwise (before any model loads).
    Returns lens -> the units (facts, questions) its baseline run holds, where its lens compares paired."""
    changes = [t for t in thresholds if t.delta]
    units: dict[str, set[str]] = {}
    for lens, run in runs.items():
        if lens not in running:
            continue
        items = run.path / ITEMS
        try:
            rows = run.rows
            outcomes = _outcomes(run)
        except DataError as exc:
            raise ConfigError(exc.where, exc.problem) from None
        gated = [t for t in changes if t.lens == lens]
        if not rows and (outcomes is not None or gated):
            raise ConfigError(
                str(items), "holds no answers (empty or missing): a baseline with nothing in it cannot gate a change"
            )
        for threshold in gated:
            _check_gated(threshold, run, outcomes, items)
        if outcomes is not None:
            units[lens] = _units(outcomes)
    return units


def check_shared(
    baseline: Mapping[str, Run], units: Mapping[str, set[str]], planned: Mapping[str, Collection[str]], gated: set[str]
) -> None:
    """Each gated lens whose units this check knows before the run (lens -> its units) shares some with the
    baseline's run; a ConfigError naming the baseline's file otherwise (before any model loads)."""
    for lens in sorted(gated):
        mine, theirs = planned.get(lens), units.get(lens)
        if mine is None or theirs is None or set(mine) & theirs:
            continue
        raise ConfigError(
            str(baseline[lens].path / ITEMS),
            f"shares no item with the {len(mine)} this check's {lens} lens will ask (it holds {len(theirs)} others): "
            "a change over nothing cannot be gated",
        )
