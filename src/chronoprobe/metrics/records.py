"""Building lens-neutral :class:`~chronoprobe.records.runlog.Metric` records from a lens's numbers.

A lens turns its own summary layout into ``Metric`` records in ``summarise`` (with these helpers);
the run log (``run.json``) stores them inside the ``Summary``, and ``chronoprobe results``, the
card and ``chronoprobe.load`` read only these records, never a lens's layout.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from chronoprobe.metrics.uncertainty import Estimate
from chronoprobe.records.runlog import Metric, Summary

__all__ = ["ALL", "Metric", "Summary", "from_estimate", "group_metrics", "number", "unit_for"]

ALL = "all"
"""The group of a number over every item."""


_RATE_WORDS = {"accuracy", "agreement", "f1", "rate", "confidence"}
_DATES = {
    "knowledge_cutoff",
    "knowledge_date",
    "knowledge_date_naive",
    "knowledge_horizon",
    "claimed_cutoff",
    "published_cutoff",
}


def unit_for(name: str) -> str:
    """The unit the naming convention gives a metric: ``..._pct`` is a percentage, ``accuracy``,
    ``f1``, ``..._rate`` and ``confidence`` rates (0-1), the knowledge date and its kin dates (``year``,
    a decimal year), ``..._years`` a duration in years and ``seconds_...`` seconds."""
    if any(part.endswith("_pct") for part in name.split(".")):
        return "%"
    last = name.rsplit(".", 1)[-1]
    if set(last.split("_")) & _RATE_WORDS or last in ("update_success", "all_contexts_right"):
        return "rate"
    if name in _DATES:
        return "year"
    if last.endswith("_years"):
        return "years"
    if last.startswith("seconds_"):
        return "s"
    return ""


def number(value: Any) -> float | None:
    """A finite float, or None for anything else (a bool, a string, NaN)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    result = float(value)
    return result if math.isfinite(result) else None


def from_estimate(
    model: str,
    group: str,
    name: str,
    estimate: Mapping[str, Any] | Estimate,
    *,
    scale: float = 1.0,
    unit: str | None = None,
    headline: bool = False,
) -> Metric:
    """A record from an estimate (or its JSON form), its value and interval multiplied by ``scale``."""
    data = estimate.to_json() if isinstance(estimate, Estimate) else estimate

    def scaled(key: str) -> float | None:
        found = number(data.get(key))
        return None if found is None else found * scale

    n = data.get("n")
    return Metric(
        model=model,
        group=str(group),
        name=name,
        value=scaled("value"),
        n=int(n) if isinstance(n, int) and not isinstance(n, bool) else None,
        ci_low=scaled("ci_low"),
        ci_high=scaled("ci_high"),
        unit=unit_for(name) if unit is None else unit,
        headline=headline,
    )


def group_metrics(model: str, group: str, numbers: Mapping[str, Any], prefix: str = "") -> list[Metric]:
    """Records for one group of numbers that carries an ``estimates`` block (nested one level for
    per-verdict blocks); a group written before estimates existed gives its bare floats."""
    estimates = numbers.get("estimates")
    found: list[Metric] = []
    if isinstance(estimates, dict):
        for key, estimate in estimates.items():
            if not isinstance(estimate, dict):
                continue
            if "value" in estimate:
                found.append(from_estimate(model, group, prefix + key, estimate))
            else:  # {verdict: estimate}
                for sub, inner in estimate.items():
                    if isinstance(inner, dict):
                        found.append(from_estimate(model, group, f"{prefix}{key}.{sub}", inner))
        return found
    for key, value in numbers.items():
        if isinstance(value, float):
            name = prefix + key
            found.append(Metric(model=model, group=str(group), name=name, value=number(value), unit=unit_for(name)))
    return found
