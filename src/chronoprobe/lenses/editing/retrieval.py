"""Top-k passage retrieval for ``rag-retrieved``.

DyKnow split its corpus with LangChain's ``RecursiveCharacterTextSplitter(chunk_size=1000,
chunk_overlap=200)``, embedded the chunks and took the 4 nearest by L2 distance. We do the same
with our own splitter (:func:`split_text`, same rules) and the packaged MiniLM. One difference:
DyKnow loaded its whole corpus file as one document, so a chunk could join neighbouring
paragraphs; we split each passage on its own, so every chunk comes from exactly one passage.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict

from chronoprobe.judges.embedding import Embedder
from chronoprobe.lenses.editing.passages import Passage, retrieval_corpus

if TYPE_CHECKING:
    from chronoprobe.cache import CallCache
SEPARATORS = ("\n\n", "\n", " ", "")
CHUNK_SIZE = 1000
CHUNK_OVERLAP = 200
TOP_K = 4


def _pieces(text: str, separator: str) -> list[str]:
    """Split on ``separator``, keeping it at the start of the piece that follows it; no empty pieces."""
    if separator == "":
        return list(text)
    parts = re.split(f"({re.escape(separator)})", text)
    pieces = [parts[0]] + [parts[i] + parts[i + 1] for i in range(1, len(parts) - 1, 2)]
    return [piece for piece in pieces if piece]


def _merge(pieces: Sequence[str], size: int, overlap: int) -> list[str]:
    """Greedily pack consecutive pieces into chunks of at most ``size`` characters.

    When a chunk is full, the next one starts with the tail of its pieces that fits in ``overlap``
    characters (and leaves room for the incoming piece).
    """
    chunks: list[str] = []
    window: list[str] = []
    length = 0
    for piece in pieces:
        if window and length + len(piece) > size:
            chunk = "".join(window).strip()
            if chunk:
                chunks.append(chunk)
            while window and (length > overlap or length + len(piece) > size):
                length -= len(window.pop(0))
        window.append(piece)
        length += len(piece)
    chunk = "".join(window).strip()
    if chunk:
        chunks.append(chunk)
    return chunks


def split_text(
    text: str,
    chunk_size: int = CHUNK_SIZE,
    chunk_overlap: int = CHUNK_OVERLAP,
    separators: Sequence[str] = SEPARATORS,
) -> list[str]:
    """Recursive character splitting: the coarsest separator present first, finer ones for pieces still too long."""
    separator: str = separators[-1]
    finer: tuple[str, ...] = ()
    for index, candidate in enumerate(separators):
        if candidate == "" or candidate in text:
            separator, finer = candidate, tuple(separators[index + 1 :])
            break
    chunks: list[str] = []
    short: list[str] = []
    for piece in _pieces(text, separator):
        if len(piece) < chunk_size:
            short.append(piece)
            continue
        chunks.extend(_merge(short, chunk_size, chunk_overlap))
        short = []
        chunks.extend(split_text(piece, chunk_size, chunk_overlap, finer) if finer else [piece])
    chunks.extend(_merge(short, chunk_size, chunk_overlap))
    return chunks


class Chunk(BaseModel):
    """A piece of one corpus passage."""

    model_config = ConfigDict(frozen=True)

    text: str
    passage: int
    """Index of its passage in the retriever's corpus."""
    fact_id: str
    """The fact whose gold passage it comes from (the first such fact when several share the text)."""


class Hit(BaseModel):
    model_config = ConfigDict(frozen=True)

    chunk: Chunk
    distance: float
    """L2 distance between the normalised embeddings (smaller is closer; same order as cosine)."""


class PassageRetriever:
    """MiniLM top-k over chunked passages (the shipped retrieval corpus unless others are given)."""

    def __init__(
        self,
        passages: Sequence[Passage] | None = None,
        *,
        embedder: Embedder | None = None,
        cache: CallCache | None = None,
        k: int = TOP_K,
        chunk_size: int = CHUNK_SIZE,
        chunk_overlap: int = CHUNK_OVERLAP,
    ) -> None:
        if embedder is None:
            embedder = Embedder(cache=cache)
        self.passages = list(passages) if passages is not None else retrieval_corpus()
        self.embedder = embedder
        self.k = k
        self.chunks = [
            Chunk(text=text, passage=index, fact_id=passage.fact_id)
            for index, passage in enumerate(self.passages)
            for text in split_text(passage.text, chunk_size, chunk_overlap)
        ]
        self._vectors: np.ndarray | None = None

    def describe(self) -> dict[str, object]:
        return {
            "embedding": self.embedder.model_id,
            "k": self.k,
            "passages": len(self.passages),
            "chunks": len(self.chunks),
        }

    def _index(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = self.embedder.embed([chunk.text for chunk in self.chunks]).astype(np.float64)
        return self._vectors

    def retrieve(self, question: str, k: int | None = None) -> list[Hit]:
        """The ``k`` nearest chunks, nearest first; equal distances keep corpus order."""
        return self.retrieve_many([question], k)[0]

    def retrieve_many(self, questions: Sequence[str], k: int | None = None) -> list[list[Hit]]:
        if not questions:
            return []
        top = self.k if k is None else k
        index = self._index()
        queries = self.embedder.embed(list(questions)).astype(np.float64)
        results: list[list[Hit]] = []
        for query in queries:
            distance = np.sqrt(np.maximum(((index - query) ** 2).sum(axis=1), 0.0))
            order = np.argsort(distance, kind="stable")[:top]
            results.append([Hit(chunk=self.chunks[i], distance=float(distance[i])) for i in order])
        return results
