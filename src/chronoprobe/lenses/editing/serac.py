"""SERAC without its trained parts: an edit memory, a scope classifier and a counterfactual model.

DyKnow ran SERAC with checkpoints trained on zsRE (a distilbert scope classifier and a small
counterfactual model) that were never released (notes §2.4, §6.7). This stand-in keeps SERAC's
structure and replaces the trained parts:

- memory: one entry per edit, ``"{edit prompt} {target}"``;
- scope classifier: MiniLM cosine similarity between the question and each entry's key (the
  edit prompt, i.e. the entry without its target); a hit when the best similarity reaches
  :data:`SCOPE_THRESHOLD` (or, optionally, NLI entailment both ways between key and question);
- counterfactual model: by default the base model with the hit entry in its context; a model
  spec may be given instead (the caller loads it). On a miss the plain audit prompt goes to
  the base model.

:data:`SERAC_LABEL` says so in reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.errors import ConfigError
from chronoprobe.judges.embedding import Embedder
from chronoprobe.judges.nli import NLIModel
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.lenses.editing.prompts import DEFAULT_PROMPTS, EditingPrompts
from chronoprobe.lenses.outdated.prompts import CHAT_INSTRUCTION, audit_prompt
from chronoprobe.models.base import Prompt
from chronoprobe.models.hub import ensure_available

if TYPE_CHECKING:
    from chronoprobe.cache import CallCache
    from chronoprobe.knowledge.types import Fact

SERAC_LABEL = (
    "SERAC stand-in (not the paper's trained SERAC: the trained checkpoints are unavailable): "
    "MiniLM-similarity scope classifier with a fixed threshold, counterfactual = base model with the edit in its context"
)

SCOPE_THRESHOLD = 0.77
"""Cosine similarity (MiniLM) at or above which a question is in an edit's scope.

Chosen once, not per fact and not on any model's answers: :func:`choose_threshold` over the whole
shipped catalogue (130 facts, each with its generic question and 3 paraphrase templates, 520
questions). Each question's in-scope score is its best similarity to another question of its own
fact; its out-of-scope score is its best similarity to any question of the other 129 facts (as if
those were all in the memory). The threshold on a 0.01 grid that maximises Youden's J (true-positive
rate minus false-positive rate) is 0.77: TPR 0.97, FPR 0.47. MiniLM barely separates, say, the two
offices of one country, so false hits on unedited facts are common; the report counts them.
"""
NLI_THRESHOLD = 0.5
"""Entailment probability (both ways, the smaller counts) for the optional NLI scope classifier."""

BASE_WITH_CONTEXT = "base-with-context"


class SeracConfig(BaseModel):
    """Recorded in provenance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scope: str = "embedding"
    """``embedding`` (the packaged MiniLM), ``embedding:<model>`` or ``nli:<model>``."""
    threshold: float | None = Field(None, ge=0.0, le=1.0)
    """None = :data:`SCOPE_THRESHOLD` for an embedding scope, :data:`NLI_THRESHOLD` for NLI."""
    counterfactual: str = BASE_WITH_CONTEXT
    """``base-with-context`` or a model spec answering in-scope questions (given the entry in its context)."""
    label: str = SERAC_LABEL

    @model_validator(mode="after")
    def _resolve(self) -> SeracConfig:
        kind = self.scope.split(":", 1)[0]
        if kind not in ("embedding", "nli") or (kind == "nli" and ":" not in self.scope):
            raise ValueError(f"scope must be 'embedding', 'embedding:<model>' or 'nli:<model>', not {self.scope!r}")
        if self.threshold is None:
            object.__setattr__(self, "threshold", NLI_THRESHOLD if kind == "nli" else SCOPE_THRESHOLD)
        if not self.counterfactual.strip():
            raise ValueError("counterfactual must be 'base-with-context' or a model spec")
        return self

    @property
    def cutoff(self) -> float:
        assert self.threshold is not None
        return self.threshold


def check_scope_model(scope: str) -> None:
    """The model an ``nli:`` or ``embedding:`` scope names is a local folder, in the hub cache, or reachable.

    Checked before any model loads: otherwise a missing one fails only when SERAC* starts, after the
    methods before it have run.
    """

    _, _, model = scope.partition(":")
    if model and not Path(model).expanduser().is_dir():
        ensure_available(model, "main", f"--serac-scope {scope}")


class MemoryEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    fact_id: str
    key: str
    """The edit prompt: what questions are compared with."""
    text: str
    """``"{edit prompt} {target}"``: what the counterfactual model is shown."""


class Route(BaseModel):
    """The scope classifier's decision for one question."""

    model_config = ConfigDict(frozen=True)

    question: str
    hit: bool
    fact_id: str | None
    """The best memory entry's fact (also on a miss, for the report)."""
    entry: str | None
    similarity: float
    """Best score over the memory (cosine, or entailment probability for NLI)."""


class SeracPrompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    route: Route
    prompt: Prompt
    model: str | None
    """None: the base model answers; else the counterfactual model spec."""


def memory_entries(records: Sequence[EditRecord]) -> list[MemoryEntry]:
    return [MemoryEntry(fact_id=r.fact_id, key=r.prompt, text=f"{r.prompt} {r.target}") for r in records]


class Serac:
    """The edit memory over a batch of edits (all edits at once, as DyKnow's ``batch_editing``)."""

    def __init__(
        self,
        records: Sequence[EditRecord],
        config: SeracConfig | None = None,
        *,
        embedder: Embedder | None = None,
        nli: NLIModel | None = None,
        cache: CallCache | None = None,
        prompts: EditingPrompts = DEFAULT_PROMPTS,
        instruction: str = CHAT_INSTRUCTION,
    ) -> None:
        if not records:
            raise ConfigError("serac", "no edits to put in the memory")
        self.config = config or SeracConfig()
        self.memory = memory_entries(records)
        self.prompts = prompts
        self.instruction = instruction
        kind, _, model = self.config.scope.partition(":")
        self.embedder: Embedder | None = None
        self.nli: NLIModel | None = None
        if kind == "nli":
            if nli is None:
                nli = NLIModel(model, cache=cache)
            self.nli = nli
        else:
            if embedder is None:
                embedder = Embedder(model or None, cache=cache)
            self.embedder = embedder
        self._keys: np.ndarray | None = None

    def describe(self) -> dict[str, object]:
        scorer = self.embedder.model_id if self.embedder is not None else (self.nli.model_id if self.nli else None)
        return {
            **self.config.model_dump(),
            "threshold": self.config.cutoff,
            "scope_model": scorer,
            "memory": len(self.memory),
        }

    def _scores(self, questions: Sequence[str]) -> np.ndarray:
        """Shape (questions, memory)."""
        if self.nli is not None:
            keys = [entry.key for entry in self.memory]
            forward = [(key, q) for q in questions for key in keys]
            backward = [(q, key) for q in questions for key in keys]
            both = np.minimum(self.nli.entailment(forward), self.nli.entailment(backward))
            return np.asarray(both, dtype=np.float64).reshape(len(questions), len(keys))
        assert self.embedder is not None
        if self._keys is None:
            self._keys = self.embedder.embed([entry.key for entry in self.memory]).astype(np.float64)
        vectors = self.embedder.embed(list(questions)).astype(np.float64)
        scores: np.ndarray = vectors @ self._keys.T
        return scores

    def route(self, questions: Sequence[str]) -> list[Route]:
        if not questions:
            return []
        routes: list[Route] = []
        for question, row in zip(questions, self._scores(questions), strict=True):
            best = int(np.argmax(row))  # first of equal scores
            similarity = float(row[best])
            entry = self.memory[best]
            routes.append(
                Route(
                    question=question,
                    hit=similarity >= self.config.cutoff,
                    fact_id=entry.fact_id,
                    entry=entry.text,
                    similarity=similarity,
                )
            )
        return routes

    def build(self, questions: Sequence[str]) -> list[SeracPrompt]:
        """Route each question and give the prompt to send and which model answers it."""
        built: list[SeracPrompt] = []
        for route in self.route(questions):
            if not route.hit or route.entry is None:
                built.append(
                    SeracPrompt(route=route, prompt=audit_prompt(route.question, self.instruction), model=None)
                )
                continue
            prompt = Prompt.chat(
                self.prompts.serac_chat.format(memory=route.entry, question=route.question),
                fallback_text=self.prompts.serac_text.format(memory=route.entry, question=route.question),
            )
            model = None if self.config.counterfactual == BASE_WITH_CONTEXT else self.config.counterfactual
            built.append(SeracPrompt(route=route, prompt=prompt, model=model))
        return built


class ThresholdChoice(BaseModel):
    threshold: float
    true_positive_rate: float
    false_positive_rate: float
    positives: int
    negatives: int


def choose_threshold(facts: Sequence[Fact] | None = None, embedder: Embedder | None = None) -> ThresholdChoice:
    """How :data:`SCOPE_THRESHOLD` was chosen (see its docstring); ``facts`` default to the shipped catalogue."""
    if facts is None:
        facts = load_catalogue()
    if embedder is None:
        embedder = Embedder()
    texts: list[str] = []
    owner: list[int] = []
    for index, fact in enumerate(facts):
        questions = ([fact.generic] if fact.generic else []) + list(fact.templates)
        texts.extend(questions)
        owner.extend([index] * len(questions))
    vectors = embedder.embed(texts).astype(np.float64)
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -np.inf)
    ids = np.asarray(owner)
    same = ids[:, None] == ids[None, :]
    # Routing takes the best entry, so score each question by its best match, as in a full memory.
    positives = np.where(same, similarity, -np.inf).max(axis=1)
    negatives = np.where(same, -np.inf, similarity).max(axis=1)
    keep = np.isfinite(positives)  # a fact with a single question has no paraphrase to match
    positives = positives[keep]
    best, best_j = 0.0, -1.0
    for cut in np.round(np.arange(0.0, 1.0001, 0.01), 2):
        j = float((positives >= cut).mean()) - float((negatives >= cut).mean())
        if j > best_j:
            best, best_j = float(cut), j
    return ThresholdChoice(
        threshold=best,
        true_positive_rate=float((positives >= best).mean()),
        false_positive_rate=float((negatives >= best).mean()),
        positives=int(positives.size),
        negatives=int(negatives.size),
    )
