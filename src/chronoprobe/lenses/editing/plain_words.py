"""The editing lens's sentence in ``chronoprobe check``'s paragraph: what to do about the facts it got
wrong, retrieval or editing? From the run's records over every fact: each method's harmonic mean
of efficacy and paraphrase success (DyKnow's Table 3), with its 95% interval and n."""

from __future__ import annotations

from chronoprobe.contract.runlog import Metric, Summary
from chronoprobe.reports.plain_words import MIN_ITEMS, brief, compare, find, p_is, quote, signed

MEASURE = "harmonic_mean_pct"
UNEDITED = "unedited"


def _methods(summary: Summary, model: str) -> list[tuple[str, Metric]]:
    """Every method applied to all the facts (no scaling fraction), with its harmonic mean."""
    found = []
    for metric in summary.metrics:
        method, _, measure = metric.name.partition(".")
        whole = metric.group == "all" and "@" not in method and method != UNEDITED
        if metric.model == model and measure == MEASURE and whole and metric.value is not None:
            found.append((method, metric))
    return found


def _best(methods: list[tuple[str, Metric]]) -> tuple[str, Metric] | None:
    return max(methods, key=lambda pair: pair[1].value or 0.0, default=None)


def what_to_do(summary: Summary, model: str) -> str | None:
    methods = _methods(summary, model)
    if not methods:
        return None
    label = summary.labels
    retrieval = _best([m for m in methods if m[0].startswith("rag-")])
    editing = _best([m for m in methods if not m[0].startswith("rag-")])
    facts = max((m.n or 0) for _, m in methods)
    opening = f"What to do: on the {facts} facts it got wrong"
    if retrieval is None or editing is None:
        method, metric = retrieval or editing or methods[0]
        return f"{opening}, {label.get(method, method)} fixes {quote(metric)} (harmonic mean of efficacy and paraphrase success)."
    (rag, rag_metric), (edit, edit_metric) = retrieval, editing
    sentence = (
        f"{opening}, retrieval ({label.get(rag, rag)}) fixes {quote(rag_metric)} of them against {brief(edit_metric)} "
        f"for editing ({label.get(edit, edit)}), by the harmonic mean of efficacy and paraphrase success."
    )
    paired = _paired(summary, model, rag, edit)
    if paired is not None:
        return sentence + " " + paired
    if facts < MIN_ITEMS:
        return sentence + f" {facts} facts are too few to choose between them."
    side = compare(rag_metric, edit_metric)
    if side == "above":
        return sentence + " Retrieval is the better fix."
    if side == "below":
        return sentence + " Editing is the better fix."
    unedited = find(summary, model, f"{UNEDITED}.{MEASURE}")
    baseline = f"; unedited, it scored {brief(unedited)}" if unedited is not None and unedited.value is not None else ""
    return sentence + f" The intervals cannot tell which fix is better{baseline}."


def _paired(summary: Summary, model: str, rag: str, edit: str) -> str | None:
    """The sentence of the paired comparison on the facts both methods were applied to, when it decides."""
    entries = ((summary.detail.get("models") or {}).get(model) or {}).get("paired") or []
    found = next((e for e in entries if e.get("retrieval") == rag and e.get("editing") == edit), None)
    if found is None or found.get("delta") is None or found.get("ci_low") is None or found.get("ci_high") is None:
        return None
    low, high, p = float(found["ci_low"]), float(found["ci_high"]), found.get("p")
    if not (low > 0 or high < 0) or p is None or p >= 0.05:
        return None
    better = "Editing" if found["delta"] > 0 else "Retrieval"
    return (
        f"{better} is the better fix: paired on the same {found['n']} facts, editing scores "
        f"{signed(found['delta'])} points against retrieval (95% CI {signed(low)} to {signed(high)}; "
        f"{found['test']} {p_is(float(p))})."
    )


def sentences(summary: Summary, model: str) -> list[str]:
    found = what_to_do(summary, model)
    return [found] if found else []
