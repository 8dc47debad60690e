"""The knowledge date and staleness of an audited model, from its classified answers (no model calls).

Both ``outdated run`` (:class:`~chronoprobe.lenses.outdated.audit.ResponseRecord` rows) and
``outdated score`` (scored generations) reduce their answers to
:class:`~chronoprobe.metrics.knowledge_date.DatedAnswer` values here, and
:func:`knowledge_summary` turns them into the JSON block stored under ``knowledge_date`` in the
summary. The method is in :mod:`chronoprobe.metrics.knowledge_date` and docs/outdated.md.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from chronoprobe.errors import ConfigError
from chronoprobe.knowledge.types import FactAnswers, Snapshot
from chronoprobe.metrics.knowledge_cutoff import MIN_FACTS as MIN_CUTOFF_FACTS
from chronoprobe.metrics.knowledge_cutoff import change_facts, estimate_knowledge_cutoff
from chronoprobe.metrics.knowledge_date import (
    GRID_START,
    MIN_FACTS,
    DatedAnswer,
    KnowledgeDate,
    Staleness,
    dated_answer,
    decimal_year,
    estimate_knowledge_date,
    group_by_category,
    knowledge_horizon,
    month_label,
    monthly_grid,
    parse_month,
    share_stale,
    staleness,
)
from chronoprobe.metrics.uncertainty import Estimate

if TYPE_CHECKING:
    from chronoprobe.lenses.outdated.audit import ResponseRecord

ALL = "all"
MATCHED = ("up-to-date", "outdated")
FORECAST_MONTHS = (0, 6, 12)
"""Months after the deployment date at which the forecast reads the staleness."""
WIDE_YEARS = 4.0
"""An interval wider than this is called wide in the report."""


def earliest_validity(gold: Mapping[str, FactAnswers]) -> dt.date | None:
    """The first day any gold answer holds from (the earliest start qualifier); None when none has one."""
    starts = [s.start.earliest() for answers in gold.values() for s in answers.statements if s.start is not None]
    return min(starts, default=None)


def check_deployed_at(
    deployed_at: str | None, gold: Mapping[str, FactAnswers], source: str, option: str = "--deployed-at"
) -> None:
    """Refuse a deployment date before anything the gold answers (``source``: the snapshot) know of."""
    first = earliest_validity(gold) if deployed_at is not None else None
    if deployed_at is None or first is None:
        return
    if parse_month(deployed_at) < decimal_year(first):
        raise ConfigError(
            option,
            f"{deployed_at!r} is before {first.isoformat()}, the earliest date an answer of {source} holds from: "
            "no staleness can be forecast there",
        )


# --- answers ---------------------------------------------------------------------------------------


def dated_answers(
    items: Iterable[tuple[str, str, str, Sequence[str]]], gold: Mapping[str, FactAnswers]
) -> tuple[list[DatedAnswer], dict[str, int]]:
    """``(fact_id, category, verdict, matched labels)`` per answer -> the dated answers, and the
    excluded ones counted by reason (irrelevant, ambiguous, undated)."""
    dated: list[DatedAnswer] = []
    excluded: Counter[str] = Counter()
    for fact_id, category, verdict, labels in items:
        if verdict not in MATCHED or len(labels) != 1:
            excluded["ambiguous" if verdict == "ambiguous" or len(labels) > 1 else "irrelevant"] += 1
            continue
        answer = dated_answer(fact_id, category, labels[0], gold[fact_id], current=verdict == "up-to-date")
        if answer is None:
            excluded["undated"] += 1
        else:
            dated.append(answer)
    return dated, {k: excluded[k] for k in ("irrelevant", "ambiguous", "undated")}


# --- the summary block -------------------------------------------------------------------------------


def _round(values: np.ndarray, digits: int) -> list[float | None]:
    return [None if not np.isfinite(v) else round(float(v), digits) for v in values]


def _estimate_json(estimate: Estimate) -> dict[str, Any]:
    data = estimate.to_json()
    data["label"] = month_label(estimate.value) if estimate.value is not None else None
    return data


def _date_block(kd: KnowledgeDate) -> dict[str, Any]:
    return {
        "estimate": _estimate_json(kd.estimate),
        "naive": _estimate_json(kd.naive),
        "answers": kd.answers,
        "informative_facts": kd.informative_facts,
        "noise": kd.noise,
    }


def _staleness_block(curve: Staleness) -> dict[str, Any]:
    return {
        "dates": _round(curve.grid, 4),
        "share": _round(curve.share, 6),
        "low": _round(curve.low, 6),
        "high": _round(curve.high, 6),
        "n": curve.n,
        "changed": curve.changed,
        "half_life_years": curve.half_life.to_json(),
    }


def _forecast(curves: Mapping[str, Staleness], deployed: float) -> dict[str, Any]:
    per_category: dict[str, Any] = {}
    for category, curve in curves.items():
        points = {}
        for months in FORECAST_MONTHS:
            share, low, high, extrapolated = share_stale(curve, deployed + months / 12.0)
            points[str(months)] = {
                "value": 100.0 * share,
                "ci_low": 100.0 * low if np.isfinite(low) else None,
                "ci_high": 100.0 * high if np.isfinite(high) else None,
                "n": curve.n,
                "extrapolated": extrapolated,
            }
        per_category[category] = points
    return per_category


def cutoff_block(
    answers: Sequence[DatedAnswer], gold: Mapping[str, FactAnswers], start: float, end: float
) -> dict[str, Any]:
    """The ``cutoff`` entry of the block: the knowledge cutoff (a changepoint, metrics/knowledge_cutoff.py) with its
    interval, or ``too_few`` (the dated facts there were) below its floor."""
    facts = change_facts(answers, gold)
    found = estimate_knowledge_cutoff(facts, start=start, end=end)
    if found is None:
        return {"too_few": len(facts), "min_facts": MIN_CUTOFF_FACTS}
    labelled = _estimate_json(found.estimate)
    for bound in ("ci_low", "ci_high"):
        labelled[f"{bound}_label"] = month_label(labelled[bound])
    return {
        "estimate": labelled,
        "method": "changepoint of P(answer current) against the date of the change, profile likelihood",
        "last_known_change": found.last_known,
        "first_unknown_change": found.first_unknown,
        "known_before": None if math.isnan(found.before) else round(found.before, 6),
        "known_after": None if math.isnan(found.after) else round(found.after, 6),
        "flat": found.flat,
    }


def knowledge_summary(
    answers: Sequence[DatedAnswer],
    excluded: Mapping[str, int],
    snapshot_date: dt.date,
    *,
    cutoff: str | None = None,
    deployed_at: str | None = None,
    grid_start: float = GRID_START,
    gold: Mapping[str, FactAnswers] | None = None,
) -> dict[str, Any]:
    """The ``knowledge_date`` block of a model's summary (JSON-ready); with ``gold`` (the snapshot's answers) also
    the knowledge cutoff."""
    horizon = decimal_year(snapshot_date)
    grid = monthly_grid(grid_start, horizon)
    block: dict[str, Any] = {
        "method": "maximum likelihood over validity periods (docs/outdated.md, Knowledge date)",
        "snapshot_date": snapshot_date.isoformat(),
        "grid": {"start": float(grid[0]), "end": float(grid[-1]), "step_months": 1},
        "excluded": dict(excluded),
        "published_cutoff": cutoff,
        "published_cutoff_year": parse_month(cutoff) if cutoff else None,
        "horizon": None,
        "per_category": {},
        "too_few": {},
        "curve": None,
        "staleness": None,
        "deployed_at": None,
    }
    latest = knowledge_horizon(answers)
    block["horizon"] = _estimate_json(latest) if latest is not None else None
    if gold is not None:
        block["cutoff"] = cutoff_block(answers, gold, float(grid[0]), horizon)
    overall = estimate_knowledge_date(answers, grid)
    if overall is None:
        return block
    block["per_category"][ALL] = _date_block(overall)
    block["curve"] = {"dates": _round(overall.grid, 4), "share": _round(overall.curve, 6)}
    for category, items in group_by_category(answers).items():
        facts = len({a.fact_id for a in items})
        if facts < MIN_FACTS:
            block["too_few"][category] = facts
            continue
        estimate = estimate_knowledge_date(items, grid)
        if estimate is not None:
            block["per_category"][category] = _date_block(estimate)
    at = overall.estimate.value
    assert at is not None
    curves: dict[str, Staleness] = {}
    for category, items in {ALL: list(answers), **group_by_category(answers)}.items():
        curve = staleness(items, at, horizon)
        if curve is not None:
            curves[category] = curve
    block["staleness"] = {
        "from": at,
        "from_label": month_label(at),
        "per_category": {c: _staleness_block(s) for c, s in curves.items()},
    }
    if deployed_at is not None:
        deployed = parse_month(deployed_at)
        if _month(deployed) < _month(at):  # deployed before the world its answers describe: it would read 0% stale
            block["deployed_at"] = {"date": deployed_at, "before_knowledge_date": month_label(at), "per_category": {}}
        else:
            block["deployed_at"] = {"date": deployed_at, "per_category": _forecast(curves, deployed)}
    return block


def _month(year: float) -> int:
    return math.floor(year * 12.0 + 1e-6)


def rows_knowledge_summary(
    rows: Iterable[ResponseRecord], snapshot: Snapshot, *, cutoff: str | None = None, deployed_at: str | None = None
) -> dict[str, Any]:
    """The ``knowledge_date`` block of one model's audit rows, judged against ``snapshot``'s validity periods."""
    answers, excluded = dated_answers(((r.fact_id, r.category, r.verdict, r.matched) for r in rows), snapshot.answers)
    return knowledge_summary(
        answers, excluded, snapshot.retrieved, cutoff=cutoff, deployed_at=deployed_at, gold=snapshot.answers
    )


def is_wide(estimate: Mapping[str, Any]) -> bool:
    """No interval, or one wider than :data:`WIDE_YEARS`."""
    low, high = estimate.get("ci_low"), estimate.get("ci_high")
    return low is None or high is None or high - low > WIDE_YEARS
