"""IKE (in-context knowledge editing): demonstrations of facts being updated, then the question.

The demonstration pool is built from the edit records themselves, as DyKnow did (notes §2.5). Each
fact gives three demos, all with the fact's ``generic`` question + target as the "new fact":

- copy: the new fact repeated;
- update: the edit prompt completed with the target;
- retain: the generic question + target of a fact from another domain (drawn with a seeded
  ``random.Random``; DyKnow's draw was unseeded).

The k = 16 demos nearest to a query (MiniLM, dot product of normalised embeddings) come first,
best first, then the final block. Two variants:

- ``ike``, what the IKE paper and DyKnow's text describe: the query is the edit prompt + target,
  the copy demo of the new fact (edit prompt form) is appended to the demos, and the final block
  states the new fact before the question;
- ``ike-null``, what DyKnow actually ran for Tables 3 and 7 (``IKE_REALISTIC_NULL``): the query is
  the question itself and the final block says "New Fact: Not Available". Since the pool holds
  every edited fact, the asked fact's own demos (with its new target) are usually retrieved: the
  answer leaks in through the demos, so this is in-context retrieval from an edit memory rather
  than editing without the fact (notes §6.1). :attr:`IkePrompt.own_demos` counts the leak.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.judges.embedding import Embedder
from chronoprobe.lenses.editing.prompts import DEFAULT_PROMPTS, EditingPrompts
from chronoprobe.models.base import Prompt

if TYPE_CHECKING:
    from chronoprobe.cache import CallCache
IkeVariant = Literal["ike", "ike-null"]
IKE_VARIANTS: tuple[IkeVariant, ...] = ("ike", "ike-null")
TOP_K = 16


def demo_text(fact: str, prompt: str) -> str:
    """The demonstration data format (IKE's): the fact, then the completed prompt, then a blank line."""
    return f"New Fact: {fact}\nPrompt: {prompt}\n\n"


class Demo(BaseModel):
    model_config = ConfigDict(frozen=True)

    fact_id: str
    """The fact whose "New Fact" line it carries."""
    kind: Literal["copy", "update", "retain"]
    text: str


def _generic(record: EditRecord) -> str:
    """The fact's generic question (the edit prompt when a record has none)."""
    return record.questions.get("generic", record.prompt)


def demonstration_pool(records: Sequence[EditRecord], seed: int = 42) -> list[Demo]:
    """Copy, update and retain demos per record, in record order.

    A record with no fact of another domain in ``records`` gets no retain demo. The retain draws
    follow the record order, one per record, from ``random.Random(seed)``.
    """
    rng = random.Random(seed)
    pool: list[Demo] = []
    for record in records:
        fact = f"{_generic(record)} {record.target}"
        pool.append(Demo(fact_id=record.fact_id, kind="copy", text=demo_text(fact, fact)))
        pool.append(
            Demo(fact_id=record.fact_id, kind="update", text=demo_text(fact, f"{record.prompt} {record.target}"))
        )
        others = [other for other in records if other.domain != record.domain]
        if others:
            other = rng.choice(others)
            retained = f"{_generic(other)} {other.target}"
            pool.append(Demo(fact_id=record.fact_id, kind="retain", text=demo_text(fact, retained)))
    return pool


class IkePrompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt: Prompt
    demos: tuple[str, ...]
    """The demonstrations in prompt order (best first)."""
    own_demos: int
    """How many retrieved pool demos are the asked fact's own (they carry its new target: the ``ike-null`` leak)."""


class IkeBuilder:
    """One IKE variant over a fact set: ``build(record, question)`` per question asked."""

    def __init__(
        self,
        variant: IkeVariant,
        records: Sequence[EditRecord],
        *,
        embedder: Embedder | None = None,
        cache: CallCache | None = None,
        k: int = TOP_K,
        seed: int = 42,
        prompts: EditingPrompts = DEFAULT_PROMPTS,
    ) -> None:
        if variant not in IKE_VARIANTS:
            raise ValueError(f"unknown IKE variant {variant!r}")
        if embedder is None:
            embedder = Embedder(cache=cache)
        self.variant = variant
        self.embedder = embedder
        self.k = k
        self.seed = seed
        self.prompts = prompts
        self.pool = demonstration_pool(records, seed)
        self._vectors: np.ndarray | None = None

    def describe(self) -> dict[str, object]:
        return {
            "variant": self.variant,
            "k": self.k,
            "seed": self.seed,
            "pool": len(self.pool),
            "embedding": self.embedder.model_id,
        }

    def retrieve(self, query: str) -> list[Demo]:
        """The ``k`` pool demos nearest to ``query`` (all of them when the pool is smaller), best first."""
        if not self.pool:
            return []
        if self._vectors is None:
            self._vectors = self.embedder.embed([demo.text for demo in self.pool]).astype(np.float64)
        query_vector = self.embedder.embed([query])[0].astype(np.float64)
        scores = self._vectors @ query_vector
        order = np.argsort(-scores, kind="stable")[: self.k]
        return [self.pool[i] for i in order]

    def build(self, record: EditRecord, question: str) -> IkePrompt:
        if self.variant == "ike":
            new_fact = f"{record.prompt} {record.target}"
            retrieved = self.retrieve(demo_text(new_fact, record.prompt))
            demos = [demo.text for demo in retrieved] + [demo_text(new_fact, new_fact)]
            final = self.prompts.ike_final.format(fact=new_fact, question=question)
        else:
            retrieved = self.retrieve(demo_text(f"{question} ", question))
            demos = [demo.text for demo in retrieved]
            final = self.prompts.ike_null_final.format(question=question)
        own = sum(demo.fact_id == record.fact_id for demo in retrieved)
        joined = "".join(demos)
        prompt = Prompt.chat(
            self.prompts.ike_chat.format(demos=joined, final=final),
            fallback_text=self.prompts.ike_text.format(demos=joined, final=final),
        )
        return IkePrompt(prompt=prompt, demos=tuple(demos), own_demos=own)
