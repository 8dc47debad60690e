"""Numbers in plain words: what each lens's sentences in ``chronoprobe check``'s paragraph are built from.

Every sentence quotes a :class:`~chronoprobe.records.runlog.Metric` record as it stands in the run folder,
with its 95% interval and n, in the one format of :mod:`chronoprobe.reports.metric_format` (``quote``,
``brief``, ``span``, ``value_text``), so the paragraph, check.md, the card and ``chronoprobe results`` never
disagree. Where a comparison rests on two intervals, it is made only when they do not overlap (a
conservative reading: overlapping intervals may still differ, but this run cannot say so).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from chronoprobe.metrics.records import ALL
from chronoprobe.records.runlog import Metric, Summary
from chronoprobe.reports.metric_format import brief, figure, interval, quote, span, value_text

__all__ = [
    "MIN_ITEMS",
    "brief",
    "change_quote",
    "compare",
    "find",
    "groups_of",
    "interval",
    "listing",
    "number",
    "quote",
    "side",
    "span",
    "too_few",
    "value_text",
]

Side = Literal["above", "below", "overlap", "unknown"]

MIN_ITEMS = 10
"""Fewer items than this behind a rate, and a sentence says they are too few to go on."""

number = figure
"""A bare number in a display unit (kept for callers of 0.2; a record reads best through :func:`value_text`)."""


def find(summary: Summary, model: str, name: str, group: str = ALL) -> Metric | None:
    """The record of ``name`` over ``group`` for ``model``, if the run measured it."""
    return next((m for m in summary.metrics if m.model == model and m.name == name and m.group == group), None)


def groups_of(summary: Summary, model: str, name: str) -> list[str]:
    """The groups (classes, categories) ``name`` was measured over for ``model``, in record order."""
    return list(dict.fromkeys(m.group for m in summary.metrics if m.model == model and m.name == name))


def side(metric: Metric, threshold: float) -> Side:
    """Where the whole interval lies against ``threshold``; ``overlap`` when it holds the threshold."""
    if metric.value is None:
        return "unknown"
    low = metric.ci_low if metric.ci_low is not None else metric.value
    high = metric.ci_high if metric.ci_high is not None else metric.value
    if low > threshold:
        return "above"
    if high < threshold:
        return "below"
    return "overlap"


def compare(first: Metric, second: Metric) -> Side:
    """``above`` when ``first``'s interval lies wholly above ``second``'s, ``below`` when wholly under."""
    if first.value is None or second.value is None:
        return "unknown"
    first_low = first.ci_low if first.ci_low is not None else first.value
    first_high = first.ci_high if first.ci_high is not None else first.value
    second_low = second.ci_low if second.ci_low is not None else second.value
    second_high = second.ci_high if second.ci_high is not None else second.value
    if first_low > second_high:
        return "above"
    if first_high < second_low:
        return "below"
    return "overlap"


def too_few(metrics: Iterable[Metric | None], minimum: int = MIN_ITEMS) -> bool:
    """True when a record is missing or rests on fewer than ``minimum`` items."""
    return any(m is None or m.value is None or (m.n is not None and m.n < minimum) for m in metrics)


def listing(parts: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def difference(value: float, unit: str) -> str:
    """A paired difference B − A as a reader takes it: ``+6.9 points`` for a share (a rate shown in percent),
    ``−0.3 years`` for a date, ``+0.123`` for an unbounded mean (CP, entropy)."""
    if unit in ("%", "rate"):
        return f"{signed(value * (100.0 if unit == 'rate' else 1.0))} points"
    if unit == "year":
        return f"{signed(value)} years"
    return f"{'+' if value > 0 else '−' if value < 0 else ''}{abs(value):.3g}"


def difference_span(low: float, high: float, unit: str) -> str:
    """A paired difference's interval, ``+2.3 to +11.5`` (in points for a share)."""
    scale = 100.0 if unit == "rate" else 1.0
    if unit in ("%", "rate", "year"):
        return f"{signed(low * scale)} to {signed(high * scale)}"
    return f"{low:+.3g} to {high:+.3g}".replace("-", "−")


_CHANGE_MARK = {"%": " points", "rate": " points", "year": " years"}


def change_quote(metric: Metric) -> str:
    """A recorded change B − A as a reader takes it, in points for a share and years for a date:
    ``+20.8 points (95% CI +13.1 to +28.9 points, n=130)``, ``−1.2 years (95% CI −2.0 to −0.4 years, n=62)``."""
    if metric.value is None:
        return "not measured"
    parts = []
    if metric.ci_low is not None and metric.ci_high is not None:
        ends = difference_span(metric.ci_low, metric.ci_high, metric.unit)
        parts.append(f"95% CI {ends}{_CHANGE_MARK.get(metric.unit, '')}")
    if metric.n is not None:
        parts.append(f"n={metric.n}")
    known = f" ({', '.join(parts)})" if parts else ""
    return difference(metric.value, metric.unit) + known


def signed(points: float) -> str:
    """A difference in points with its sign: ``+6.9``, ``−2.3``, ``0.0``."""
    shown = f"{abs(points):.1f}"
    if shown == "0.0":
        return shown
    return ("+" if points > 0 else "\u2212") + shown


def p_is(p: float) -> str:
    """``p = 0.004``, ``p < 0.001``: a p-value in a sentence."""
    shown = p_value(p)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"


def p_value(p: float) -> str:
    """A p-value as a reader takes it: ``0.004``, ``0.047``, ``0.31``, ``< 0.001``, ``1`` (three decimals below 0.1,
    so that one just under 0.05 never reads as 0.05)."""
    if p < 0.001:
        return "< 0.001"
    if p >= 0.995:
        return "1"
    return f"{p:.3f}" if p < 0.1 else f"{p:.2f}"
