"""The card's comparison section: each paired comparison's differences B − A with their 95% intervals, drawn as
one plot readable at a glance (a forest plot: a row per metric, the interval as a bar around its point, the zero
line through them, a decided difference in colour), with the sentences under it.

Only shares go on the plot (their differences are points on one scale); a difference of a mean (CP) or a date
is listed under it. Inline SVG: the card stays one offline page.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from chronoprobe.metrics.records import ALL
from chronoprobe.reports.compare import CompareRow, Comparison
from chronoprobe.reports.plain_words import difference, difference_span, p_is

__all__ = ["comparison_section", "forest_plot"]

WIDTH, LABEL, ROW, TOP = 760, 300, 24, 26
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


def forest_plot(rows: Sequence[CompareRow]) -> str:
    """An inline SVG of the rows' differences in points; empty when none is a share with an interval."""
    drawn = [(row, found) for row in rows if (found := _points(row)) is not None]
    if not drawn:
        return ""
    reach = max(5.0, *(max(abs(low), abs(high)) for _, (_, low, high) in drawn))
    span = WIDTH - LABEL - 30

    def x(points: float) -> float:
        return LABEL + span * (points + reach) / (2 * reach)

    height = TOP + ROW * len(drawn) + 24
    parts = [
        f'<svg class="forest" role="img" viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'aria-label="paired differences B minus A in points, with 95% intervals">',
        f'<line x1="{x(0):.1f}" y1="{TOP - 8}" x2="{x(0):.1f}" y2="{height - 20}" stroke="#5d6678" stroke-dasharray="3 3"/>',
        f'<text x="{x(0):.1f}" y="{TOP - 12}" text-anchor="middle" class="axis">0</text>',
        f'<text x="{x(-reach) + 2:.1f}" y="{TOP - 12}" class="axis">−{reach:.0f}</text>',
        f'<text x="{x(reach) - 2:.1f}" y="{TOP - 12}" text-anchor="end" class="axis">+{reach:.0f} points</text>',
    ]
    for index, (row, (delta, low, high)) in enumerate(drawn):
        y = TOP + ROW * index + ROW / 2
        colour = "#2f5fd0" if row.decides else "#9aa3b5"
        label = row.metric if row.group == ALL else f"{row.metric} · {row.group}"
        made = f" {row.interval_method}" if row.interval_method else ""
        p = "" if row.p is None else f" {p_is(row.p)}"
        verdict = "decides" if row.decides else "undecided"
        title = f"{label}: {delta:+.1f} points, 95%{made} CI {low:+.1f} to {high:+.1f}; {row.test}{p}; {verdict}"
        parts += [
            f"<g><title>{escape(title)}</title>",
            f'<text x="{LABEL - 8}" y="{y + 4:.1f}" text-anchor="end" class="label">{escape(label)}</text>',
            f'<line x1="{x(low):.1f}" y1="{y:.1f}" x2="{x(high):.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="4" '
            'stroke-linecap="round"/>',
            f'<circle cx="{x(delta):.1f}" cy="{y:.1f}" r="5" fill="{colour}"/>',
            "</g>",
        ]
    parts.append("</svg>")
    return "".join(parts)


def _others(rows: Sequence[CompareRow]) -> str:
    listed = [r for r in rows if _points(r) is None and r.delta is not None and r.paired is not None]
    if not listed:
        return ""
    cells = []
    for row in listed:
        span = "" if row.ci_low is None or row.ci_high is None else difference_span(row.ci_low, row.ci_high, row.unit)
        span = f"no variation in n = {row.units or row.n}" if span and row.ci_low == row.ci_high else span
        label = row.metric if row.group == ALL else f"{row.metric} · {row.group}"
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
        a, b = comparison.names
        said = "".join(f"<li>{escape(line)}</li>" for line in comparison.lines())
        blocks.append(
            f"<h3>{escape(comparison.lens)}: B {escape(b)} − A {escape(a)}</h3>"
            f"{forest_plot(rows)}{_others(rows)}<ul>{said}</ul>"
        )
    return (
        '<section class="answer" id="compared"><h2>Compared, paired</h2>'
        "<p>B − A on the items both were asked, with its 95% interval: a bar in colour decides, its interval clear "
        "of the dashed zero line and its test at p < 0.05, the one rule of every verdict; a grey bar clear of the "
        "line is undecided, its test disagreeing (exact "
        "McNemar with Newcombe's paired interval for a share over facts, the exact sign-flip test with a bootstrap "
        "interval up to 12 units, a paired bootstrap otherwise; docs/statistics.md).</p>"
        f"{''.join(blocks)}</section>"
    )
