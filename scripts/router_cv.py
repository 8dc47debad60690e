"""What ``train_router.py`` measures with: honest groups, the metrics, intervals over groups, baselines.

Groups join questions that must never straddle folds: near-duplicates (cosine of the MiniLM
embeddings at or above 0.95) and template families (the question with names and numbers masked, so
"Who is the head of state of France currently?" and "... of Peru currently?" are one family).
Every interval is a percentile bootstrap over these groups (resampling whole groups).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from chronoprobe.metrics import recency as m

NEAR_DUPLICATE = 0.95
RESAMPLES = 1000
SEED = 0
KEYWORDS = (
    "current",
    "currently",
    "latest",
    "now",
    "today",
    "this year",
    "this month",
    "this week",
    "recent",
    "recently",
    "so far",
    "as of",
)
"""The keyword rule's words: the plain-language markers of a question about the present (chosen before looking at
the data, from the issue's examples)."""

_NAME = re.compile(r"(?<!^)(?<![.?!] )\b[A-Z][\w'\-]*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SPACES = re.compile(r"\s+")


def masked(question: str) -> str:
    """The question's template: capitalised words after the first word become X, numbers 0, runs of X one X."""
    text = _NUMBER.sub("0", question.strip())
    text = _NAME.sub("X", text)
    text = re.sub(r"X(?:\s+(?:X|of|de|the|and|du|von|van|del|da|la|le))*\s+X", "X", text)
    return _SPACES.sub(" ", text).lower()


class _Union:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def groups(questions: Sequence[str], embeddings: np.ndarray) -> np.ndarray:
    """One group id per question: connected components of 'same template' and 'near-duplicate'."""
    union = _Union(len(questions))
    first: dict[str, int] = {}
    for i, question in enumerate(questions):
        union.join(first.setdefault(masked(question), i), i)
    similar = embeddings @ embeddings.T
    rows, cols = np.nonzero(np.triu(similar >= NEAR_DUPLICATE, k=1))
    for a, b in zip(rows.tolist(), cols.tolist(), strict=True):
        union.join(a, b)
    roots = [union.find(i) for i in range(len(questions))]
    ids = {root: number for number, root in enumerate(dict.fromkeys(roots))}
    return np.array([ids[r] for r in roots], dtype=np.int64)


def near_duplicate_pairs(embeddings: np.ndarray) -> int:
    similar = embeddings @ embeddings.T
    return int(np.triu(similar >= NEAR_DUPLICATE, k=1).sum())


# --- metrics of out-of-fold predictions ---------------------------------------------------------


def gate_truth(gold: np.ndarray, threshold: int) -> np.ndarray:
    return gold <= threshold


def macro_f1(gold: np.ndarray, pred: np.ndarray, classes: int = m.N_CLASSES) -> float:
    """Mean F1 over the classes seen in gold or predictions (as :func:`chronoprobe.metrics.recency.macro_f1`)."""
    counts = np.bincount(gold * classes + pred, minlength=classes * classes).reshape(classes, classes)
    hits, in_gold, in_pred = np.diag(counts), counts.sum(axis=1), counts.sum(axis=0)
    seen = (in_gold + in_pred) > 0
    return float(np.mean(2 * hits[seen] / (in_gold[seen] + in_pred[seen])))


def scores(gold: np.ndarray, pred: np.ndarray, within: np.ndarray, threshold: int, cut_off: float) -> dict[str, float]:
    """Accuracy, macro-F1, tolerant accuracy and the gate's balanced accuracy, recall and specificity."""
    truth, decided = gate_truth(gold, threshold), within >= cut_off
    recall = float((decided & truth).sum() / max(truth.sum(), 1))
    specificity = float((~decided & ~truth).sum() / max((~truth).sum(), 1))
    return {
        "accuracy": float(np.mean(gold == pred)),
        "macro_f1": macro_f1(gold, pred),
        "tolerant_accuracy": float(np.mean(np.abs(gold - pred) <= 1)),
        "gate_balanced_accuracy": (recall + specificity) / 2,
        "gate_recall": recall,
        "gate_specificity": specificity,
    }


def with_intervals(
    measure: Callable[[np.ndarray], dict[str, float]], group_ids: np.ndarray, *, resamples: int = RESAMPLES
) -> dict[str, dict[str, float]]:
    """Each figure of ``measure(all items)`` with its 95% percentile interval, resampling whole groups."""
    point = measure(np.arange(len(group_ids)))
    members = [np.flatnonzero(group_ids == g) for g in range(int(group_ids.max()) + 1)]
    rng = np.random.default_rng(SEED)
    draws: dict[str, list[float]] = {name: [] for name in point}
    for _ in range(resamples):
        chosen = rng.integers(0, len(members), len(members))
        for name, value in measure(np.concatenate([members[g] for g in chosen])).items():
            draws[name].append(value)
    return {
        name: {
            "value": round(value, 4),
            "low": round(float(np.percentile(draws[name], 2.5)), 4),
            "high": round(float(np.percentile(draws[name], 97.5)), 4),
        }
        for name, value in point.items()
    }


def calibration_error(probability: np.ndarray, outcome: np.ndarray, bins: int = 10) -> tuple[float, list[dict[str, float]]]:
    """Expected calibration error over equal-width bins, and each bin's mean forecast, rate and count."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    where = np.clip(np.digitize(probability, edges[1:-1]), 0, bins - 1)
    table, error = [], 0.0
    for b in range(bins):
        inside = where == b
        if not inside.any():
            continue
        forecast, rate = float(probability[inside].mean()), float(outcome[inside].mean())
        error += inside.sum() / len(probability) * abs(forecast - rate)
        table.append({"forecast": round(forecast, 4), "observed": round(rate, 4), "n": int(inside.sum())})
    return round(error, 4), table


def has_keyword(question: str) -> bool:
    text = " " + " ".join(re.findall(r"[a-z0-9]+", question.lower())) + " "
    return any(f" {word} " in text for word in KEYWORDS)
