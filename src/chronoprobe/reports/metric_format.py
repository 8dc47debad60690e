"""How a :class:`~chronoprobe.records.runlog.Metric` is shown, wherever it is printed: check.md, the card,
``chronoprobe results``'s terminal table, the lenses' console lines and the paragraph in plain words.

One formatter keyed on the number's unit, so the same record reads the same everywhere:

============  ======================  ==========================================================
unit          stored as               shown as
============  ======================  ==========================================================
``%``         0-100                   ``12.3%``
``rate``      0-1                     ``12.3%`` (a share of items, in percent)
``0-1``       0-1                     ``0.123``, the name marked ``(0–1)``: a rate its paper's
                                      table prints on 0-1 (see :data:`ON_ZERO_TO_ONE`)
``year``      decimal year (a date)   ``2021-07``
``years``     a duration in years     ``2.51 years``
``s``         seconds                 ``0.0798 s``
``count``     a whole number          ``12``
(empty)       a score (CP, entropy)   ``2.87`` (three significant digits; its interval's ends
                                      with as many decimals)
============  ======================  ==========================================================

A rate is shown in percent unless its paper's table prints it on 0-1; then it is shown on 0-1 and
its name carries :func:`unit_note` (``(0–1)``). What is stored (run.json, ``results --format csv``)
never changes: the display is decided here.
"""

from __future__ import annotations

import math

from chronoprobe.metrics.knowledge_date import month_label
from chronoprobe.records.runlog import Metric

__all__ = [
    "FLAT",
    "ON_ZERO_TO_ONE",
    "bounds",
    "brief",
    "cell",
    "display_unit",
    "figure",
    "interval",
    "no_variation",
    "quote",
    "span",
    "unit_note",
    "unit_scale",
    "value_text",
]

ON_ZERO_TO_ONE: dict[str, str] = {
    "accuracy_context": "DynamicQA's accuracy, Table 2 of the replication",
    "accuracy_no_context": "DynamicQA's accuracy, Table 2 of the replication",
    "accuracy_no_context_original": "DynamicQA's accuracy, Table 2 of the replication",
    "update_success": "MuLan's update success rate, Table 7 of the replication",
    "confidence": "MuLan's first-token confidence, Table 6 of the replication",
    "accuracy": "RecencyQA, Table 5",
    "tolerant_accuracy": "RecencyQA, Table 5",
    "macro_f1": "RecencyQA, Table 5",
    "tolerant_f1": "RecencyQA, Table 5",
    "f1": "RecencyQA's F1 per class (its Table 5 scale)",
    "rl1_accuracy": "RecencyQA, Table 7",
    "rl2_accuracy": "RecencyQA, Table 7",
    "transition_accuracy": "RecencyQA, Table 7",
}
"""The rates (unit ``rate``, by the last part of their name) shown on 0-1, as the paper's table prints
them, and that table. Every other rate is shown in percent (the lens's own additions, such as the
unparseable share and the gate's agreement, and every DyKnow share). MuLan's F1 is stored in percent
(unit ``%``), so the ``f1`` entry only reaches RecencyQA's per-class F1."""

UNBOUNDED = "unbounded"
"""The missing end of a one-sided interval (a half-life none of whose resamples saw a change)."""


def display_unit(metric: Metric) -> str:
    """The unit the record is shown in: its own, except a rate its paper prints on 0-1 (``0-1``), and the
    units of records written before 0.3, which said ``year`` of a duration and nothing of seconds or F1
    per relation."""
    unit, name = metric.unit, metric.name
    last = name.rsplit(".", 1)[-1]
    if unit == "rate" and last in ON_ZERO_TO_ONE:
        return "0-1"
    if unit == "year" and name.endswith("_years"):
        return "years"
    if not unit and last == "seconds_per_edit":
        return "s"
    if not unit and name.startswith("f1_per_relation."):  # MuLan's F1, in percent like its mean
        return "%"
    return unit


def unit_note(metric: Metric) -> str:
    """What a metric's name carries so its scale is not mistaken: `` (0–1)`` for a rate shown on 0-1, else
    nothing (a percentage, a date and a duration say their unit in the number itself)."""
    return " (0–1)" if display_unit(metric) == "0-1" else ""


def unit_scale(unit: str) -> float | None:
    """The top of a display unit's range (100 for percentages, 1 for rates), or None when unbounded."""
    return {"%": 100.0, "rate": 1.0, "0-1": 1.0}.get(unit)


def _decimals(value: float | None) -> int:
    """The decimals that give a score three significant digits (``2.87``, ``15.2``, ``0.0629``); two for 0."""
    if value is None or value == 0 or not math.isfinite(value):
        return 2
    return min(max(2 - math.floor(math.log10(abs(value))), 0), 6)


def _bare(value: float, unit: str, decimals: int | None = None) -> str:
    """A number in its unit without the unit's mark (the form an interval's ends take); a score and seconds
    with ``decimals`` (default: three significant digits of ``value``), so an interval's ends take its value's."""
    if unit == "%":
        return f"{value:.1f}"
    if unit == "rate":
        return f"{100.0 * value:.1f}"
    if unit == "0-1":
        return f"{value:.3f}"
    if unit == "year":
        return month_label(value)
    if unit == "years":
        return f"{value:.2f}"
    if unit == "count":
        return f"{value:,.0f}"
    return f"{value:,.{_decimals(value) if decimals is None else decimals}f}"


_MARK = {"%": "%", "rate": "%", "years": " years", "s": " s"}


def figure(value: float, unit: str) -> str:
    """One number in a display unit, with the unit's mark: ``12.3%``, ``2021-07``, ``2.51 years``."""
    return _bare(value, unit) + _MARK.get(unit, "")


def value_text(metric: Metric) -> str:
    """The record's value as every table shows it; ``–`` when it has none."""
    if metric.value is None:
        return "–"
    return figure(metric.value, display_unit(metric))


def bounds(metric: Metric) -> tuple[str, str] | None:
    """The interval's ends in the display unit without its mark (``4.6``, ``69.9``; ``2019-01``; ``1.44``,
    ``unbounded``); None when the record has no interval."""
    if metric.ci_low is None and metric.ci_high is None:
        return None
    unit, decimals = display_unit(metric), _decimals(metric.value)
    low = UNBOUNDED if metric.ci_low is None else _bare(metric.ci_low, unit, decimals)
    high = UNBOUNDED if metric.ci_high is None else _bare(metric.ci_high, unit, decimals)
    return low, high


def no_variation(metric: Metric) -> bool:
    """The record's interval has no width: every resample of its items gave the same value (a statistic over items
    all alike), which says "no variation", not that the value is known exactly."""
    return metric.value is not None and metric.ci_low is not None and metric.ci_low == metric.ci_high


FLAT = "no variation"


def span(metric: Metric) -> str:
    """The interval alone: ``8.1–17.9%``, ``2020-11 to 2022-03``, ``1.44 years to unbounded``; ``no variation``
    when it has no width; empty when there is none."""
    if no_variation(metric):
        return FLAT
    ends = bounds(metric)
    if ends is None:
        return ""
    unit = display_unit(metric)
    mark = _MARK.get(unit, "")
    low, high = ends
    if unit == "year" or UNBOUNDED in ends or low.startswith("-") or high.startswith("-"):
        return " to ".join(end if end == UNBOUNDED else end + mark for end in ends)
    return f"{low}–{high}{mark}"


def interval(metric: Metric) -> str:
    """``95% CI 8.1–17.9%, n=130`` (what is known of it); ``no variation in n = 40`` for an interval of no width."""
    if no_variation(metric):
        return f"{FLAT} in n = {metric.n}" if metric.n is not None else FLAT
    known = span(metric)
    parts = [f"95% CI {known}"] if known else []
    if metric.n is not None:
        parts.append(f"n={metric.n}")
    return ", ".join(parts)


def brief(metric: Metric) -> str:
    """``4.6% (2.1–9.7%)``: the value and its interval, for a number after the first of a sentence."""
    if metric.value is None:
        return "not measured"
    known = span(metric)
    return value_text(metric) + (f" ({known})" if known else "")


def quote(metric: Metric) -> str:
    """``12.3% (95% CI 8.1–17.9%, n=130)``; ``not measured`` for a record without a value."""
    if metric.value is None:
        return "not measured" + (f" (n={metric.n})" if metric.n is not None else "")
    known = interval(metric)
    return value_text(metric) + (f" ({known})" if known else "")


def cell(metric: Metric, *, with_n: bool = True) -> str:
    """``12.3% [8.1, 17.9] (n=130)``: a console line's number, its interval's ends as the card shows them
    (without the n when the line gives it once)."""
    n = f" (n={metric.n})" if with_n and metric.n is not None else ""
    if metric.value is None:
        return "–" + n
    if no_variation(metric):
        return value_text(metric) + (f" ({interval(metric)})" if with_n else f" ({FLAT})")
    ends = bounds(metric)
    return value_text(metric) + (f" [{ends[0]}, {ends[1]}]" if ends else "") + n
