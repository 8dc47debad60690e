"""One retrieval decision, as both gates write it: the prompted LLM gate (``recency gate --router llm``)
and the trained router (``recency route``, ``recency gate --router trained``, ``chronoprobe.route``).

It lives here, below the recency lens, so the router and the lens's gate share one record and one
JSON layout: whatever reads the one reads the other.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from chronoprobe.datasets.recency_taxonomy import RecencyClass

RouterKind = Literal["trained", "llm"]


class GateDecision(BaseModel):
    model_config = ConfigDict(frozen=True)

    question: str
    predicted_class: RecencyClass | None
    retrieve: bool
    reason: str
    distribution: dict[str, float] = Field(default_factory=dict)
    """The LLM gate: share of each class among the parsed samples (empty for one greedy sample that did not
    parse); the trained router: the probability of every class."""
    samples: int
    """Label samples drawn (the LLM gate); 0 for the trained router, which draws none."""
    unparseable: int
    threshold: RecencyClass
    share_within_threshold: float | None = None
    """P(the answer changes within the threshold or sooner): a share of samples, or the router's probability."""
    cut_off: float = 0.5
    """Retrieve when ``share_within_threshold`` is at least this (``--min-share``)."""
    router: RouterKind = "llm"
    """Which gate decided: ``trained`` (the shipped classifier) or ``llm`` (a prompted model)."""

    @field_validator("predicted_class", "threshold", mode="before")
    @classmethod
    def _class_from_name(cls, value: object) -> object:
        return RecencyClass.parse(value) if isinstance(value, str) else value

    @field_serializer("predicted_class", "threshold")
    def _class_name(self, value: RecencyClass | None) -> str | None:
        # JSON shows the class as the dataset spells it ("A-Year"), not its index
        return value.label if value is not None else None


def decide_from_probabilities(
    question: str, probabilities: np.ndarray, threshold: RecencyClass, cut_off: float
) -> GateDecision:
    """The trained router's decision for one question from its twelve class probabilities (index = class).

    P(change within threshold) is the probability mass of the threshold class and every faster one;
    retrieve when it is at least ``cut_off``.
    """
    within = float(probabilities[: int(threshold) + 1].sum())
    predicted = RecencyClass(int(np.argmax(probabilities)))
    retrieve = within >= cut_off
    verdict = "retrieve" if retrieve else "no retrieval"
    reason = (
        f"the trained router gives {within:.0%} that the answer changes within {threshold.label} or sooner "
        f"(cut-off {cut_off:g}); most likely {predicted.label} ({float(probabilities[predicted]):.0%}): {verdict}"
    )
    return GateDecision(
        question=question,
        predicted_class=predicted,
        retrieve=retrieve,
        reason=reason,
        distribution={c.label: round(float(p), 6) for c, p in zip(RecencyClass, probabilities, strict=True)},
        samples=0,
        unparseable=0,
        threshold=threshold,
        share_within_threshold=round(within, 6),
        cut_off=cut_off,
        router="trained",
    )
