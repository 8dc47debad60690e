"""The editing lens's sentence in ``chronoprobe check``'s paragraph: what to do about the facts it got
wrong, retrieval or editing? From the run's records over every fact: each method's harmonic mean
of efficacy and paraphrase success (DyKnow's Table 3), with its 95% interval and n.

The two numbers compared are on the same facts. RAG gold asks only the facts with a gold passage;
when the methods were scored on different facts, the run records each one's measures on the facts
they all were scored on (the ``shared`` group), the sentence compares those and says how many
facts had a passage to retrieve. Which fix is better is decided paired, fact by fact, on the facts both were
applied to (the run's ``paired`` block, ``lenses/editing/compare.py``) where that decides; else by the two
intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

from chronoprobe.lenses.editing.metric_records import SHARED
from chronoprobe.metrics.records import ALL
from chronoprobe.records.runlog import Metric, Summary
from chronoprobe.reports.plain_words import MIN_ITEMS, brief, compare, find, p_is, quote, signed

MEASURE = "harmonic_mean_pct"
UNEDITED = "unedited"
HOW = "by the harmonic mean of efficacy and paraphrase success"
MEAN = "the harmonic mean of efficacy and paraphrase success"
"""What the compared number is: a mean of two shares, never a share of facts fixed."""


def _methods(summary: Summary, model: str, group: str = ALL) -> dict[str, Metric]:
    """Every method applied to all the facts (no scaling fraction), with its harmonic mean over ``group``."""
    found = {}
    for metric in summary.metrics:
        method, _, measure = metric.name.partition(".")
        whole = metric.group == group and "@" not in method and method != UNEDITED
        if metric.model == model and measure == MEASURE and whole and metric.value is not None:
            found[method] = metric
    return found


def _best(methods: dict[str, Metric], retrieval: bool) -> str | None:
    """The method of the kind (retrieval: ``rag-*``) with the highest harmonic mean."""
    kind = {k: m for k, m in methods.items() if k.startswith("rag-") == retrieval}
    return max(kind, key=lambda k: kind[k].value or 0.0, default=None)


@dataclass(frozen=True)
class Choice:
    """The best retrieval and the best editing method and the two numbers the sentence compares."""

    rag: str
    edit: str
    rag_metric: Metric
    edit_metric: Metric
    facts: int
    """The facts it got wrong (the edit set the run scored)."""
    with_passage: int
    """Of those, the ones the retrieval method was asked (RAG gold needs a gold passage)."""
    shared: int | None
    """The facts both numbers are on (the ``shared`` records), when the methods were scored on different
    facts; None when they were all scored on the same ones."""


def _choose(summary: Summary, model: str, methods: dict[str, Metric], facts: int) -> Choice | None:
    """Retrieval against editing, each by its best method: on the ``shared`` facts when the run recorded them."""
    shared = _methods(summary, model, SHARED)
    both = shared or methods
    rag, edit = _best(both, retrieval=True), _best(both, retrieval=False)
    if rag is None or edit is None or rag not in methods:
        return None
    count = both[rag].n if shared else None
    return Choice(rag, edit, both[rag], both[edit], facts, methods[rag].n or 0, count)


def what_to_do(summary: Summary, model: str) -> str | None:
    methods = _methods(summary, model)
    if not methods:
        return None
    label = summary.labels
    unedited = find(summary, model, f"{UNEDITED}.{MEASURE}")
    facts = max((m.n or 0) for m in [*methods.values(), *([unedited] if unedited is not None else [])])
    opening = f"What to do: on the {facts} facts it got wrong"
    choice = _choose(summary, model, methods, facts)
    if choice is None:  # one kind of fix only: its best method
        method = _best(methods, retrieval=True) or _best(methods, retrieval=False) or next(iter(methods))
        return f"{opening}, {label.get(method, method)} scores {quote(methods[method])}, {HOW}."
    rag, edit = label.get(choice.rag, choice.rag), label.get(choice.edit, choice.edit)
    same = choice.shared is not None or choice.rag_metric.n == choice.edit_metric.n
    if not same:  # an older run, from before the shared records: the two were asked different facts
        return (
            f"{opening}{_counts(choice)}, {MEAN} is {quote(choice.rag_metric)} for retrieval ({rag}) on the facts "
            f"it was asked and {quote(choice.edit_metric)} for editing ({edit}); on different facts, the two are "
            "not compared."
        )
    asked = choice.shared if choice.shared is not None else choice.rag_metric.n
    whom = "over them" if asked == choice.facts else f"over those {asked}"
    against = f"{brief(choice.edit_metric)} for editing ({edit})"
    if choice.shared is not None:
        against = f"{quote(choice.edit_metric)} for editing ({edit}) on the same facts"
    compared = f"{MEAN} is {quote(choice.rag_metric)} for retrieval ({rag}) {whom} against {against}"
    paired = _paired(summary, model, choice.rag, choice.edit)
    verdict = f" {paired}" if paired is not None else _verdict(choice, unedited)
    return f"{opening}{_counts(choice)}, {compared}.{verdict}"


def _counts(choice: Choice) -> str:
    """`` (5 of the 6 have a passage to retrieve)``: how many of the facts the numbers are on, when not all."""
    notes = []
    if choice.with_passage < choice.facts:
        notes.append(f"{choice.with_passage} of the {choice.facts} have a passage to retrieve")
    if choice.shared is not None and choice.shared != choice.with_passage:
        notes.append(f"{choice.shared} were asked of every method")
    return f" ({', '.join(notes)})" if notes else ""


def _paired(summary: Summary, model: str, rag: str, edit: str) -> str | None:
    """The sentence of the paired comparison on the facts both methods were applied to, when it decides."""
    found = next((e for e in summary.paired if (e.model, e.a, e.b) == (model, rag, edit)), None)
    if found is None or found.delta is None or found.ci_low is None or found.ci_high is None:
        return None
    low, high, p = found.ci_low, found.ci_high, found.p
    if not (low > 0 or high < 0) or p is None or p >= 0.05:
        return None
    better = "Editing" if found.delta > 0 else "Retrieval"
    return (
        f"{better} is the better fix: paired on the same {found.n} facts, editing scores "
        f"{signed(found.delta)} points against retrieval (95% {_made_by(found.test)}CI {signed(low)} to "
        f"{signed(high)}; {found.test} {p_is(p)})."
    )


def _made_by(test: str) -> str:
    """The method that made the interval, where the test is another (``bootstrap `` before an exact sign-flip p)."""
    return "bootstrap " if test == "exact sign-flip" else ""


def _verdict(choice: Choice, unedited: Metric | None) -> str:
    compared = choice.shared if choice.shared is not None else (choice.rag_metric.n or 0)
    if compared < MIN_ITEMS:
        return f" {compared} facts are too few to choose between them."
    side = compare(choice.rag_metric, choice.edit_metric)
    if side == "above":
        return " Retrieval is the better fix."
    if side == "below":
        return " Editing is the better fix."
    baseline = f"; unedited, it scored {brief(unedited)}" if unedited is not None and unedited.value is not None else ""
    return f" The intervals cannot tell which fix is better{baseline}."


def sentences(summary: Summary, model: str) -> list[str]:
    found = what_to_do(summary, model)
    return [found] if found else []
