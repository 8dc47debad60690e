"""The card's comparison section: each paired comparison's differences B − A with their 95% intervals, drawn as
one plot readable at a glance (a forest plot: a row per metric, the interval as a bar around its point, the zero
line through them, a decided difference in colour), with the sentences under it.

Only shares go on the plot (their differences are points on one scale); a difference of a mean (CP) or a date
is listed under it. Inline SVG: the card stays one offline page.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

from chronoprobe.metrics.records import ALL
from chronoprobe.reports.card import method_names, metric_label
from chronoprobe.reports.compare import CompareRow, Comparison, counted
from chronoprobe.reports.plain_words import difference, difference_span, p_is

__all__ = ["axis_ticks", "comparison_section", "forest_plot"]

WIDTH, ROW, TOP = 760, 24, 26
MOST_LABEL, CHAR = 420, 6.6
"""The widest room for the labels left of the plot, and the width of a label's character, in the plot's px."""
MIN_SHARED = 10
"""Below this many shared units the note over the plot says they are few."""
MOST_ROWS = 14
"""Rows a plot shows (the headline metrics over every item first); the rest stay in the table files."""


def _points(row: CompareRow) -> tuple[float, float, float] | None:
    """(delta, low, high) in points, for a share with an interval."""
    if row.unit not in ("%", "rate") or row.delta is None or row.ci_low is None or row.ci_high is None:
        return None
    scale = 100.0 if row.unit == "rate" else 1.0
    return row.delta * scale, row.ci_low * scale, row.ci_high * scale


def _chosen(comparison: Comparison) -> list[CompareRow]:
    rows = [r for r in comparison.rows if r.paired is not None]
    over_all = [r for r in rows if r.group == ALL]
    return (over_all or rows)[:MOST_ROWS]


def axis_ticks(reach: float, most: int = 9) -> tuple[float, list[float]]:
    """The plot's half-width, rounded up to a whole step, and its ticks from −reach to +reach: the smallest step of
    1, 2 or 5 times a power of ten that gives at most ``most`` ticks."""
    step = 1.0
    while True:
        for factor in (1.0, 2.0, 5.0):
            size = step * factor
            half = math.ceil(reach / size - 1e-9)
            if 2 * half + 1 <= most:
                return half * size, [size * i for i in range(-half, half + 1)]
        step *= 10


def _label(row: CompareRow, methods: Mapping[str, str] | None = None) -> str:
    name = metric_label(row.metric, methods)
    return name if row.group == ALL else f"{name} · {row.group}"


def _label_width(labels: Sequence[str]) -> int:
    """Room for the longest label left of the plot (about 7 px a character at the label's 12 px), within bounds."""
    return max(160, min(MOST_LABEL, 16 + math.ceil(CHAR * max(len(label) for label in labels))))


def forest_plot(rows: Sequence[CompareRow], methods: Mapping[str, str] | None = None) -> str:
    """An inline SVG of the rows' differences in points, readable names on the left and a tick at every step of
    its axis; empty when none is a share with an interval."""
    drawn = [(row, found) for row in rows if (found := _points(row)) is not None]
    if not drawn:
        return ""
    reach, ticks = axis_ticks(max(5.0, *(max(abs(low), abs(high)) for _, (_, low, high) in drawn)))
    labels = [_label(row, methods) for row, _ in drawn]
    left = _label_width(labels)
    span = WIDTH - left - 30

    def x(points: float) -> float:
        return left + span * (points + reach) / (2 * reach)

    height = TOP + ROW * len(drawn) + 24
    parts = [
        f'<svg class="forest" role="img" viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'aria-label="paired differences B minus A in points, with 95% intervals">',
    ]
    for tick in ticks:
        zero = tick == 0
        parts += [
            f'<line x1="{x(tick):.1f}" y1="{TOP - 8}" x2="{x(tick):.1f}" y2="{height - 20}" '
            + ('stroke="#5d6678" stroke-dasharray="3 3"/>' if zero else 'stroke="#d9dde5"/>'),
            f'<text x="{x(tick):.1f}" y="{TOP - 12}" text-anchor="middle" class="axis tick">'
            f"{'0' if zero else f'{tick:+g}'.replace('-', '−')}</text>",
        ]
    parts.append(f'<text x="{WIDTH - 2}" y="{height - 4}" text-anchor="end" class="axis">B − A, points</text>')
    for index, ((row, (delta, low, high)), label) in enumerate(zip(drawn, labels, strict=True)):
        y = TOP + ROW * index + ROW / 2
        colour = "#2f5fd0" if row.decides else "#9aa3b5"
        made = f" {row.interval_method}" if row.interval_method else ""
        p = "" if row.p is None else f" {p_is(row.p)}"
        verdict = "decides" if row.decides else "undecided"
        title = f"{label}: {delta:+.1f} points, 95%{made} CI {low:+.1f} to {high:+.1f}; {row.test}{p}; {verdict}"
        parts += [
            f"<g><title>{escape(title)}</title>",
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" class="label">{escape(label)}</text>',
            f'<line x1="{x(low):.1f}" y1="{y:.1f}" x2="{x(high):.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="4" '
            'stroke-linecap="round"/>',
            f'<circle cx="{x(delta):.1f}" cy="{y:.1f}" r="5" fill="{colour}"/>',
            "</g>",
        ]
    parts.append("</svg>")
    return "".join(parts)


def _shared_note(comparison: Comparison) -> str:
    """What the plot rests on, said where the plot is: the shared units, and those only one side has, left out."""
    shared = max((row.units or 0 for row in comparison.rows), default=0)
    if not shared:
        return ""
    text = f"On the {counted(shared, comparison.unit)} both were asked"
    left = [
        f"{counted(len(units), comparison.unit)} only in {side}"
        for units, side in ((comparison.only_first, "A"), (comparison.only_second, "B"))
        if units
    ]
    if left:
        text += f"; {' and '.join(left)} left out"
    if shared < MIN_SHARED:
        text += ": too few to tell the two apart on anything but a large difference"
    return f'<p class="rests">{escape(text)}.</p>'


def _others(rows: Sequence[CompareRow], methods: Mapping[str, str] | None = None) -> str:
    listed = [r for r in rows if _points(r) is None and r.delta is not None and r.paired is not None]
    if not listed:
        return ""
    cells = []
    for row in listed:
        span = "" if row.ci_low is None or row.ci_high is None else difference_span(row.ci_low, row.ci_high, row.unit)
        span = f"no variation in n = {row.units or row.n}" if span and row.ci_low == row.ci_high else span
        label = _label(row, methods)
        cells.append(
            f"<tr><td>{escape(label)}</td><td class='num'>{escape(difference(row.delta or 0.0, row.unit))}</td>"
            f"<td class='num'>{escape(span)}</td><td>{escape(_test(row))}</td></tr>"
        )
    head = "<tr><th>metric</th><th>B − A</th><th>95% CI</th><th>test</th></tr>"
    return f'<table class="flat">{head}{"".join(cells)}</table>'


def _test(row: CompareRow) -> str:
    made = f" (interval: {row.interval_method})" if row.interval_method else ""
    return f"{row.test}{made}" + ("; undecided: the interval and the test disagree" if row.disagrees else "")


def comparison_section(comparisons: Sequence[Comparison]) -> str:
    """The section: per comparison its title, the plot, the other differences and its sentences."""
    blocks = []
    for comparison in comparisons:
        rows = _chosen(comparison)
        methods = method_names([comparison.first.run, comparison.second.run])
        a, b = comparison.names
        said = "".join(f"<li>{escape(line)}</li>" for line in comparison.lines())
        blocks.append(
            f"<h3>{escape(comparison.lens)}: B {escape(b)} − A {escape(a)}</h3>"
            f"{_shared_note(comparison)}{forest_plot(rows, methods)}{_others(rows, methods)}<ul>{said}</ul>"
        )
    return (
        '<section class="answer" id="compared"><h2>Compared, paired</h2>'
        "<p>B − A on the items both were asked, with its 95% interval: a bar in colour decides, its interval clear "
        "of the dashed zero line and its test at p < 0.05, the one rule of every verdict; a grey bar clear of the "
        "line is undecided, its test disagreeing (exact "
        "McNemar with Newcombe's paired interval for a share over facts, the exact sign-flip test with a bootstrap "
        "interval up to 12 units, a paired bootstrap otherwise; chronoprobe docs statistics).</p>"
        f"{''.join(blocks)}</section>"
    )
