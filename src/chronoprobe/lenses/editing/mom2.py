"""Uncentred second moments of the MLP down-projection input ("mom2"), cached on disk.

MEMIT (and ROME with ``mom2_adjustment``) needs C = Σ x xᵀ / count over the down-projection
inputs x of every attended token of a text corpus (EasyEdit used 100,000 Wikipedia articles; any
corpus works, and the run records which one was used). The model runs only up to the deepest
layer asked for. Results are cached as ``.npz`` (keys ``count``, ``mom2``, plus ``documents``)
keyed by model and revision, corpus hash, module, dtype and document count.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict
from torch import nn

from chronoprobe import paths
from chronoprobe.errors import DataError
from chronoprobe.io import write_bytes_atomic
from chronoprobe.lenses.editing.architectures import Architecture, detect, max_positions, model_name
from chronoprobe.lenses.editing.hooks import model_device, pad_id, right_pad, run, trace, tune_threads

MAX_LENGTH = 1024
"""Documents are truncated to the model's positions or this many tokens, whichever is smaller."""
BATCH_TOKENS = 4096
"""Padded tokens per forward pass (documents are sorted by length and packed up to this)."""

Progress = Callable[[int, int], None]


class Corpus(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    path: str
    sha256: str
    texts: tuple[str, ...]

    def limited(self, documents: int) -> Corpus:
        """The first ``documents`` documents (the mom2_n_samples cap)."""
        return self.model_copy(update={"texts": self.texts[: max(1, documents)]})

    def describe(self) -> dict[str, Any]:
        """Identity for provenance and cache keys."""
        return {
            "corpus": self.name,
            "corpus_path": self.path,
            "corpus_sha256": self.sha256,
            "documents": len(self.texts),
        }


def load_corpus(path: Path) -> Corpus:
    """A ``.txt`` file (one document per non-empty line) or ``.jsonl`` (rows ``{"text": ...}``)."""
    where = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(where, f"cannot read the corpus ({exc.strerror or exc.__class__.__name__})") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(where, f"not UTF-8 (byte {exc.start})") from None
    suffix = path.suffix.lower()
    texts: list[str] = []
    if suffix == ".txt":
        texts = [line.strip() for line in text.splitlines() if line.strip()]
    elif suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{where} line {number}", f"not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                raise DataError(f"{where} line {number}", 'expected an object with a string "text"')
            if row["text"].strip():
                texts.append(row["text"])
    else:
        raise DataError(where, 'a corpus is a .txt (one document per line) or .jsonl ({"text": ...} rows) file')
    if not texts:
        raise DataError(where, "the corpus has no documents")
    return Corpus(name=path.stem, path=where, sha256=hashlib.sha256(data).hexdigest(), texts=tuple(texts))


class SecondMoments(Protocol):
    def matrix(self, layer: int) -> torch.Tensor:
        """C at ``layer`` as a float32 [d_in, d_in] tensor."""
        ...


class Mom2Record(BaseModel):
    """Provenance of one layer's statistics."""

    model_config = ConfigDict(frozen=True)

    module: str
    corpus: str
    corpus_sha256: str
    documents: int
    tokens: int
    cache_file: str
    from_cache: bool


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


class Mom2Stats:
    """Second moments of one model over one corpus, per layer: computed once, then read from disk."""

    def __init__(
        self,
        model: nn.Module,
        tokenizer: Any,
        corpus: Corpus,
        *,
        model_id: str,
        revision: str,
        n_samples: int = 100000,
        cache_dir: Path | None = None,
        progress: Progress | None = None,
        arch: Architecture | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.corpus = corpus
        self.arch = arch or detect(model, model_id)
        self.documents = corpus.texts[:n_samples]
        self.dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
        root = cache_dir or paths.home() / "editing" / "mom2"
        self.folder = root / f"{_slug(model_id)}@{_slug(revision)}" / f"{_slug(corpus.name)}-{corpus.sha256[:16]}"
        self.progress = progress
        self.records: dict[int, Mom2Record] = {}
        self._matrices: dict[int, torch.Tensor] = {}

    def describe(self) -> dict[str, Any]:
        """Provenance of every layer prepared so far (corpus, documents, tokens, cache files)."""
        return {
            "corpus": self.corpus.name,
            "corpus_sha256": self.corpus.sha256,
            "documents": len(self.documents),
            "tokens": max((r.tokens for r in self.records.values()), default=0),
            "layers": {r.module: r.model_dump(mode="json") for _, r in sorted(self.records.items())},
        }

    def cache_file(self, layer: int) -> Path:
        module = self.arch.rewrite_name(layer)
        return self.folder / f"{module}_{self.dtype}_mom2_{len(self.documents)}.npz"

    def matrix(self, layer: int) -> torch.Tensor:
        self.prepare([layer])
        return self._matrices[layer]

    def prepare(self, layers: Sequence[int]) -> None:
        """Load or compute every layer in ``layers`` (the missing ones in one pass over the corpus)."""
        missing = [layer for layer in dict.fromkeys(layers) if layer not in self._matrices and not self._load(layer)]
        if missing:
            self._compute(missing)

    def _load(self, layer: int) -> bool:
        path = self.cache_file(layer)
        if not path.is_file():
            return False
        try:
            with np.load(path) as data:
                count = int(data["count"])
                matrix = np.asarray(data["mom2"], dtype=np.float32)
                documents = int(data["documents"]) if "documents" in data.files else len(self.documents)
        except (OSError, ValueError, KeyError):  # unreadable or partial: compute it again
            return False
        self._matrices[layer] = torch.from_numpy(matrix)
        self.records[layer] = self._record(layer, documents, count, from_cache=True)
        return True

    def _record(self, layer: int, documents: int, tokens: int, *, from_cache: bool) -> Mom2Record:
        return Mom2Record(
            module=self.arch.rewrite_name(layer),
            corpus=self.corpus.name,
            corpus_sha256=self.corpus.sha256,
            documents=documents,
            tokens=tokens,
            cache_file=str(self.cache_file(layer)),
            from_cache=from_cache,
        )

    def _batches(self) -> list[list[list[int]]]:
        limit = min(max_positions(self.model, self.arch), MAX_LENGTH)
        encoded = [
            [int(i) for i in ids][:limit]
            for ids in self.tokenizer(list(self.documents), add_special_tokens=True)["input_ids"]
        ]
        encoded = sorted((ids for ids in encoded if ids), key=len)
        batches: list[list[list[int]]] = []
        for ids in encoded:
            # sorted ascending, so the row just added is the widest in its batch
            if batches and len(ids) * (len(batches[-1]) + 1) <= max(BATCH_TOKENS, len(ids)):
                batches[-1].append(ids)
            else:
                batches.append([ids])
        return batches

    def _compute(self, layers: list[int]) -> None:
        modules = {layer: self.arch.rewrite_name(layer) for layer in layers}
        deepest = modules[max(layers)]
        sums = {layer: torch.zeros((0,), dtype=torch.float64) for layer in layers}
        count = 0
        device = model_device(self.model)
        batches = self._batches()
        done = 0
        was_training = self.model.training
        self.model.eval()
        try:
            for rows in batches:
                tune_threads(self.model)
                batch = right_pad(rows, pad_id(self.tokenizer), device)
                with torch.no_grad(), trace(self.model, inputs=list(modules.values()), stop_after=deepest) as record:
                    run(self.model, batch)
                mask = batch.attention_mask.bool()
                for layer, name in modules.items():
                    x = record.inputs[name][mask].float()
                    product = (x.T @ x).double().cpu()
                    sums[layer] = product if sums[layer].numel() == 0 else sums[layer] + product
                count += int(mask.sum())
                done += len(rows)
                if self.progress is not None:
                    self.progress(done, len(self.documents))
        finally:
            self.model.train(was_training)
        for layer in layers:
            matrix = (sums[layer] / count).float()
            buffer = io.BytesIO()
            np.savez(
                buffer,
                count=np.array(count, dtype=np.int64),
                mom2=matrix.numpy(),
                documents=np.array(len(self.documents), dtype=np.int64),
            )
            write_bytes_atomic(self.cache_file(layer), buffer.getvalue())
            self._matrices[layer] = matrix
            self.records[layer] = self._record(layer, len(self.documents), count, from_cache=False)


def second_moments(
    model: nn.Module,
    tokenizer: Any,
    arch: Architecture,
    layers: Sequence[int],
    corpus: Corpus,
    *,
    revision: str,
    model_id: str | None = None,
    n_samples: int = 100000,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> Mom2Stats:
    """Statistics for ``layers``, loaded from the cache or computed now in one pass.

    ``model_id`` names the cache folder (default: the model's ``name_or_path``); pass the
    backend's model id so that the same model loaded from another folder reuses the file.
    """
    stats = Mom2Stats(
        model,
        tokenizer,
        corpus,
        model_id=model_id or model_name(model),
        revision=revision,
        n_samples=n_samples,
        cache_dir=cache_dir,
        progress=progress,
        arch=arch,
    )
    stats.prepare(layers)
    return stats
