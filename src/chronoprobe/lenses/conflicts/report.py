"""Markdown tables mirroring the paper's tables, and the CP bar plot."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chronoprobe.io import write_bytes_atomic
from chronoprobe.lenses.conflicts.rows import PersuasionRow
from chronoprobe.metrics.uncertainty import ci_cell
from chronoprobe.provenance import Provenance
from chronoprobe.reports.markdown import provenance_section, table

CLASS_LABELS = {
    "static": "Static",
    "temporal": "Temporal",
    "disputed": "Disputed",
    "immutable-1": "Imm-1",
    "immutable-N": "Imm-N",
    "mutable": "Mutable",
}


def _label(fact_class: str) -> str:
    return CLASS_LABELS.get(fact_class, fact_class)


NEGATIVE_ENTROPY_WHY = (
    "That is how the estimator behaves, not an error: it sums the samples' length-normalised probabilities "
    "exp(l_i), which are per-token geometric means and not shares of one distribution, so a cluster of several "
    "confident samples has L_k = log Σ exp(l_i) > 0 (chronoprobe docs conflicts, Semantic entropy)."
)


def _below_zero_as_shown(value: Any, digits: int = 3) -> bool:
    """Below zero as the table prints it (``-0.000`` is not)."""
    return isinstance(value, int | float) and round(value, digits) < 0


def negative_entropy_note(
    summary: Mapping[str, Mapping[str, Mapping[str, Any]]], rows: Sequence[PersuasionRow]
) -> str | None:
    """What the report says about semantic entropies below zero: in the table, only in single items, or nothing."""
    keys = ("se_context", "se_no_context")
    shown: list[Any] = []
    for per_class in summary.values():
        for stats in per_class.values():
            estimates = stats.get("estimates") or {}
            shown += [stats.get(k) for k in keys]
            shown += [(estimates.get(k) or {}).get(bound) for k in keys for bound in ("ci_low", "ci_high")]
    if any(_below_zero_as_shown(v) for v in shown):
        return f"Some semantic entropies in this table are below zero. {NEGATIVE_ENTROPY_WHY}"
    items = sum(1 for r in rows if any(isinstance(v, int | float) and v < 0 for v in (r.se_context, r.se_no_context)))
    if items:
        return (
            f"Every value in this table is at or above zero, but {items} item(s) in items.jsonl have a semantic "
            f"entropy below zero. {NEGATIVE_ENTROPY_WHY}"
        )
    return None


def persuasion_markdown(
    summary: Mapping[str, Mapping[str, Mapping[str, Any]]],
    classes: Sequence[str],
    title: str,
    rows: Sequence[PersuasionRow] = (),
) -> str:
    """Accuracy (Tables 2/8), CP (3/9), SE (4), stubborn/persuaded (5/10) for every model.

    ``rows`` (the run's items) let the report say when an item's semantic entropy is negative."""
    heads = ["Model", *(_label(c) for c in classes), *(f"{_label(c)} {CI}" for c in classes)]
    pairs = [(spec, per_class) for spec, per_class in summary.items()]
    accuracy = [
        r for s, p in pairs for r in _without_and_with(s, p, classes, "accuracy_no_context", "accuracy_context")
    ]
    entropy = [r for s, p in pairs for r in _without_and_with(s, p, classes, "se_no_context", "se_context")]
    counts = ", ".join(f"{_label(c)} {next(iter(summary.values()))[c]['facts']}" for c in classes) if summary else ""
    parts = [
        f"# {title}",
        "",
        f"Facts per class: {counts}. Each fact gives a true-context and a counterfactual item.",
        "",
        INTERVALS_NOTE,
        "",
        "## Accuracy (Eq. 5 without context, Eq. 4 with context)",
        "",
        table(heads, accuracy, digits=3),
        "",
        "## Coherent Persuasion",
        "",
        '"all" is the paper\'s figure: the mean over every with-context item of the class, true-context '
        "and counterfactual alike; the means per context type are beside it.",
        "",
        table(_cp_heads(classes), [_cp_row(s, p, classes) for s, p in pairs], digits=3),
        "",
        "## Semantic entropy",
        "",
        table(heads, entropy, digits=3),
        "",
        *([note, ""] if (note := negative_entropy_note(summary, rows)) else []),
        "## Stubborn and persuaded instances (counterfactual contexts)",
        "",
        table(_stubborn_heads(classes), [_stubborn_row(s, p, classes) for s, p in pairs]),
        "",
    ]
    return "\n".join(parts)


_CP_KEYS = ("cp", "cp_true_context", "cp_counterfactual")
_CP_NAMES = ("all", "true ctx", "counterfactual")


def _without_and_with(
    spec: str, per_class: Mapping[str, Mapping[str, Any]], classes: Sequence[str], without: str, with_context: str
) -> list[list[Any]]:
    """A model's two rows of a measure: without context, then with it (``spec w/context``)."""
    return [
        [name, *(per_class[c][key] for c in classes), *_cis(per_class, classes, [key])]
        for name, key in ((spec, without), (f"{spec} w/context", with_context))
    ]


def _cp_heads(classes: Sequence[str]) -> list[str]:
    return [
        "Model",
        *(f"{_label(c)} {k}" for c in classes for k in _CP_NAMES),
        *(f"{_label(c)} {k} {CI}" for c in classes for k in _CP_NAMES),
    ]


def _cp_row(spec: str, per_class: Mapping[str, Mapping[str, Any]], classes: Sequence[str]) -> list[Any]:
    return [spec, *(per_class[c].get(k) for c in classes for k in _CP_KEYS), *_cis(per_class, classes, _CP_KEYS)]


def _stubborn_heads(classes: Sequence[str]) -> list[str]:
    return [
        "Model",
        *(f"% stubborn {_label(c)}" for c in classes),
        *(f"% persuaded {_label(c)}" for c in classes),
        *(f"% stubborn {_label(c)} {CI}" for c in classes),
        *(f"% persuaded {_label(c)} {CI}" for c in classes),
    ]


def _stubborn_row(spec: str, per_class: Mapping[str, Mapping[str, Any]], classes: Sequence[str]) -> list[Any]:
    return [
        spec,
        *(_pct(per_class[c]["stubborn_pct"]) for c in classes),
        *(_pct(per_class[c]["persuaded_pct"]) for c in classes),
        *_cis(per_class, classes, ["stubborn_pct"], 1),
        *_cis(per_class, classes, ["persuaded_pct"], 1),
    ]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}%"


CI = "95% CI"
INTERVALS_NOTE = (
    "Columns marked 95% CI give the interval and its n: Wilson for accuracies and shares, a seeded bootstrap "
    "over items for means (chronoprobe docs conflicts, Intervals)."
)


def _cis(
    per_class: Mapping[str, Mapping[str, Any]], classes: Sequence[str], keys: Sequence[str], digits: int = 3
) -> list[str]:
    """``[lo, hi] (n=N)`` for each class and key, ``–`` where the summary has no estimate."""
    return [ci_cell((per_class[c].get("estimates") or {}).get(k), digits) for c in classes for k in keys]


FIDELITY_NOTES = {
    "corrected": "Scoring: corrected (our fixes to the original code, listed in chronoprobe docs conflicts; "
    "`--fidelity original` reproduces the original's numbers).",
    "original": "Scoring: original (F1, first-token confidence and update success exactly as the original "
    "code computes them; see chronoprobe docs conflicts).",
}


def completion_markdown(
    summary: Mapping[str, Mapping[str, Mapping[str, Any]]],
    classes: Sequence[str],
    title: str,
    fidelity: str = "corrected",
) -> str:
    """F1 and confidence (Tables 6/11), update success (Tables 7/9), F1 per relation."""
    f1_rows, up_rows, empty_rows = [], [], []
    f1_cis: list[list[str]] = []
    for spec, per_class in summary.items():
        empty_rows.append(
            [spec, *(f"{per_class[c].get('empty_predictions', 0)} of {per_class[c]['queries']}" for c in classes)]
        )
        f1_rows.append([spec, *(v for c in classes for v in (per_class[c]["f1"], per_class[c]["confidence"]))])
        f1_cis.append([*_cis(per_class, classes, ["f1"], 2), *_cis(per_class, classes, ["confidence"])])
        up_rows.append(
            [
                spec,
                *(per_class[c]["update_success"] for c in classes),
                *(f"{per_class[c]['updates']} of {per_class[c].get('memorised', '?')}" for c in classes),
                *_cis(per_class, classes, ["update_success"]),
            ]
        )
    f1_heads = [
        "Model",
        *(f"{_label(c)} {k}" for c in classes for k in ("F1", "Conf")),
        *(f"{_label(c)} {k} {CI}" for k in ("F1", "Conf") for c in classes),
    ]
    rel_rows = []
    for spec, per_class in summary.items():
        for c in classes:
            relation_cis = (per_class[c].get("estimates") or {}).get("f1_per_relation") or {}
            for relation, value in sorted(per_class[c]["f1_per_relation"].items()):
                rel_rows.append([spec, _label(c), relation, value, ci_cell(relation_cis.get(relation), 2)])
    parts = [
        f"# {title}",
        "",
        FIDELITY_NOTES[fidelity],
        "",
        INTERVALS_NOTE,
        "",
        "## F1 (x100, relations weighted by example counts) and first-token confidence",
        "",
        table(
            f1_heads,
            [
                [r[0], *(_round(v, i) for i, v in enumerate(r[1:])), *cis]
                for r, cis in zip(f1_rows, f1_cis, strict=True)
            ],
            digits=2,
        ),
        "",
        "F1 leaves out queries with an empty prediction (as the original does); confidence counts them as 0.",
        "",
        table(["Model", *(f"empty predictions {_label(c)}" for c in classes)], empty_rows),
        "",
        "## Update success rate (memorised facts)",
        "",
        table(
            [
                "Model",
                *(_label(c) for c in classes),
                *(f"updates/memorised {_label(c)}" for c in classes),
                *(f"{_label(c)} {CI}" for c in classes),
            ],
            up_rows,
            digits=3,
        ),
        "",
        "Memorised: F1 = 1 and first-token confidence >= the threshold, best template per relation; classes are "
        "balanced to the smallest memorised count, so one class with none means no updates.",
        "",
        "## F1 per relation",
        "",
        table(["Model", "Class", "Relation", "F1", f"F1 {CI}"], rel_rows, digits=2),
        "",
    ]
    return "\n".join(parts)


def _round(value: Any, index: int) -> Any:
    if value is None:
        return None
    return round(float(value), 2 if index % 2 == 0 else 3)


def full_report(body: str, provenance: Provenance) -> str:
    return body + "\n" + provenance_section(provenance)


def cp_bar_plot(summary: Mapping[str, Mapping[str, Mapping[str, Any]]], classes: Sequence[str], path: Path) -> None:
    """Grouped bars: CP per class (x) per model (colour)."""

    import matplotlib  # deferred: matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # deferred: matplotlib

    models = list(summary)
    width = 0.8 / max(1, len(models))
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(classes), 3.6))
    for k, spec in enumerate(models):
        values = [summary[spec][c]["cp"] or 0.0 for c in classes]
        xs = [i + (k - (len(models) - 1) / 2) * width for i in range(len(classes))]
        ax.bar(xs, values, width=width, label=spec)
    ax.set_xticks(range(len(classes)), [_label(c) for c in classes])
    ax.set_ylabel("Coherent Persuasion (nats)")
    ax.set_title("Coherent Persuasion per class")
    ax.legend(fontsize=7)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    plt.close(fig)
    write_bytes_atomic(path, buffer.getvalue())


_SWEEP_COLUMNS = {
    # methodology -> (per-class columns (summary key, label), the class pair whose gap the study follows)
    "dynamicqa": ((("accuracy_no_context", "acc"), ("cp", "CP")), "cp"),
    "mulan": ((("f1", "F1"), ("update_success", "update")), "update_success"),
}


def _parameters(count: str | None) -> tuple[float, str]:
    if not count:
        return float("inf"), "–"
    value = int(count)
    return value, f"{value / 1e9:.1f}B" if value >= 1e9 else f"{value / 1e6:.0f}M"


def model_sweep_markdown(
    summary: Mapping[str, Mapping[str, Mapping[str, Any]]],
    classes: Sequence[str],
    provenance: Provenance,
    methodology: str,
    gaps: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """One row per model, smallest first: the study's model-size sweep (empty for a single model).

    The last columns are the gap the study tracks across sizes: temporal (or mutable) minus
    static (or immutable-1), for CP under DynamicQA's methodology and update success under MuLan's,
    and its 95% interval and n where ``gaps`` (``summary.json``'s) has them.
    """
    if len(summary) < 2:
        return ""
    per_class, gap_key = _SWEEP_COLUMNS[methodology]
    infos = {m.label: m for m in provenance.models}
    changing = next((c for c in ("temporal", "mutable") if c in classes), None)
    stable = next((c for c in ("static", "immutable-1") if c in classes), None)
    gap_label = dict(per_class)[gap_key]
    headers = [
        "Model",
        "Parameters",
        "Chat template",
        *(f"{_label(c)} {label}" for c in classes for _, label in per_class),
    ]
    show_ci = bool(gaps) and bool(changing and stable)
    if changing and stable:
        headers.append(f"{gap_label} {_label(changing)} − {_label(stable)}")
        if show_ci:
            headers.append(CI)
    rows = []
    for order, (spec, stats) in enumerate(summary.items()):
        info = infos.get(spec)
        size, size_text = _parameters(info.extra.get("parameters") if info else None)
        row: list[Any] = [
            spec,
            size_text,
            "yes" if info and info.chat_template else "no",
            *(_fixed(stats[c].get(key)) for c in classes for key, _ in per_class),
        ]
        if changing and stable:
            high, low = stats[changing].get(gap_key), stats[stable].get(gap_key)
            row.append(_fixed(None if high is None or low is None else high - low))
            if show_ci:
                row.append(ci_cell((gaps or {}).get(spec)))
        rows.append(((size, order), row))
    rows.sort(key=lambda pair: pair[0])
    return "\n".join(
        [
            "",
            "## Model sweep",
            "",
            "The study's size sweep: one row per model, smallest first (parameters as loaded; – where unknown)."
            + (
                " The gap's interval: a bootstrap over each class's items (CP), Newcombe's interval for a "
                "difference of two proportions (update success); n counts the items of both classes."
                if show_ci
                else ""
            ),
            "",
            table(headers, [row for _, row in rows]),
            "",
        ]
    )


def _fixed(value: Any) -> str:
    return "–" if value is None else f"{float(value):.3f}"
