"""Route questions with the trained router: the embedded MiniLM's embeddings plus TF-IDF, a softmax over the
twelve recency classes, and the retrieval decision at a threshold and a probability cut-off."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from chronoprobe.datasets.recency_taxonomy import RecencyClass, parse_label
from chronoprobe.errors import ConfigError
from chronoprobe.router.decision import GateDecision, decide_from_probabilities
from chronoprobe.router.model import RouterWeights, load_weights

if TYPE_CHECKING:
    from chronoprobe.judges.embedding import Embedder

DEFAULT_THRESHOLD = RecencyClass.A_YEAR
DEFAULT_CUT_OFF = 0.5


def checked_threshold(threshold: RecencyClass | str) -> RecencyClass:
    if isinstance(threshold, RecencyClass):
        return threshold
    parsed = parse_label(threshold)
    if parsed is None:
        raise ConfigError("--threshold", f"{threshold!r} is not a recency class (e.g. A-Few-Months, A-Year)")
    return parsed


def checked_cut_off(cut_off: float) -> float:
    if not 0 < cut_off <= 1:
        raise ConfigError("--min-share", f"the probability cut-off must be in (0, 1], got {cut_off}")
    return cut_off


def checked_questions(questions: Sequence[str]) -> list[str]:
    if isinstance(questions, str):
        questions = [questions]
    cleaned = [str(q).strip() for q in questions]
    if not cleaned:
        raise ConfigError("questions", "none given")
    for number, question in enumerate(cleaned, start=1):
        if not question:
            raise ConfigError("question" if len(cleaned) == 1 else f"question {number}", "is empty")
    return cleaned


class Router:
    """The trained router: its weights (default: shipped) and the embedding model, loaded on first use."""

    def __init__(self, weights: Path | RouterWeights | None = None, *, embedder: Embedder | None = None) -> None:
        self.weights = weights if isinstance(weights, RouterWeights) else load_weights(weights)
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from chronoprobe.judges.embedding import Embedder  # deferred: torch and transformers

            self._embedder = Embedder()
        if self._embedder.model_id != self.weights.embedding_model:
            raise ConfigError(
                "--weights", f"trained on {self.weights.embedding_model}, but the embedder is {self._embedder.model_id}"
            )
        return self._embedder

    def probabilities(self, questions: Sequence[str]) -> np.ndarray:
        """P(class) for each question: rows in the order given, columns the twelve classes, fastest first."""
        texts = list(questions)
        return self.weights.probabilities(self.weights.features(self.embedder.embed(texts), texts))

    def route(
        self,
        questions: Sequence[str],
        threshold: RecencyClass | str = DEFAULT_THRESHOLD,
        min_share: float = DEFAULT_CUT_OFF,
    ) -> list[GateDecision]:
        """One decision per question: retrieve when P(answer changes within ``threshold``) >= ``min_share``."""
        limit, cut_off, cleaned = checked_threshold(threshold), checked_cut_off(min_share), checked_questions(questions)
        return [
            decide_from_probabilities(question, row, limit, cut_off)
            for question, row in zip(cleaned, self.probabilities(cleaned), strict=True)
        ]


_LOADED: dict[Path | None, Router] = {}
"""Routers loaded by :func:`route`, by weights folder: the embedding model loads once per process."""


def route(
    questions: str | Sequence[str],
    *,
    threshold: RecencyClass | str = DEFAULT_THRESHOLD,
    min_share: float = DEFAULT_CUT_OFF,
    weights: str | Path | None = None,
) -> list[GateDecision]:
    """Route questions with the trained router (``chronoprobe.route``; ``chronoprobe recency route``).

    One :class:`~chronoprobe.router.decision.GateDecision` per question, the record ``recency gate`` writes:
    the predicted class, the probability of every class (``distribution``), P(the answer changes within
    ``threshold``) (``share_within_threshold``), ``retrieve`` and the cut-off used (``min_share``). ``weights``:
    a folder written by ``scripts/train_router.py --out`` (default: the shipped weights).
    """
    folder = Path(weights).expanduser().resolve() if weights is not None else None
    router = _LOADED.get(folder)
    if router is None:
        router = _LOADED[folder] = Router(folder)
    return router.route(checked_questions(questions), threshold, min_share)
