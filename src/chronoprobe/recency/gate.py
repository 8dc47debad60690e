"""The recency gate: should a question go to retrieval before the model answers it?

The classifier is the zero-shot recency prompt. With ``samples > 1`` (the
default, ``DEFAULT_SAMPLES``) we draw that many labels and decide on the share of
probability mass at or below the threshold class: retrieve when P(answer changes
within the threshold horizon) >= ``min_share`` (0.5). With one sample the label
is greedy and the rule is simply "predicted class <= threshold". If nothing
parses we retrieve (a gate that cannot tell should not claim the model's memory
is fresh enough).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from chronoprobe.cache import CachedModel
from chronoprobe.datasets.recency_taxonomy import RecencyClass, parse_label
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.metrics import recency as m
from chronoprobe.models.base import DecodingParams
from chronoprobe.recency.parse import parse_recency_answer
from chronoprobe.recency.prompts import Template, eval_template

DEFAULT_THRESHOLD = RecencyClass.A_YEAR
DEFAULT_SAMPLES = 5
"""Label samples per question, for the CLI and the Python API alike."""
DEFAULT_TEMPERATURE = 0.7


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

    @field_validator("predicted_class", "threshold", mode="before")
    @classmethod
    def _class_from_name(cls, value: object) -> object:
        return RecencyClass.parse(value) if isinstance(value, str) else value

    @field_serializer("predicted_class", "threshold")
    def _class_name(self, value: RecencyClass | None) -> str | None:
        # JSON shows the class as the dataset spells it ("A-Year"), not its index
        return value.label if value is not None else None


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
    )


def _drawn(n: int, greedy: bool) -> str:
    if greedy and n == 1:
        return "one greedy answer"
    return f"{n} sampled answer{'s' if n != 1 else ''}"


def _check_threshold(threshold: RecencyClass | str) -> RecencyClass:
    if isinstance(threshold, RecencyClass):
        return threshold
    parsed = parse_label(threshold)
    if parsed is None:
        raise ConfigError("--threshold", f"{threshold!r} is not a recency class (e.g. A-Few-Months, A-Year)")
    return parsed


def recency_gate_many(
    questions: list[str],
    model: CachedModel,
    threshold: RecencyClass | str = DEFAULT_THRESHOLD,
    samples: int = DEFAULT_SAMPLES,
    *,
    context: str | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    min_share: float = 0.5,
    seed: int = 0,
    max_new_tokens: int = 16,
    template: Template | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[GateDecision]:
    """Classify every question in one batched model call and decide, per question, whether to retrieve."""
    threshold = _check_threshold(threshold)
    if samples < 1:
        raise ConfigError("--samples", f"needs at least one sample, got {samples}")
    if temperature < 0:
        raise ConfigError("--temperature", f"must be 0 or more, got {temperature}")
    if not 0 < min_share <= 1:
        raise ConfigError("--min-share", f"must be a share in (0, 1], got {min_share}")
    cleaned = [q.strip() for q in questions]
    for number, question in enumerate(cleaned, start=1):
        if not question:
            raise ConfigError("question" if len(cleaned) == 1 else f"question {number}", "is empty")
    template = template or eval_template("zero-shot", context is not None)
    prompts = []
    for question in cleaned:
        values = {"question": question}
        if context is not None:
            values["context"] = context
        prompts.append(template.fill(**values))
    greedy = samples == 1
    params = DecodingParams(
        n=samples, temperature=0.0 if greedy else temperature, seed=seed, max_new_tokens=max_new_tokens
    )
    generations = model.generate(prompts, params, progress=progress)
    decisions = []
    for question, generation in zip(cleaned, generations, strict=True):
        labels = [parse_recency_answer(s.text).label for s in generation.samples]
        decisions.append(decide_retrieval(labels, threshold, min_share, question=question, greedy=greedy))
    return decisions


def recency_gate(
    question: str,
    model: CachedModel,
    threshold: RecencyClass | str = DEFAULT_THRESHOLD,
    samples: int = DEFAULT_SAMPLES,
    *,
    context: str | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    min_share: float = 0.5,
    seed: int = 0,
    max_new_tokens: int = 16,
    template: Template | None = None,
) -> GateDecision:
    """Classify ``question`` and decide whether to retrieve before answering it."""
    return recency_gate_many(
        [question],
        model,
        threshold,
        samples,
        context=context,
        temperature=temperature,
        min_share=min_share,
        seed=seed,
        max_new_tokens=max_new_tokens,
        template=template,
    )[0]


def read_gate_questions(path: Path) -> list[str]:
    """Questions from a text file (one per line) or JSONL (one object with a "question" field per line).

    Blank lines and, in text files, lines starting with ``#`` are skipped.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(str(path), "no such file" if not path.exists() else "is not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(str(path), f"is not UTF-8 text (byte {exc.start})") from None
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    as_jsonl = path.suffix.lower() in {".jsonl", ".ndjson"} or (bool(lines) and lines[0][1].startswith("{"))
    questions: list[str] = []
    for number, line in lines:
        if not as_jsonl:
            if not line.startswith("#"):
                questions.append(line)
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path} line {number}", f"invalid JSON: {exc.msg}") from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
            raise DataError(f"{path} line {number}", 'expected an object with a non-empty "question" string')
        questions.append(row["question"].strip())
    if not questions:
        raise DataError(str(path), "holds no questions")
    return questions
