"""The conflicts lens's sentence in ``chronoprobe check``'s paragraph: does context override memory?

From the run's records per class of fact: the persuaded and stubborn shares on counterfactual
contexts (DynamicQA's methodology) and CP, the coherent persuasion score; under MuLan's
methodology, update success. Each number is quoted with its 95% interval and n.
"""

from __future__ import annotations

from chronoprobe.records.runlog import Metric, Summary
from chronoprobe.reports.metric_format import unit_note
from chronoprobe.reports.plain_words import MIN_ITEMS, brief, compare, find, groups_of, listing

CHANGING = ("temporal", "mutable")
STABLE = ("static", "immutable-1")


def _first(summary: Summary, model: str, name: str, groups: tuple[str, ...]) -> tuple[str, Metric] | None:
    for group in groups:
        found = find(summary, model, name, group)
        if found is not None and found.value is not None:
            return group, found
    return None


def _which_kinds(summary: Summary, model: str, name: str, what: str) -> str:
    """Whether ``name`` is higher on facts that change than on stable ones, as far as the intervals tell."""
    changing, stable = _first(summary, model, name, CHANGING), _first(summary, model, name, STABLE)
    if changing is None or stable is None:
        return ""
    (high_class, high), (low_class, low) = changing, stable
    compared = f"{what} {brief(high)} on {high_class} facts, {brief(low)} on {low_class} ones"
    side = compare(high, low)
    if side == "above":
        return f" Context sways it more on facts that change ({compared})."
    if side == "below":
        return f" Context sways it less on facts that change ({compared})."
    return f" Whether context sways it more on facts that change, the intervals cannot tell ({compared})."


def _per_class(metrics: list[tuple[str, Metric]]) -> str:
    return listing([f"{brief(m)} on {g}" for g, m in metrics])


def context(summary: Summary, model: str) -> str | None:
    persuaded = _measured(summary, model, "persuaded_pct")
    if persuaded:
        stubborn = _measured(summary, model, "stubborn_pct")
        fewest = min((m.n for _, m in persuaded if m.n is not None), default=0)
        sentence = (
            f"Context: given a context that contradicts its memory, it takes the context's answer "
            f"{_per_class(persuaded)} facts"
        )
        if stubborn:
            sentence += f", and keeps its own {_per_class(stubborn)}"
        sentence += (
            f" (95% intervals; n={fewest}" + (" or more" if any(m.n != fewest for _, m in persuaded) else "") + ")."
        )
        if fewest < MIN_ITEMS:
            return sentence + f" With {fewest} facts per class, too few to say for which kinds of facts."
        return sentence + _which_kinds(summary, model, "cp", "CP")
    updated = _measured(summary, model, "update_success")
    if updated:
        fewest = min((m.n for _, m in updated if m.n is not None), default=0)
        note = unit_note(updated[0][1])
        sentence = f"Context: with the new fact in context, its update success{note} is {_per_class(updated)} facts."
        if fewest < MIN_ITEMS:
            return sentence + f" With {fewest} facts per class, too few to say for which kinds of facts."
        return sentence + _which_kinds(summary, model, "update_success", "update success")
    return None


def _measured(summary: Summary, model: str, name: str) -> list[tuple[str, Metric]]:
    found = ((g, find(summary, model, name, g)) for g in groups_of(summary, model, name))
    return [(g, m) for g, m in found if m is not None and m.value is not None]


def sentences(summary: Summary, model: str) -> list[str]:
    found = context(summary, model)
    return [found] if found else []
