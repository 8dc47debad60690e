"""The outdated audit's two figures: start years of known answers, verdicts per category.

Each figure is built by a function that returns it (so tests can read its axes)
and saved as PNG and SVG with a tight bounding box. Models are shown by their
short display name (``summary["name"]``, else derived from the spec), so a long
hub id cannot squeeze the plot.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chronoprobe.metrics.dyknow import VERDICTS
from chronoprobe.models.names import display_name, unique_names

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLOURS = {"up-to-date": "#2a9d8f", "outdated": "#e9c46a", "irrelevant": "#bbbbbb", "ambiguous": "#e76f51"}
WHISKER = 1.5
"""Whiskers reach the furthest answer within 1.5 IQR of the box (matplotlib's default)."""
MEAN_MARK: dict[str, Any] = {"marker": "^", "markerfacecolor": "#2a9d8f", "markeredgecolor": "#2a9d8f", "markersize": 7}
MEDIAN_COLOUR = "#e76f51"


def model_labels(per_model: Mapping[str, dict[str, Any]], width: int = 22) -> list[str]:
    """Short, distinct, wrapped labels for the models, in order."""
    names = unique_names(str(summary.get("name") or display_name(spec)) for spec, summary in per_model.items())
    return [textwrap.fill(name, width) if len(name) > width else name for name in names]


def whisker_range(years: Sequence[float]) -> tuple[float, float]:
    """(low, high) whisker ends of a box plot of ``years``."""
    values = np.asarray(years, dtype=float)
    q1, q3 = np.percentile(values, [25, 75])
    spread = WHISKER * (q3 - q1)
    inside = values[(values >= q1 - spread) & (values <= q3 + spread)]
    return float(inside.min()), float(inside.max())


def recency_figure(per_model: Mapping[str, dict[str, Any]]) -> Figure:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

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
        # answers far outside the whiskers would squash every box: clip them and say so
        for x, ys in filled:
            below = [y for y in ys if y < bottom]
            above = [y for y in ys if y > top]
            if below:
                ax.annotate(
                    f"{len(below)} below, earliest {int(min(below))}",
                    xy=(x, bottom),
                    xytext=(0, 3),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    color="#b03a2e",
                )
            if above:
                ax.annotate(
                    f"{len(above)} above, latest {int(max(above))}",
                    xy=(x, top),
                    xytext=(0, -3),
                    textcoords="offset points",
                    ha="center",
                    va="top",
                    fontsize=7,
                    color="#b03a2e",
                )
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
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], linestyle="none", label="mean", **MEAN_MARK),
        Line2D([], [], color=MEDIAN_COLOUR, label="median"),
        Line2D([], [], color="black", linewidth=0.8, label=f"box: middle half\nwhiskers: {WHISKER:g} IQR"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def verdicts_figure(per_model: Mapping[str, dict[str, Any]], per_row: int = 3) -> Figure:
    """One panel per model (titled with its short name), stacked soft-constraint verdicts per category."""
    from matplotlib.figure import Figure

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
        ax.set_xticks(range(len(categories)), categories, rotation=35, ha="right", fontsize=8)
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


def save_figure(fig: Figure, path: Path) -> list[Path]:
    """Save ``fig`` as ``path`` (PNG) and beside it as SVG, cropped to its content."""
    import matplotlib

    svg = path.with_suffix(".svg")
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "chronoprobe"}):
        fig.savefig(path, dpi=120, bbox_inches="tight")
        fig.savefig(svg, bbox_inches="tight", metadata={"Date": None})
    return [path, svg]


def plot_recency(per_model: Mapping[str, dict[str, Any]], path: Path) -> list[Path]:
    return save_figure(recency_figure(per_model), path)


def plot_verdicts(per_model: Mapping[str, dict[str, Any]], path: Path) -> list[Path]:
    return save_figure(verdicts_figure(per_model), path)
