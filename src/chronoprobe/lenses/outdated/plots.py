"""The outdated audit's two figures: start years of known answers, verdicts per category.

Each figure is built by a function that returns it (so tests can read its axes)
and saved as PNG and SVG with a tight bounding box. Models are shown by their
short display name (``summary["name"]``, else derived from the spec), so a long
hub id cannot squeeze the plot.
"""

from __future__ import annotations

import math
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chronoprobe.lenses.outdated import knowledge_date
from chronoprobe.lenses.outdated.knowledge_date import is_wide
from chronoprobe.metrics.dyknow import VERDICTS
from chronoprobe.models import names
from chronoprobe.models.names import recorded_short_name, unique_names
from chronoprobe.reports.figures import saved_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLOURS = {"up-to-date": "#2a9d8f", "outdated": "#e9c46a", "irrelevant": "#bbbbbb", "ambiguous": "#e76f51"}
WHISKER = 1.5
"""Whiskers reach the furthest answer within 1.5 IQR of the box (matplotlib's default)."""
MEAN_MARK: dict[str, Any] = {"marker": "^", "markerfacecolor": "#2a9d8f", "markeredgecolor": "#2a9d8f", "markersize": 7}
MEDIAN_COLOUR = "#e76f51"


def model_labels(per_model: Mapping[str, Mapping[str, Any]], width: int = 22) -> list[str]:
    """Short, distinct, wrapped labels for the models, in order."""
    names = unique_names(str(summary.get("name") or recorded_short_name(spec)) for spec, summary in per_model.items())
    return [tick_label(name, width, lines=3) for name in names]


def whisker_range(years: Sequence[float]) -> tuple[float, float]:
    """(low, high) whisker ends of a box plot of ``years``."""
    values = np.asarray(years, dtype=float)
    q1, q3 = np.percentile(values, [25, 75])
    spread = WHISKER * (q3 - q1)
    inside = values[(values >= q1 - spread) & (values <= q3 + spread)]
    return float(inside.min()), float(inside.max())


def off_scale(years: Sequence[float], bottom: int, top: int) -> str:
    """The lines under a box's name that count its start years outside the axis (``bottom`` to ``top``), with the
    farthest one; empty when none is."""
    below = [y for y in years if y < bottom]
    above = [y for y in years if y > top]
    said = ""
    if below:
        said += f"\n{len(below)} before {bottom}\nnot drawn\n(earliest {int(min(below))})"
    if above:
        said += f"\n{len(above)} after {top}\nnot drawn\n(latest {int(max(above))})"
    return said


YEAR_STEPS = (1, 2, 5, 10, 20, 50, 100)
MONTH_STEPS = (1, 2, 3, 6)


def year_ticks(low: float, high: float, most: int = 6) -> tuple[list[float], list[str]]:
    """Ticks for a decimal-year axis from ``low`` to ``high``, at most ``most``: whole years at the smallest step of
    :data:`YEAR_STEPS` that gives two or more, else months (``2022-03``) for a span too short to hold two years."""
    for step in YEAR_STEPS:
        years = list(range(math.ceil(low / step) * step, math.floor(high) + 1, step))
        if len(years) < 2:
            break
        if len(years) <= most:
            return [float(y) for y in years], [str(y) for y in years]
    first, last = math.ceil(low * 12 - 1e-9), math.floor(high * 12 + 1e-9)
    for months in MONTH_STEPS:
        marks = [m for m in range(first, last + 1) if m % months == 0]
        if len(marks) <= most:
            return [m / 12 for m in marks], [f"{m // 12}-{m % 12 + 1:02d}" for m in marks]
    return [low, high], [f"{low:.2f}", f"{high:.2f}"]


def year_axis(ax: Any, most: int = 6) -> None:
    """``ax``'s x axis (decimal years) ticked by :func:`year_ticks` over its limits: matplotlib's own ticks on a
    panel a few years wide fall every half or quarter year ("2021.0", "2021.5", "2022.0"), and run together."""
    low, high = ax.get_xlim()
    ticks, labels = year_ticks(low, high, most=most)
    ax.set_xticks(ticks, labels)


def recency_figure(per_model: Mapping[str, Mapping[str, Any]]) -> Figure:
    from matplotlib.figure import Figure  # deferred: matplotlib
    from matplotlib.ticker import MaxNLocator, ScalarFormatter  # deferred: matplotlib

    labels = model_labels(per_model)
    years = [[float(y) for y in summary.get("start_years") or []] for summary in per_model.values()]
    fig = Figure(figsize=(max(4.5, 1.4 * len(labels) + 2.5), 4.2))
    ax = fig.subplots()
    ax.set_title("How recent are the facts the model knows?\n(start year of each matched answer)", fontsize=10)
    ax.set_ylabel("start year")
    ax.grid(axis="y", alpha=0.3)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    formatter = ax.yaxis.get_major_formatter()
    if isinstance(formatter, ScalarFormatter):  # the default; years must not print as an offset
        formatter.set_useOffset(False)
    positions = list(range(1, len(labels) + 1))
    filled = [(x, ys) for x, ys in zip(positions, years, strict=True) if ys]
    if filled:
        ax.boxplot(
            [ys for _, ys in filled],
            positions=[x for x, _ in filled],
            showmeans=True,
            meanprops=MEAN_MARK,
            medianprops={"color": MEDIAN_COLOUR},
            widths=0.5,
        )
        _box_legend(ax)
        ranges = [whisker_range(ys) for _, ys in filled]
        low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
        pad = max(1.0, 0.08 * (high - low))
        bottom, top = math.floor(low - pad), math.ceil(high + pad)
        ax.set_ylim(bottom, top)
        # answers far outside the whiskers would squash every box: clip them and say so, under the box's name
        labels = [label + off_scale(ys, bottom, top) if ys else label for label, ys in zip(labels, years, strict=True)]
    for x, ys in zip(positions, years, strict=True):
        if not ys:
            ax.text(
                x,
                0.5,
                "no matched\nanswers",
                transform=ax.get_xaxis_transform(),
                ha="center",
                va="center",
                fontsize=8,
                color="#777777",
            )
    ax.set_xlim(0.4, len(labels) + 0.6)
    ax.set_xticks(
        positions,
        labels,
        rotation=0 if len(labels) <= 3 else 20,
        ha="center" if len(labels) <= 3 else "right",
        fontsize=8,
    )
    return fig


def _box_legend(ax: Any) -> None:
    """Name the box plot's marks, right of the axes."""
    from matplotlib.lines import Line2D  # deferred: matplotlib

    handles = [
        Line2D([], [], linestyle="none", label="mean", **MEAN_MARK),
        Line2D([], [], color=MEDIAN_COLOUR, label="median"),
        Line2D([], [], color="black", linewidth=0.8, label=f"box: middle half\nwhiskers: {WHISKER:g} IQR"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def verdicts_figure(per_model: Mapping[str, Mapping[str, Any]], per_row: int = 3) -> Figure:
    """One panel per model (titled with its short name), stacked soft-constraint verdicts per category."""
    from matplotlib.figure import Figure  # deferred: matplotlib

    names = model_labels(per_model, width=28)
    summaries = list(per_model.values())
    most = max((len(s["per_category"]) for s in summaries), default=1)
    cols = min(per_row, max(1, len(summaries)))
    rows = math.ceil(len(summaries) / cols) if summaries else 1
    fig = Figure(figsize=(cols * max(2.8, 0.55 * most + 1.2) + 1.6, rows * 4.6))
    axes = fig.subplots(rows, cols, sharey=True, squeeze=False).ravel()
    for ax, name, summary in zip(axes, names, summaries, strict=False):
        categories = list(summary["per_category"])
        bottom = [0.0] * len(categories)
        for v in VERDICTS:
            heights = [summary["per_category"][c]["soft_constraint_pct"][v] for c in categories]
            ax.bar(range(len(categories)), heights, bottom=bottom, label=v, color=COLOURS[v])
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        ax.set_xticks(range(len(categories)), [tick_label(c) for c in categories], rotation=35, ha="right", fontsize=8)
        ax.set_ylim(0, 100)
        if len(summaries) > 1:
            ax.set_title(name, fontsize=9)
    for ax in axes[len(summaries) :]:
        ax.set_visible(False)
    for ax in axes[::cols]:
        ax.set_ylabel("% of facts (soft constraint)")
    fig.suptitle(
        "Verdicts per category" + ("" if len(summaries) > 1 else f": {names[0]}" if names else ""), fontsize=10
    )
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 0.9), frameon=False)
    fig.tight_layout()
    return fig


def _wrap(text: str, width: int = 30) -> str:
    return textwrap.fill(text, width) if len(text) > width else text


def tick_label(text: str, width: int = 24, lines: int = 2) -> str:
    """A name short enough for a tick or a panel title: wrapped, at most ``lines`` lines, the rest cut with an
    ellipsis. (A catalogue's category or a model spec can be any length; a long one would not fit the figure.)"""
    if len(text) <= width:
        return text
    wrapped = textwrap.wrap(text, width, break_long_words=True) or [text]
    if len(wrapped) > lines:
        wrapped = [*wrapped[: lines - 1], wrapped[lines - 1][: width - 1] + "…"]
    return "\n".join(wrapped)


def knowledge_date_figure(per_model: Mapping[str, Mapping[str, Any]], per_row: int = 3) -> Figure:
    """One panel per model: the as-of curve, the knowledge date with its 95% band, and the
    published cutoff (dashed) when one was given."""
    from matplotlib.figure import Figure  # deferred: matplotlib

    names = unique_names(per_model)
    blocks = list(per_model.values())
    cols = min(per_row, max(1, len(blocks)))
    rows = math.ceil(len(blocks) / cols)
    fig = Figure(figsize=(cols * 4.2 + 0.6, rows * 3.4))
    axes = fig.subplots(rows, cols, sharey=True, squeeze=False).ravel()
    for ax, name, block in zip(axes, names, blocks, strict=False):
        curve = block["curve"]
        ax.plot(curve["dates"], [100 * s for s in curve["share"]], color="#264653", lw=1.4, label="as-of curve")
        estimate = block["per_category"]["all"]["estimate"]
        if estimate["ci_low"] is not None and estimate["ci_high"] is not None:
            ax.axvspan(estimate["ci_low"], estimate["ci_high"], color="#2a9d8f", alpha=0.2, label="95% interval")
        ax.axvline(estimate["value"], color="#2a9d8f", lw=2, label=f"knowledge date {estimate['label']}")
        if block.get("published_cutoff_year") is not None:
            ax.axvline(
                block["published_cutoff_year"],
                color="#e76f51",
                lw=1.5,
                ls="--",
                label=f"published cutoff {block['published_cutoff']}",
            )
        wide = ", wide interval: few dated facts" if is_wide(estimate) else ""
        ax.set_title(f"{_wrap(name)}\n(n={estimate['n']} facts{wide})", fontsize=9)
        ax.set_xlabel("date (year)")
        year_axis(ax)
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    for ax in axes[len(blocks) :]:
        ax.set_visible(False)
    for ax in axes[::cols]:
        ax.set_ylabel("% of dated answers valid then")
    fig.suptitle("When does the model's knowledge stop?", fontsize=10)
    fig.tight_layout()
    return fig


def values_title(names: Sequence[str], counts: Sequence[int | None]) -> str:
    """A staleness panel's count: ``n = 67, 51 values`` (the legend's order) where every model has a curve in the
    panel, else each model named, ``values: 5 for third, none for half``; never a bare dash."""
    if all(count is not None for count in counts):
        return f"n = {', '.join(f'{count:,}' for count in counts)} values"
    shown = [
        f"{'none' if count is None else f'{count:,}'} for {name}" for name, count in zip(names, counts, strict=True)
    ]
    return _wrap("values: " + ", ".join(shown), 40)


def staleness_figure(per_model: Mapping[str, Mapping[str, Any]], per_row: int = 3) -> Figure:
    """Small multiples, one panel per category (``all`` first): the share of what each model knew
    at its knowledge date that still holds later, with its 95% band; one line per model, one
    legend for the figure (long names wrap there), each panel's n in its title."""
    from matplotlib.figure import Figure  # deferred: matplotlib
    from matplotlib.lines import Line2D  # deferred: matplotlib

    names = unique_names(per_model)
    curves_of = [(block.get("staleness") or {}).get("per_category") or {} for block in per_model.values()]
    categories = sorted({c for curves in curves_of for c in curves}, key=lambda c: (c != "all", c))
    cols = min(per_row, max(1, len(categories)))
    rows = max(1, math.ceil(len(categories) / cols))
    fig = Figure(figsize=(cols * 3.8 + 0.6, rows * 3.2 + 0.5 + 0.3 * len(names)))
    axes = fig.subplots(rows, cols, sharey=True, squeeze=False).ravel()
    palette = ["#264653", "#e76f51", "#2a9d8f", "#8e44ad", "#e9c46a", "#1f77b4"]
    for ax, category in zip(axes, categories, strict=False):
        counts = []
        for index, curves in enumerate(curves_of):
            curve = curves.get(category)
            counts.append(None if curve is None else int(curve["n"]))
            if curve is None:
                continue
            colour = palette[index % len(palette)]
            dates = curve["dates"]
            ax.plot(dates, [100 * s for s in curve["share"]], color=colour, lw=1.5)
            if None not in curve["low"] and None not in curve["high"]:
                ax.fill_between(
                    dates, [100 * v for v in curve["low"]], [100 * v for v in curve["high"]], color=colour, alpha=0.15
                )
        ax.axhline(50, color="#999999", lw=0.8, ls=":")
        ax.set_title(f"{_wrap(category, 34)}\n{values_title(names, counts)}", fontsize=9)
        ax.set_ylim(0, 102)
        ax.grid(alpha=0.3)
        ax.set_xlabel("date (year)")
        year_axis(ax)
    for ax in axes[len(categories) :]:
        ax.set_visible(False)
    for ax in axes[::cols]:
        ax.set_ylabel("% still current")
    handles = [Line2D([], [], color=palette[i % len(palette)], lw=2) for i in range(len(names))]
    fig.legend(handles, [_wrap(n, 60) for n in names], fontsize=8, loc="lower center", ncol=1, frameon=False)
    fig.suptitle("How fast does what the model knew at its knowledge date go stale?", fontsize=10)
    fig.tight_layout(rect=(0, 0.02 + 0.035 * len(names), 1, 1))
    return fig


def saved(path: Path, name: str, data: Any, draw: Callable[[Path], list[Path]]) -> list[Path]:
    """``draw(path)``, or the files it drew for the same ``data`` before (:mod:`chronoprobe.reports.figures`)."""

    return saved_figure(path, name, data, draw, code=(sys.modules[__name__], knowledge_date, names))


def save_figure(fig: Figure, path: Path) -> list[Path]:
    """Save ``fig`` as ``path`` (PNG) and beside it as SVG, cropped to its content."""
    import matplotlib  # deferred: matplotlib

    svg = path.with_suffix(".svg")
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "chronoprobe"}):
        fig.savefig(path, dpi=120, bbox_inches="tight")
        fig.savefig(svg, bbox_inches="tight", metadata={"Date": None})
    return [path, svg]


def plot_recency(per_model: Mapping[str, Mapping[str, Any]], path: Path) -> list[Path]:
    return save_figure(recency_figure(per_model), path)


def plot_verdicts(per_model: Mapping[str, Mapping[str, Any]], path: Path) -> list[Path]:
    return save_figure(verdicts_figure(per_model), path)
