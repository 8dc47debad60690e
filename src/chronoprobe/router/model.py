"""The router's weights and its prediction: a softmax over the twelve recency classes.

A folder of weights holds ``router.json`` (the classes, the n-gram vocabulary and how the features are
scaled) and three ``.npy`` arrays (``coef``, ``intercept``, ``idf``); ``manifest.json`` beside them says
how they were trained. ``.npy`` files, unlike ``.npz`` archives, carry no time stamp, so training twice
writes the same bytes. Reading them needs numpy only (no pickles).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chronoprobe.datasets.recency_taxonomy import RecencyClass
from chronoprobe.errors import ConfigError
from chronoprobe.io import write_text_atomic
from chronoprobe.router.features import tfidf

SETTINGS_FILE = "router.json"
MANIFEST_FILE = "manifest.json"
OOF_FILE = "out_of_fold.json"
ARRAYS = ("coef", "intercept", "idf")


def shipped_weights() -> Path:
    """The folder of the weights shipped in the package (trained on all of RecencyQA)."""
    return Path(__file__).resolve().parent.parent / "data" / "router"


@dataclass(frozen=True)
class RouterWeights:
    """A trained router: class weights over [scaled embedding, scaled TF-IDF] features."""

    classes: tuple[RecencyClass, ...]
    vocabulary: tuple[str, ...]
    longest_ngram: int
    embedding_scale: float
    tfidf_scale: float
    embedding_model: str
    coef: np.ndarray
    """(classes, embedding dimensions + vocabulary) weights."""
    intercept: np.ndarray
    idf: np.ndarray

    @property
    def index(self) -> dict[str, int]:
        return {term: position for position, term in enumerate(self.vocabulary)}

    def features(self, embeddings: np.ndarray, texts: list[str]) -> np.ndarray:
        """The feature rows: each embedding and each text's TF-IDF row, scaled and side by side."""
        words = tfidf(texts, self.index, self.idf, self.longest_ngram)
        return np.hstack([embeddings.astype(np.float64) * self.embedding_scale, words * self.tfidf_scale])

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """P(class | question) for each feature row: softmax(features @ coef.T + intercept)."""
        return softmax(features @ self.coef.T + self.intercept)

    def settings(self) -> dict[str, Any]:
        return {
            "classes": [c.label for c in self.classes],
            "embedding_model": self.embedding_model,
            "embedding_scale": self.embedding_scale,
            "tfidf_scale": self.tfidf_scale,
            "longest_ngram": self.longest_ngram,
            "vocabulary": list(self.vocabulary),
        }


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax, shifted by each row's maximum so large logits do not overflow."""
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    out: np.ndarray = shifted / shifted.sum(axis=1, keepdims=True)
    return out


def save_weights(folder: Path, weights: RouterWeights) -> None:
    """Write the weights into ``folder`` (created if missing); float64 arrays, as trained."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(weights.settings(), indent=1, ensure_ascii=False) + "\n"
    write_text_atomic(folder / SETTINGS_FILE, text)
    for name in ARRAYS:
        np.save(folder / f"{name}.npy", np.ascontiguousarray(getattr(weights, name), dtype=np.float64))


def load_weights(folder: Path | None = None) -> RouterWeights:
    """The weights in ``folder`` (default: the shipped ones); a ConfigError naming what is missing or wrong."""
    folder = shipped_weights() if folder is None else Path(folder)
    where = f"--weights {folder}"
    if not folder.is_dir():
        raise ConfigError(where, "no such folder" if not folder.exists() else "is not a folder")
    missing = [n for n in (SETTINGS_FILE, *(f"{a}.npy" for a in ARRAYS)) if not (folder / n).is_file()]
    if missing:
        raise ConfigError(
            where,
            f"holds no router weights (missing {', '.join(missing)}); write them with "
            "scripts/train_router.py --out DIR",
        )
    try:
        settings = json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8"))
        arrays = {name: np.load(folder / f"{name}.npy", allow_pickle=False) for name in ARRAYS}
        weights = RouterWeights(
            classes=tuple(RecencyClass.parse(label) for label in settings["classes"]),
            vocabulary=tuple(settings["vocabulary"]),
            longest_ngram=int(settings["longest_ngram"]),
            embedding_scale=float(settings["embedding_scale"]),
            tfidf_scale=float(settings["tfidf_scale"]),
            embedding_model=str(settings["embedding_model"]),
            **arrays,
        )
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise ConfigError(where, f"unreadable router weights ({type(exc).__name__}: {exc})") from None
    _check_shapes(weights, where)
    return weights


def _check_shapes(weights: RouterWeights, where: str) -> None:
    classes, width = len(weights.classes), weights.coef.shape[-1]
    if (
        weights.coef.ndim != 2
        or weights.coef.shape[0] != classes
        or weights.intercept.shape != (classes,)
        or weights.idf.shape != (len(weights.vocabulary),)
        or width <= len(weights.vocabulary)
    ):
        raise ConfigError(where, "the router's arrays do not fit together (coef, intercept, idf, vocabulary)")


def measured_figures(folder: Path | None = None) -> dict[str, dict[str, float]] | None:
    """The grouped-CV figures in the manifest beside the weights (None: no manifest, or none readable)."""
    path = (shipped_weights() if folder is None else Path(folder)) / MANIFEST_FILE
    try:
        found = json.loads(path.read_text(encoding="utf-8")).get("grouped_cv")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def question_key(question: str) -> str:
    """A question's short fingerprint: the first 12 hex digits of the SHA-256 of its stripped text."""
    return hashlib.sha256(question.strip().encode("utf-8")).hexdigest()[:12]


def out_of_fold_predictions(folder: Path | None = None) -> dict[str, tuple[int, str]]:
    """The router's grouped-CV prediction for each RecencyQA question it was trained on (q_id -> class index and
    question fingerprint): each from the fold that did not train on it, so the audit compares the audited model
    with the router on questions the router did not see. Empty when the weights carry none."""
    path = (shipped_weights() if folder is None else Path(folder)) / OOF_FILE
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["predictions"]
        return {str(q): (int(row[0]), str(row[1])) for q, row in rows.items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return {}
