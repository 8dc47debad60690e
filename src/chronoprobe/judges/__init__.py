"""Equivalence judges: ``exact``, ``embedding[:<model>]``, ``nli[:<hf id>]``."""

from __future__ import annotations

from dataclasses import dataclass

from chronoprobe.cache import CallCache
from chronoprobe.errors import ConfigError
from chronoprobe.judges.base import Judge, cluster_many, cluster_pairwise
from chronoprobe.judges.embedding import DEFAULT_THRESHOLD, EmbeddingJudge
from chronoprobe.judges.exact import ExactJudge
from chronoprobe.judges.nli import DEFAULT_NLI, NLIJudge, NLIModel

__all__ = ["Judge", "JudgeChoice", "cluster_many", "cluster_pairwise", "load_judge"]


@dataclass
class JudgeChoice:
    judge: Judge
    requested: str
    fallback_reason: str | None = None
    """Set when the requested judge could not be loaded and another was used instead."""

    @property
    def record(self) -> str:
        """One line for Provenance.judge: the judge actually used, and why if it is not the one asked for."""
        if self.fallback_reason:
            return f"{self.judge.name} (fallback: requested {self.requested} failed: {self.fallback_reason})"
        return self.judge.name


def load_judge(
    spec: str,
    *,
    cache: CallCache | None = None,
    device: str = "cpu",
    allow_fallback: bool = False,
    embedding_threshold: float | None = None,
) -> JudgeChoice:
    kind, _, target = spec.strip().partition(":")
    if kind == "exact" and not target:
        return JudgeChoice(ExactJudge(), spec)
    if kind == "embedding":
        threshold = DEFAULT_THRESHOLD if embedding_threshold is None else embedding_threshold
        return JudgeChoice(EmbeddingJudge(target or None, threshold=threshold, cache=cache, device=device), spec)
    if kind == "nli":
        model, _, revision = (target or DEFAULT_NLI).partition("@")
        try:
            return JudgeChoice(NLIJudge(NLIModel(model, revision=revision or "main", cache=cache, device=device)), spec)
        except ConfigError as exc:
            if not allow_fallback:
                raise ConfigError(
                    f"judge {spec!r}", f"{exc.problem}; pass --judge embedding, or --judge-fallback to allow it"
                ) from None
            choice = load_judge("embedding", cache=cache, device=device, embedding_threshold=embedding_threshold)
            return JudgeChoice(choice.judge, spec, fallback_reason=exc.problem)
    raise ConfigError(f"judge {spec!r}", "unknown judge; expected exact, embedding[:<model>] or nli[:<hf id>]")
