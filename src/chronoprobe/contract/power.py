"""How many items a run takes to tell two models apart: the power statement of every plan line.

A lens of a given size detects a paired difference of its headline rate (``CheckPart.sizing``) only when it is
large enough; how large depends on how often two models disagree on an item, the discordance (Connor 1987,
:func:`chronoprobe.metrics.paired.detectable_difference`). Where the call cache already holds the answers of
two or more models to this run's prompts (local models it remembers, :mod:`chronoprobe.models.lazy`), the
lens is run on them from the cache alone (no model loads: a model whose answers are not all there is left
out) and their discordance is measured; otherwise a stated assumption stands in
(:data:`~chronoprobe.metrics.paired.ASSUMED_DISCORDANCE`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from statistics import NormalDist
from typing import Any

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.contract.check_part import check_part
from chronoprobe.metrics.paired import ASSUMED_DISCORDANCE, POWER, detectable_difference, discordance
from chronoprobe.metrics.records import ALL
from chronoprobe.models.base import Backend
from chronoprobe.models.lazy import LazyBackend
from chronoprobe.records.runlog import Run

__all__ = ["Measured", "half_width", "measured_discordance", "power_lines", "power_text", "precision_units", "units_of"]

REMEMBERED = 6
"""The most recent remembered models tried for a measurement (each run from the cache alone)."""
PRECISION_SHARE = 0.5
"""The share a precision budget sizes for: the widest interval a rate can have (stated in the plan line)."""


class _NotCached(Exception):
    """A measurement needs an answer the cache does not hold: that model is left out."""


def _refuse() -> Backend:
    raise _NotCached


@dataclass(frozen=True)
class Measured:
    """The discordance of a lens's headline rate between models the call cache answered for."""

    rate: float
    """The share of items two of them judge differently, averaged over every pair."""
    models: tuple[str, ...]
    units: int
    """Items behind it."""


def _cached_models(cache: CallCache) -> list[CachedModel]:
    found: list[CachedModel] = []
    for key, record in cache.remembered_loads(REMEMBERED):
        try:
            backend = LazyBackend(key, cache, _refuse, description=record)
        except Exception:  # remembered by another version in another shape
            continue
        if all(m.info.label != backend.info.label for m in found):
            found.append(CachedModel(backend, cache))
    return found


def measured_discordance(lens: Any, cache: CallCache) -> Measured | None:
    """The discordance of ``lens``'s headline rate among the models whose answers to its (loaded) run are all in
    ``cache``; None with fewer than two, or for a lens that does not declare its runs cheap to replay
    (``Sizing.measured``)."""
    sizing = check_part(type(lens)).sizing
    if sizing is None or not sizing.measured or not lens.loaded:
        return None
    models = _cached_models(cache)
    answered: list[tuple[CachedModel, list[Any]]] = []
    for model in models:
        try:
            answered.append((model, list(lens.run(model, None))))
        except Exception:  # an answer not in the cache (the model would load), or a lens that needs its setup
            continue
    if len(answered) < 2:
        return None
    rows = [row for _, mine in answered for row in mine]
    summary = lens.summarise([m for m, _ in answered], rows)
    run = Run(Path("."), lens.name, summary, kind=lens.kind, config=lens.config, rows=rows)
    outcomes = []
    paired = getattr(type(lens), "comparable", None)  # the compare part (reports.compare.Paired), if it has one
    for model, _ in answered:
        comparable = paired(run, model.info.label) if paired is not None else None
        chosen = next(
            (o for o in (comparable.outcomes if comparable else ()) if o.metric == sizing.metric and o.group == ALL),
            None,
        )
        if chosen is not None and chosen.kind == "rate":
            outcomes.append((model.info.name or model.info.label, chosen))
    rates, units = [], 0
    for (_, first), (_, second) in combinations(outcomes, 2):
        shared = [item for item in first.values if item in second.values]
        table = discordance([first.number(i) for i in shared], [second.number(i) for i in shared])
        if table.rate is not None:
            rates.append(table.rate)
            units = max(units, table.n)
    if not rates:
        return None
    return Measured(sum(rates) / len(rates), tuple(name for name, _ in outcomes), units)


def units_of(lens: Any, items: int) -> int:
    """The items behind one estimate of the lens's headline rate, of the ``items`` its run asks."""
    sizing = check_part(type(lens)).sizing
    return max(0, int(items * sizing.share)) if sizing is not None else items


def power_text(units: int, unit: str, measured: Measured | None) -> str:
    """``130 facts: detects a paired difference of about 11 points at 80% power (...)``."""
    rate = measured.rate if measured is not None else ASSUMED_DISCORDANCE
    if measured is not None:
        basis = (
            f"from the discordance of {', '.join(measured.models)} measured in the call cache "
            f"({100 * measured.rate:.0f}% of {measured.units} {unit})"
        )
    else:
        basis = (
            f"assuming two models disagree on {100 * ASSUMED_DISCORDANCE:.0f}% of {unit}; the call cache measured none"
        )
    found = detectable_difference(units, rate)
    if found is None:
        return f"{units:,} {unit}: too few to detect a paired difference at {POWER:.0%} power ({basis})"
    return f"{units:,} {unit}: detects a paired difference of about {100 * found:.0f} points at {POWER:.0%} power ({basis})"


def precision_units(points: float, share: float = PRECISION_SHARE) -> int:
    """Units a rate needs for a 95% interval of half-width ``points`` (percentage points) at the widest share."""
    z = NormalDist().inv_cdf(0.975)
    return math.ceil(z * z * share * (1.0 - share) / (points / 100.0) ** 2)


def half_width(units: int, share: float = PRECISION_SHARE) -> float:
    """The 95% half-width, in points, that ``units`` units give a rate at the widest share."""
    z = NormalDist().inv_cdf(0.975)
    return 100.0 * z * math.sqrt(share * (1.0 - share) / units) if units > 0 else math.inf


def power_lines(lens: Any, cache: CallCache) -> list[str]:
    """The run's power statement, for its plan (``<lens> run``): what its size detects; none for a lens without
    :attr:`~chronoprobe.contract.check_part.CheckPart.sizing` or that does not count its items."""
    sizing = check_part(type(lens)).sizing
    if sizing is None:
        return []
    try:
        workload = lens.workload()
    except Exception:  # counting needs what only the run has (an earlier lens's folder): no statement
        return []
    if workload is None:
        return []
    units = units_of(lens, workload.items)
    bound = "at most " if workload.at_most else ""
    return [f"{lens.name}: {bound}{power_text(units, sizing.unit, measured_discordance(lens, cache))}"]
