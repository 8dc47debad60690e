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

from collections.abc import Callable
from pathlib import Path

from chronoprobe.cache import CachedModel
from chronoprobe.datasets.recency_taxonomy import RecencyClass
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.recency.gate_check import warn_if_weak
from chronoprobe.lenses.recency.gate_rule import (
    DEFAULT_SAMPLES,
    DEFAULT_TEMPERATURE,
    DEFAULT_THRESHOLD,
    GateDecision,
    GateSettings,
    decide_retrieval,
    gate_labels,
)
from chronoprobe.lenses.recency.prompts import Template
from chronoprobe.router.questions import read_questions
from chronoprobe.router.route import checked_threshold

__all__ = [
    "DEFAULT_SAMPLES",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_THRESHOLD",
    "GateDecision",
    "GateSettings",
    "decide_retrieval",
    "gate_labels",
    "read_gate_questions",
    "recency_gate",
    "recency_gate_many",
]


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
    warn: bool = True,
) -> list[GateDecision]:
    """Classify every question in one batched model call and decide, per question, whether to retrieve.

    ``warn``: log a warning (logger ``chronoprobe.lenses.recency.gate``, once per model) when the model's
    measured routing quality (:mod:`chronoprobe.lenses.recency.gate_check`) is below the useful level, or
    was never measured."""
    threshold = checked_threshold(threshold)
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
    settings = GateSettings(samples=samples, temperature=temperature, seed=seed, max_new_tokens=max_new_tokens)
    labels = gate_labels(cleaned, model, settings, context=context, template=template, progress=progress)
    if warn and context is None and template is None:
        warn_if_weak(model.info, settings, threshold, min_share)
    greedy = samples == 1
    return [
        decide_retrieval(drawn, threshold, min_share, question=question, greedy=greedy)
        for question, drawn in zip(cleaned, labels, strict=True)
    ]


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
    warn: bool = True,
) -> GateDecision:
    """Classify ``question`` and decide whether to retrieve before answering it (``warn``: see :func:`recency_gate_many`)."""
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
        warn=warn,
    )[0]


def read_gate_questions(path: Path) -> list[str]:
    """Questions from a text file (one per line) or JSONL (one object with a "question" field per line); ``-``
    reads standard input.

    Blank lines and, in text files, lines starting with ``#`` are skipped.
    """
    return read_questions(path)
