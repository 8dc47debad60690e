"""The recency lens's sentence in ``chronoprobe check``'s paragraph: does it know when an answer needs
fresh data? From the run's records over every question: accuracy, the retrieval gate's agreement
with the labels and the unparseable share, each with its 95% interval and n."""

from __future__ import annotations

from chronoprobe.records.runlog import Metric, Summary
from chronoprobe.reports.metric_format import unit_note
from chronoprobe.reports.plain_words import (
    MIN_ITEMS,
    brief,
    difference,
    difference_span,
    find,
    interval,
    quote,
    side,
    too_few,
    value_text,
)


def _setting(summary: Summary, model: str) -> str | None:
    """The first strategy's numbers without context (else with), e.g. ``zero-shot.without.``."""
    names = [m.name for m in summary.metrics if m.model == model and m.group == "all" and m.name.endswith(".accuracy")]
    chosen = next((n for n in names if n.count(".") == 2 and ".without." in n), next(iter(names), None))
    return None if chosen is None else chosen.removesuffix("accuracy")


def recency(summary: Summary, model: str) -> str | None:
    prefix = _setting(summary, model)
    if prefix is None:
        return None
    accuracy = find(summary, model, prefix + "accuracy")
    agreement = find(summary, model, prefix + "gate_agreement")
    unparseable = find(summary, model, prefix + "unparseable_rate")
    strategy, mode = prefix.rstrip(".").split(".")
    setting = f"{strategy}, {mode} context"
    if accuracy is None or too_few([accuracy], MIN_ITEMS):
        shown = f" (accuracy {quote(accuracy)})" if accuracy is not None else ""
        return f"Recency: too few questions were asked to say whether it knows how fresh an answer must be{shown}."
    on_scale = " on a 0–1 scale" if unit_note(accuracy) else ""
    sentence = (
        f"Recency ({setting}): asked how often the answer to a question changes, it names the right "
        f"interval with an accuracy of {value_text(accuracy)}{on_scale} ({interval(accuracy)})"
    )
    if agreement is not None and agreement.value is not None:
        sentence += (
            f"; a retrieval gate on its answer (retrieve when the answer changes within a year) decides as "
            f"the labels would for {brief(agreement)}"
        )
    sentence += "." + _router_sentence(summary, model, prefix, accuracy)
    if unparseable is not None and side(unparseable, 0.5) == "above":
        sentence += f" Most of its answers, {brief(unparseable)}, name no interval at all, so these numbers say little."
    return sentence


def _router_sentence(summary: Summary, model: str, prefix: str, accuracy: Metric) -> str:
    """The shipped router on the same questions, paired; and, where the model does worse, what to do."""
    router = find(summary, model, prefix + "router_accuracy")
    gap = find(summary, model, prefix + "router_minus_model_accuracy")
    if router is None or router.value is None or gap is None or gap.value is None:
        return ""
    sentence = (
        f" The router shipped with chronoprobe names the right interval for {brief(router)} of the same questions "
        f"(paired, n = {gap.n}: {difference(gap.value, 'rate')}{_span(gap)})."
    )
    if side(gap, 0.0) == "above":
        sentence += (
            " What to do: do not trust this model's own judgement of when to retrieve; gate retrieval with the "
            "router (`chronoprobe recency route`, `chronoprobe.route`; docs/router.md)."
        )
    return sentence


def _span(gap: Metric) -> str:
    if gap.ci_low is None or gap.ci_high is None:
        return ""
    return f", 95% interval {difference_span(gap.ci_low, gap.ci_high, 'rate')}"


def sentences(summary: Summary, model: str) -> list[str]:
    found = recency(summary, model)
    return [found] if found else []
