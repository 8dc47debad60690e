"""The recency gate: should a question go to retrieval before the model answers it?

The classifier is the zero-shot recency prompt. With ``samples > 1`` we draw
that many labels and decide on the share of probability mass at or below the
threshold class: retrieve when P(answer changes within the threshold horizon)
>= ``min_share`` (0.5). With one sample the label is greedy and the rule is
simply "predicted class <= threshold". If nothing parses we retrieve (a gate
that cannot tell should not claim the model's memory is fresh enough).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.cache import CachedModel
from chronoprobe.errors import ConfigError
from chronoprobe.metrics import recency as m
from chronoprobe.models.base import DecodingParams
from chronoprobe.recency.parse import parse_recency_answer
from chronoprobe.recency.prompts import Template, eval_template
from chronoprobe.recency.taxonomy import RecencyClass, parse_label

DEFAULT_THRESHOLD = RecencyClass.A_YEAR


class GateDecision(BaseModel):
    model_config = ConfigDict(frozen=True)

    question: str
    predicted_class: RecencyClass | None
    retrieve: bool
    reason: str
    distribution: dict[str, float] = Field(default_factory=dict)
    """Share of each class among the parsed samples (empty for one greedy sample that did not parse)."""
    samples: int
    unparseable: int
    threshold: RecencyClass
    share_within_threshold: float | None = None


def decide_retrieval(labels: list[RecencyClass | None], threshold: RecencyClass, min_share: float = 0.5,
                     question: str = "") -> GateDecision:
    """Pure decision from sampled labels (None = unparseable)."""
    parsed = [label for label in labels if label is not None]
    unparseable = len(labels) - len(parsed)
    if not parsed:
        return GateDecision(question=question, predicted_class=None, retrieve=True, samples=len(labels),
                            unparseable=unparseable, threshold=threshold,
                            reason=f"could not read a recency class from {len(labels)} answer(s); retrieving to be safe")
    distribution = m.label_distribution(parsed)
    predicted: RecencyClass = m.majority_label(parsed)  # type: ignore[assignment]
    within = sum(share for label, share in distribution.items() if label <= threshold)  # type: ignore[operator]
    retrieve = within >= min_share
    votes = f"{round(distribution[predicted] * len(parsed))}/{len(parsed)} samples" if len(parsed) > 1 else "one greedy answer"
    horizon = f"within {threshold.label}"
    if retrieve:
        reason = (f"predicted {predicted.label} ({votes}); {within:.0%} of the answers expect the answer to change "
                  f"{horizon} or sooner, so the model's stored answer is likely stale: retrieve")
    else:
        reason = (f"predicted {predicted.label} ({votes}); only {within:.0%} of the answers expect a change "
                  f"{horizon} or sooner, so the model's own knowledge should still hold: no retrieval")
    return GateDecision(question=question, predicted_class=predicted, retrieve=retrieve, reason=reason,
                        distribution={label.label: share for label, share in distribution.items()},  # type: ignore[union-attr]
                        samples=len(labels), unparseable=unparseable, threshold=threshold,
                        share_within_threshold=within)


def recency_gate(
    question: str,
    model: CachedModel,
    threshold: RecencyClass | str = DEFAULT_THRESHOLD,
    samples: int = 1,
    *,
    context: str | None = None,
    temperature: float = 0.7,
    min_share: float = 0.5,
    seed: int = 0,
    max_new_tokens: int = 16,
    template: Template | None = None,
) -> GateDecision:
    """Classify ``question`` and decide whether to retrieve before answering it."""
    if isinstance(threshold, str):
        parsed_threshold = parse_label(threshold)
        if parsed_threshold is None:
            raise ConfigError("--threshold", f"{threshold!r} is not a recency class")
        threshold = parsed_threshold
    if samples < 1:
        raise ConfigError("--samples", "needs at least one sample")
    if not question.strip():
        raise ConfigError("question", "is empty")
    template = template or eval_template("zero-shot", context is not None)
    values = {"question": question.strip()}
    if context is not None:
        values["context"] = context
    params = DecodingParams(n=samples, temperature=0.0 if samples == 1 else temperature, seed=seed,
                            max_new_tokens=max_new_tokens)
    generation = model.generate([template.fill(**values)], params)[0]
    labels = [parse_recency_answer(s.text).label for s in generation.samples]
    return decide_retrieval(labels, threshold, min_share, question=question.strip())
