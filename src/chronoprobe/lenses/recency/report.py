"""Markdown report and confusion-matrix plots for a recency evaluation."""

from __future__ import annotations

import io
import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chronoprobe.io import write_bytes_atomic
from chronoprobe.metrics.uncertainty import as_estimate, cell
from chronoprobe.provenance import Provenance
from chronoprobe.reports.markdown import fmt, provenance_section, table

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1f}%"


def _delta(entry: dict[str, Any], key: str) -> str:
    """Δ% with its interval and n of questions where the summary has them (older summaries: the bare Δ%)."""
    estimate = as_estimate((entry.get("estimates") or {}).get(key))
    if estimate is None or estimate.value is None:
        return _pct(entry[key])
    interval = estimate.interval(1) if estimate.has_interval else "[–]"
    return f"{_pct(entry[key])} {interval} (n={estimate.n})"


def _v(entry: dict[str, Any], key: str, digits: int = 3) -> Any:
    """``value [lo, hi]`` where the summary has an estimate for ``key``; the bare value otherwise (older summaries)."""
    estimate = (entry.get("estimates") or {}).get(key)
    return entry[key] if estimate is None else cell(estimate, digits)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60] or "model"


CONFUSION_FONT_PT = 9.0
"""The smallest text in a confusion matrix: 12 px where the report card shows the figure at its drawn size."""
CONFUSION_DPI = 160
"""More pixels than the card shows (it shows a PNG at its recorded resolution), so the figure stays sharp on a
high-density screen."""


def confusion_figure(matrix: list[list[int]], labels: list[str], title: str) -> Figure:
    """Rows = gold, columns = predicted (+ unparseable), sized to be read where the report card shows it."""
    from matplotlib.figure import Figure  # deferred: matplotlib

    data = np.asarray(matrix)
    columns = [*labels, "unparseable"]
    fig = Figure(figsize=(5.4, 4.5), layout="constrained")
    ax = fig.subplots()
    ax.imshow(data, cmap="Blues", aspect="auto")
    ax.set_xticks(range(len(columns)), columns, rotation=55, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(labels)), labels)
    ax.tick_params(labelsize=CONFUSION_FONT_PT, length=2, pad=2)
    if len(columns) > len(labels):  # unparseable answers are not a class: set them apart
        ax.axvline(len(labels) - 0.5, color="#555555", linewidth=1)
    ax.set_xlabel("predicted", fontsize=10)
    ax.set_ylabel("gold", fontsize=10)
    ax.set_title(textwrap.fill(title, 60), fontsize=10)
    peak = data.max() if data.size else 0
    for (row, col), value in np.ndenumerate(data):
        if value:
            colour = "white" if value > peak / 2 else "black"
            ax.text(col, row, str(value), ha="center", va="center", fontsize=CONFUSION_FONT_PT, color=colour)
    return fig


def confusion_png(path: Path, matrix: list[list[int]], labels: list[str], title: str) -> None:
    """:func:`confusion_figure` as a PNG, written atomically."""
    buffer = io.BytesIO()
    confusion_figure(matrix, labels, title).savefig(buffer, format="png", dpi=CONFUSION_DPI)
    write_bytes_atomic(path, buffer.getvalue())


def _per_class_f1(summary: dict[str, Any]) -> list[str]:
    """One row per run: each class's F1, with its 95% interval and n where the summary has them."""
    labels = summary["labels"]
    rows = []
    for run in summary["runs"]:
        estimates = run.get("per_class_f1_estimates")
        if estimates is None:  # a summary written before per-class intervals
            cells = [run["per_class_f1"].get(label) for label in labels]
        else:
            cells = [_f1_cell(estimates.get(label)) for label in labels]
        rows.append([run["model"], run["strategy"], run["context_mode"], *cells])
    return [
        "Each cell: F1 [95% interval] (n): the Wilson interval of p = TP / (TP + FP + FN) mapped through "
        "F1 = 2p / (1 + p); n counts the answers whose gold or predicted class it is (chronoprobe docs recency).",
        "",
        table(["model", "strategy", "context", *labels], rows, digits=2),
    ]


def _f1_cell(estimate: dict[str, Any] | None) -> str | None:
    """``0.50 [0.21, 0.79] (n=6)``; None (an empty cell) for a class the run never saw."""
    return None if estimate is None else f"{cell(estimate, 2)} (n={estimate['n']})"


def render(summary: dict[str, Any], plots: dict[str, str]) -> str:
    lines = ["# Recency evaluation (RecencyQA)", ""]
    lines += [
        "Gold labels: majority label without context, the context's label with context. "
        "Tolerant = within ±1 class on the ordered scale; tolerant F1 = macro F1 after replacing every "
        "near miss by the gold class. Unparseable answers count as wrong (chronoprobe docs recency).",
        "",
        "Rates read `value [low, high]`: the 95% interval over the run's n items, Wilson for accuracies and "
        "rates, a seeded bootstrap over items for F1 (chronoprobe docs recency, Intervals).",
        "",
        "## Classification",
        "",
    ]
    lines += _classification(summary)
    lines += ["", "## Context effect by stationarity (Table 6 style)", ""]
    lines += _context_effect(summary)
    lines += ["", "## Recency transition on non-stationary questions (Table 7 style)", ""]
    lines += _transition(summary)
    lines += ["", "## Per-class F1", ""]
    lines += _per_class_f1(summary)
    lines += ["", "## How answers were parsed", ""]
    lines += _parsing(summary)
    if plots:
        lines += ["", "## Confusion matrices", ""]
        for title, name in plots.items():
            lines += [f"**{title}**", "", f"![{title}]({name})", ""]
    lines += ["", provenance_section(Provenance.model_validate(summary["provenance"]))]
    return "\n".join(lines)


def _classification(summary: dict[str, Any]) -> list[str]:
    """One row per run: accuracy, tolerant accuracy, macro and tolerant F1, unparseable and truncated answers."""
    rows = []
    for run in summary["runs"]:
        rows.append(
            [
                run["model"],
                run["strategy"],
                run["context_mode"],
                run["n"],
                _v(run, "accuracy"),
                _v(run, "tolerant_accuracy"),
                _v(run, "macro_f1"),
                _v(run, "tolerant_f1"),
                run["unparseable"],
                _v(run, "unparseable_rate"),
                run["truncated"],
            ]
        )
    return [
        table(
            [
                "model",
                "strategy",
                "context",
                "n",
                "accuracy",
                "tolerant acc.",
                "macro F1",
                "tolerant F1",
                "unparseable",
                "unparseable rate",
                "hit max tokens",
            ],
            rows,
            digits=3,
        )
    ]


def _context_effect(summary: dict[str, Any]) -> list[str]:
    """Table 6: accuracy and F1 with and without context, per stationarity class, and the change."""
    t6 = []
    for e in summary["table6"]:
        t6.append(
            [
                e["model"],
                e["strategy"],
                e["stationarity"],
                f"{e['n_with']}/{e['n_without']}",
                _v(e, "accuracy_with"),
                _v(e, "accuracy_without"),
                _delta(e, "accuracy_delta_pct"),
                _v(e, "f1_with"),
                _v(e, "f1_without"),
                _delta(e, "f1_delta_pct"),
            ]
        )
    lines = [
        table(
            [
                "model",
                "strategy",
                "questions",
                "n w/ C / w/o C",
                "acc. w/ C",
                "acc. w/o C",
                "Δ%",
                "F1 w/ C",
                "F1 w/o C",
                "Δ%",
            ],
            t6,
            digits=3,
        )
    ]
    if not any(e["n_with"] and e["n_without"] for e in summary["table6"]):
        lines += ["", "_Δ% needs both context modes (`--context-mode both`)._"]
    else:
        lines += [
            "",
            "Δ% = (with − without) / without × 100, with its 95% interval: a seeded bootstrap over questions "
            "(a question's answers with and without context stay together); n counts the questions.",
        ]
    return lines


def _transition(summary: dict[str, Any]) -> list[str]:
    """Table 7: on non-stationary questions, how often each of two contexts' labels is right."""
    t7 = [
        [
            e["model"],
            e["strategy"],
            e["questions"],
            e["pairs"],
            _v(e, "rl1_accuracy"),
            _v(e, "rl2_accuracy"),
            _v(e, "transition_accuracy"),
            _v(e, "all_contexts_right"),
        ]
        for e in summary["table7"]
    ]
    if not t7:
        return ["_No with-context answers on non-stationary questions in this run._"]
    return [
        table(
            [
                "model",
                "strategy",
                "questions",
                "pairs",
                "RL1 acc.",
                "RL2 acc.",
                "transition acc.",
                "all contexts right",
            ],
            t7,
            digits=3,
        )
    ]


def _parsing(summary: dict[str, Any]) -> list[str]:
    """One row per run: how many answers each parsing stage read."""
    parse_rows = [
        [
            run["model"],
            run["strategy"],
            run["context_mode"],
            run["parsed_by"].get("whole", 0),
            run["parsed_by"].get("marker", 0),
            run["parsed_by"].get("free-text", 0),
            run["parsed_by"].get("none", 0),
        ]
        for run in summary["runs"]
    ]
    return [table(["model", "strategy", "context", "whole answer", "marker", "free text", "unparseable"], parse_rows)]


__all__ = ["confusion_figure", "confusion_png", "fmt", "render", "slug"]
