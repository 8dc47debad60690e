"""The recency gate's rule, apart from its entry points: how the model is asked (:class:`GateSettings`,
:func:`gate_labels`) and how sampled labels become a decision (:func:`decide_retrieval`).

Shared by the gate (:mod:`chronoprobe.lenses.recency.gate`) and its measurement
(:mod:`chronoprobe.lenses.recency.gate_check`), so both ask and decide the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.cache import CachedModel
from chronoprobe.datasets.recency_taxonomy import RecencyClass
from chronoprobe.lenses.recency.parse import parse_recency_answer
from chronoprobe.lenses.recency.prompts import Template, eval_template
from chronoprobe.metrics import recency as m
from chronoprobe.models.base import DecodingParams
from chronoprobe.router.decision import (
    GateDecision as GateDecision,  # re-exported: the gate's record, defined below the lens
)

DEFAULT_THRESHOLD = RecencyClass.A_YEAR
DEFAULT_SAMPLES = 5
"""Label samples per question, for the CLI and the Python API alike."""
DEFAULT_TEMPERATURE = 0.7


def decide_retrieval(
    labels: list[RecencyClass | None],
    threshold: RecencyClass,
    min_share: float = 0.5,
    question: str = "",
    *,
    greedy: bool | None = None,
) -> GateDecision:
    """Pure decision from sampled labels (None = unparseable).

    ``greedy`` says whether the labels came from one greedy answer (default: when there is exactly one label);
    it only changes how the reason describes the evidence.
    """
    parsed = [label for label in labels if label is not None]
    unparseable = len(labels) - len(parsed)
    greedy = len(labels) == 1 if greedy is None else greedy
    if not parsed:
        return GateDecision(
            question=question,
            predicted_class=None,
            retrieve=True,
            samples=len(labels),
            unparseable=unparseable,
            threshold=threshold,
            cut_off=min_share,
            reason=f"could not read a recency class from {_drawn(len(labels), greedy)}; retrieving to be safe",
        )
    distribution = m.label_distribution(parsed)
    predicted: RecencyClass = m.majority_label(parsed)
    within = sum(share for label, share in distribution.items() if label <= threshold)
    retrieve = within >= min_share
    if greedy and len(labels) == 1:
        votes = "one greedy answer"
    else:
        votes = f"{round(distribution[predicted] * len(parsed))}/{len(parsed)} samples"
        if unparseable:
            votes += f" that parsed; {unparseable} of {len(labels)} unparseable"
    horizon = f"within {threshold.label}"
    if retrieve:
        reason = (
            f"predicted {predicted.label} ({votes}); {within:.0%} of the answers expect the answer to change "
            f"{horizon} or sooner, so the model's stored answer is likely stale: retrieve"
        )
    else:
        reason = (
            f"predicted {predicted.label} ({votes}); only {within:.0%} of the answers expect a change "
            f"{horizon} or sooner, so the model's own knowledge should still hold: no retrieval"
        )
    return GateDecision(
        question=question,
        predicted_class=predicted,
        retrieve=retrieve,
        reason=reason,
        distribution={label.label: share for label, share in distribution.items()},
        samples=len(labels),
        unparseable=unparseable,
        threshold=threshold,
        share_within_threshold=within,
        cut_off=min_share,
    )


def _drawn(n: int, greedy: bool) -> str:
    if greedy and n == 1:
        return "one greedy answer"
    return f"{n} sampled answer{'s' if n != 1 else ''}"


class GateSettings(BaseModel):
    """How the gate asks its model: what a measurement of the gate (``recency gate-check``) is valid for."""

    model_config = ConfigDict(frozen=True)

    samples: int = Field(DEFAULT_SAMPLES, ge=1)
    temperature: float = Field(DEFAULT_TEMPERATURE, ge=0.0)
    seed: int = 0
    max_new_tokens: int = Field(16, ge=1)

    def params(self) -> DecodingParams:
        greedy = self.samples == 1
        return DecodingParams(
            n=self.samples,
            temperature=0.0 if greedy else self.temperature,
            seed=self.seed,
            max_new_tokens=self.max_new_tokens,
        )


def gate_labels(
    questions: list[str],
    model: CachedModel,
    settings: GateSettings,
    *,
    context: str | None = None,
    template: Template | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[list[RecencyClass | None]]:
    """The gate's sampled labels (None = unparseable) for each question, in one batched model call."""
    template = template or eval_template("zero-shot", context is not None)
    prompts = []
    for question in questions:
        values = {"question": question}
        if context is not None:
            values["context"] = context
        prompts.append(template.fill(**values))
    generations = model.generate(prompts, settings.params(), progress=progress)
    return [[parse_recency_answer(s.text).label for s in generation.samples] for generation in generations]
