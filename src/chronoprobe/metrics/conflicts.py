"""DynamicQA-style metrics: ROUGE-L accuracy, Coherent Persuasion, semantic entropy,
stubborn/persuaded shares.

All functions are pure; the formulas are written out in ``docs/conflicts.md``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

ROUGE_THRESHOLD = 0.3


@lru_cache(maxsize=1)
def _scorer() -> Any:  # rouge-score has no type information
    from rouge_score import rouge_scorer  # deferred: rouge-score and nltk

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure (rouge-score, Porter stemmer on)."""
    return float(_scorer().score(reference, prediction)["rougeL"].fmeasure)


def is_correct(prediction: str, reference: str, threshold: float = ROUGE_THRESHOLD) -> bool:
    """Correct iff ROUGE-L F > threshold (strictly greater)."""
    return rouge_l(prediction, reference) > threshold


def accuracy(predictions: Sequence[str], references: Sequence[str], threshold: float = ROUGE_THRESHOLD) -> float:
    """Mean of 1[ROUGE-L(y_i, a_i) > threshold]; NaN for no items."""
    if len(predictions) != len(references):
        raise ValueError("predictions and references differ in length")
    if not predictions:
        return math.nan
    return sum(is_correct(p, r, threshold) for p, r in zip(predictions, references, strict=True)) / len(predictions)


def accuracy_with_context(
    outputs_original: Sequence[str],
    answers_original: Sequence[str],
    outputs_substitute: Sequence[str],
    answers_substitute: Sequence[str],
    threshold: float = ROUGE_THRESHOLD,
) -> float:
    """Eq. 4: 1/(2N) sum_i (1[R(y_i^o, a_o) > t] + 1[R(y_i^c, a_c) > t])."""
    n = len(outputs_original)
    if not (n == len(answers_original) == len(outputs_substitute) == len(answers_substitute)):
        raise ValueError("Eq. 4 needs four lists of the same length")
    if n == 0:
        return math.nan
    hits = sum(is_correct(y, a, threshold) for y, a in zip(outputs_original, answers_original, strict=True))
    hits += sum(is_correct(y, a, threshold) for y, a in zip(outputs_substitute, answers_substitute, strict=True))
    return hits / (2 * n)


def accuracy_without_context(
    outputs: Sequence[str], true_answers: Sequence[str], threshold: float = ROUGE_THRESHOLD
) -> float:
    """Corrected Eq. 5: 1/N sum_i 1[R(y_i, a_o) > t] (true answer only)."""
    return accuracy(outputs, true_answers, threshold)


def accuracy_without_context_original(
    outputs: Sequence[str],
    true_answers: Sequence[str],
    substitutes: Sequence[str],
    threshold: float = ROUGE_THRESHOLD,
) -> float:
    """The original code's buggy no-context accuracy (Eq. 4 applied to the no-context output):
    1/(2N) sum_i (1[R(y_i, a_o) > t] + 1[R(y_i, a_c) > t]). Kept only to reproduce old numbers."""
    return accuracy_with_context(outputs, true_answers, outputs, substitutes, threshold)


# --- Coherent Persuasion -------------------------------------------------------------


def cluster_distribution(member_distributions: Sequence[np.ndarray]) -> np.ndarray:
    """P_g = mean of the members' per-sample distributions p_s (float64)."""
    if not member_distributions:
        raise ValueError("a cluster needs at least one member")
    mean: np.ndarray = np.mean(np.stack([np.asarray(d, dtype=np.float64) for d in member_distributions]), axis=0)
    return mean


def kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p || q) = sum_v p_v ln(p_v / q_v), natural log, in float64.

    Zeros, as in the original's masked sum of finite terms: a term with p_v = 0
    contributes 0, and a term with p_v > 0 but q_v = 0 (infinite) is dropped,
    i.e. also contributes 0. No smoothing, no renormalisation.
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if p.shape != q.shape:
        raise ValueError(f"distributions differ in shape: {p.shape} vs {q.shape}")
    keep = (p > 0) & (q > 0)
    return float(np.sum(p[keep] * (np.log(p[keep]) - np.log(q[keep]))))


def coherent_persuasion(context_clusters: Sequence[np.ndarray], no_context_clusters: Sequence[np.ndarray]) -> float:
    """CP = 1/(U*R) sum_{a in context clusters} sum_{b in no-context clusters} KL(P_a || P_b).

    Arguments are the cluster distributions (see :func:`cluster_distribution`).
    """
    if not context_clusters or not no_context_clusters:
        return math.nan
    total = sum(kl_divergence(a, b) for a in context_clusters for b in no_context_clusters)
    return total / (len(context_clusters) * len(no_context_clusters))


def coherent_persuasion_from_samples(
    context_distributions: Sequence[np.ndarray],
    context_cluster_ids: Sequence[int],
    no_context_distributions: Sequence[np.ndarray],
    no_context_cluster_ids: Sequence[int],
) -> float:
    """CP from per-sample distributions and each sample's cluster id in its own condition."""
    return coherent_persuasion(
        _group_distributions(context_distributions, context_cluster_ids),
        _group_distributions(no_context_distributions, no_context_cluster_ids),
    )


def _group_distributions(distributions: Sequence[np.ndarray], cluster_ids: Sequence[int]) -> list[np.ndarray]:
    if len(distributions) != len(cluster_ids):
        raise ValueError("one cluster id per sample is needed")
    groups: dict[int, list[np.ndarray]] = {}
    for dist, cid in zip(distributions, cluster_ids, strict=True):
        groups.setdefault(int(cid), []).append(dist)
    return [cluster_distribution(groups[c]) for c in sorted(groups)]


# --- Semantic entropy -----------------------------------------------------------------


def length_normalised_loglik(token_logprobs: Sequence[float]) -> float:
    """l_i = (1/T) sum_t log p(token_t): mean log-probability of the generated tokens (EOS included)."""
    if not token_logprobs:
        raise ValueError("a generation with no tokens has no likelihood")
    return float(sum(token_logprobs) / len(token_logprobs))


def semantic_entropy(logliks: Sequence[float], cluster_ids: Sequence[int]) -> float:
    """Kuhn et al.'s estimator: SE = -(1/K) sum_k L_k, with L_k = logsumexp_{i in cluster k} l_i.

    ``logliks`` are the samples' length-normalised log-likelihoods l_i. No constant shift.
    """
    if len(logliks) != len(cluster_ids):
        raise ValueError("one cluster id per sample is needed")
    if not logliks:
        return math.nan
    groups: dict[int, list[float]] = {}
    for value, cid in zip(logliks, cluster_ids, strict=True):
        groups.setdefault(int(cid), []).append(float(value))
    cluster_logliks = [_logsumexp(groups[c]) for c in sorted(groups)]
    return -sum(cluster_logliks) / len(cluster_logliks)


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))


# --- Stubborn and persuaded -------------------------------------------------------------

_STRIP = ("assistant:", "answer", ":")


def clean_answer(text: str) -> str:
    """Lower-case, then remove every 'assistant:', then 'answer', then ':', then strip."""
    out = text.lower()
    for token in _STRIP:
        out = out.replace(token, "")
    return re.sub(r"\s+", " ", out).strip()


def is_persuaded(with_context: str, substitute: str, threshold: float = ROUGE_THRESHOLD) -> bool:
    """R(clean(y_c), a_c) > t: the with-context answer follows the inserted substitute.
    Only the model's answer is cleaned; the gold is used raw, as in the original."""
    return rouge_l(clean_answer(with_context), substitute) > threshold


def is_stubborn(with_context: str, without_context: str, substitute: str, threshold: float = ROUGE_THRESHOLD) -> bool:
    """R(clean(y_c), clean(y)) > t and not persuaded."""
    same = rouge_l(clean_answer(with_context), clean_answer(without_context)) > threshold
    return same and not is_persuaded(with_context, substitute, threshold)


def stubborn_persuaded_percent(
    with_context: Sequence[str],
    without_context: Sequence[str],
    substitutes: Sequence[str],
    threshold: float = ROUGE_THRESHOLD,
) -> tuple[float, float]:
    """(% stubborn, % persuaded) over counterfactual items, each 100 * count / N."""
    n = len(with_context)
    if not (n == len(without_context) == len(substitutes)):
        raise ValueError("stubborn/persuaded needs three lists of the same length")
    if n == 0:
        return math.nan, math.nan
    persuaded = sum(is_persuaded(c, s, threshold) for c, s in zip(with_context, substitutes, strict=True))
    stubborn = sum(
        is_stubborn(c, o, s, threshold) for c, o, s in zip(with_context, without_context, substitutes, strict=True)
    )
    return 100.0 * stubborn / n, 100.0 * persuaded / n
