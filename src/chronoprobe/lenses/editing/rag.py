"""Retrieval-augmented prompts: the weights stay as they are, the answer is put in the context.

Three variants, as DyKnow's Tables 3, 7 and 8:

- ``rag-gold``: the fact's gold passage;
- ``rag-retrieved``: the top-4 chunks retrieved by the question, joined by a blank line;
- ``rag-noisy``: a gold passage from another domain, a newline, then the fact's gold passage.

Each builds a :class:`~chronoprobe.models.base.Prompt` (chat messages plus a text fallback), so it
runs on every backend. Facts without a gold passage get None for all three variants (the caller
reports them as "no passage", outside the rates), so the three variants cover the same facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.lenses.editing.passages import gold_passage, noisy_passages
from chronoprobe.lenses.editing.prompts import DEFAULT_PROMPTS, EditingPrompts
from chronoprobe.lenses.editing.retrieval import PassageRetriever
from chronoprobe.models.base import Prompt

RagMethod = Literal["rag-gold", "rag-retrieved", "rag-noisy"]
RAG_METHODS: tuple[RagMethod, ...] = ("rag-gold", "rag-retrieved", "rag-noisy")


class ContextPrompt(BaseModel):
    """A prompt with a context, and where the context came from (for the report)."""

    model_config = ConfigDict(frozen=True)

    prompt: Prompt
    context: str
    sources: tuple[str, ...]
    """Fact ids of the passages in the context, in context order."""


def gold_prompt(context: str, question: str, prompts: EditingPrompts = DEFAULT_PROMPTS) -> Prompt:
    """The gold/noisy prompt around any context."""
    return Prompt.chat(
        prompts.rag_gold_chat.format(context=context, question=question),
        fallback_text=prompts.rag_gold_text.format(context=context, question=question),
    )


def retrieved_prompt(chunks: Sequence[str], question: str, prompts: EditingPrompts = DEFAULT_PROMPTS) -> Prompt:
    context = "\n\n".join(chunks)
    return Prompt.chat(
        prompts.rag_retrieved_chat.format(context=context, question=question),
        fallback_text=prompts.rag_retrieved_text.format(context=context, question=question),
    )


def rag_gold(fact_id: str, question: str, prompts: EditingPrompts = DEFAULT_PROMPTS) -> ContextPrompt | None:
    passage = gold_passage(fact_id)
    if passage is None:
        return None
    return ContextPrompt(prompt=gold_prompt(passage.text, question, prompts), context=passage.text, sources=(fact_id,))


def rag_noisy(
    fact_id: str, question: str, contexts: dict[str, str], prompts: EditingPrompts = DEFAULT_PROMPTS
) -> ContextPrompt | None:
    """``contexts`` from :func:`chronoprobe.lenses.editing.passages.noisy_passages` (drawn once for the whole fact set)."""
    context = contexts.get(fact_id)
    if context is None:
        return None
    return ContextPrompt(prompt=gold_prompt(context, question, prompts), context=context, sources=(fact_id,))


def rag_retrieved(
    question: str, retriever: PassageRetriever, prompts: EditingPrompts = DEFAULT_PROMPTS
) -> ContextPrompt:
    hits = retriever.retrieve(question)
    chunks = [hit.chunk.text for hit in hits]
    return ContextPrompt(
        prompt=retrieved_prompt(chunks, question, prompts),
        context="\n\n".join(chunks),
        sources=tuple(hit.chunk.fact_id for hit in hits),
    )


class RagBuilder:
    """One RAG variant over a fact set: ``build(record, question)`` per question asked."""

    def __init__(
        self,
        method: RagMethod,
        records: Sequence[EditRecord],
        *,
        prompts: EditingPrompts = DEFAULT_PROMPTS,
        retriever: PassageRetriever | None = None,
        seed: int = 42,
    ) -> None:
        if method not in RAG_METHODS:
            raise ValueError(f"unknown RAG method {method!r}")
        self.method = method
        self.prompts = prompts
        self.seed = seed
        self._noisy = noisy_passages(records, seed) if method == "rag-noisy" else {}
        if method == "rag-retrieved" and retriever is None:
            retriever = PassageRetriever()
        self.retriever = retriever

    def describe(self) -> dict[str, object]:
        info: dict[str, object] = {"method": self.method}
        if self.method == "rag-noisy":
            info["seed"] = self.seed
        if self.retriever is not None and self.method == "rag-retrieved":
            info["retriever"] = self.retriever.describe()
        return info

    def build(self, record: EditRecord | str, question: str) -> ContextPrompt | None:
        """The prompt for ``question`` about ``record``'s fact; None when the fact has no gold passage."""
        fid = record.fact_id if isinstance(record, EditRecord) else record
        if self.method == "rag-gold":
            return rag_gold(fid, question, self.prompts)
        if self.method == "rag-noisy":
            return rag_noisy(fid, question, self._noisy, self.prompts)
        if gold_passage(fid) is None:
            return None
        assert self.retriever is not None
        return rag_retrieved(question, self.retriever, self.prompts)
