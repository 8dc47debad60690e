"""Recency-classification metrics (RecencyQA). Pure functions; docs/recency.md has the formulas.

Gold labels and predictions are class indices on the ordered 12-class scale
(``RecencyClass`` values work too). A prediction of ``None`` is an answer we
could not parse: it is always wrong and is never counted as a prediction *of*
any class (it adds a false negative to its gold class only).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from chronoprobe.metrics.uncertainty import (
    RESAMPLES,
    SEED,
    Estimate,
    bootstrap,
    resample_counts,
    wilson,
    wilson_clustered,
)

N_CLASSES = 12

Pred = int | None


def _check(gold: Sequence[int], pred: Sequence[Pred]) -> None:
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")


def accuracy(gold: Sequence[int], pred: Sequence[Pred]) -> float | None:
    """Share of exact matches; None for an empty set."""
    _check(gold, pred)
    if not gold:
        return None
    return sum(p is not None and int(p) == int(g) for g, p in zip(gold, pred, strict=True)) / len(gold)


def within_tolerance(gold: int, pred: Pred, tolerance: int = 1) -> bool:
    return pred is not None and abs(int(pred) - int(gold)) <= tolerance


def tolerant_accuracy(gold: Sequence[int], pred: Sequence[Pred], tolerance: int = 1) -> float | None:
    """Share of predictions at most ``tolerance`` classes away from gold on the ordered scale."""
    _check(gold, pred)
    if not gold:
        return None
    return sum(within_tolerance(g, p, tolerance) for g, p in zip(gold, pred, strict=True)) / len(gold)


def per_class_f1(gold: Sequence[int], pred: Sequence[Pred]) -> dict[int, float]:
    """F1 = 2TP / (2TP + FP + FN) for every class seen in gold or (parsed) predictions."""
    _check(gold, pred)
    classes = sorted({int(g) for g in gold} | {int(p) for p in pred if p is not None})
    scores: dict[int, float] = {}
    for c in classes:
        tp = sum(int(g) == c and p is not None and int(p) == c for g, p in zip(gold, pred, strict=True))
        fp = sum(int(g) != c and p is not None and int(p) == c for g, p in zip(gold, pred, strict=True))
        fn = sum(int(g) == c and (p is None or int(p) != c) for g, p in zip(gold, pred, strict=True))
        scores[c] = 2 * tp / (2 * tp + fp + fn)
    return scores


def macro_f1(gold: Sequence[int], pred: Sequence[Pred]) -> float | None:
    """Unweighted mean of per-class F1 over the classes seen in gold or parsed predictions."""
    scores = per_class_f1(gold, pred)
    if not scores:
        return None
    return sum(scores.values()) / len(scores)


def tolerant_predictions(gold: Sequence[int], pred: Sequence[Pred], tolerance: int = 1) -> list[Pred]:
    """Predictions with every near miss (within ``tolerance``) replaced by the gold class."""
    _check(gold, pred)
    return [int(g) if within_tolerance(g, p, tolerance) else p for g, p in zip(gold, pred, strict=True)]


def tolerant_f1(gold: Sequence[int], pred: Sequence[Pred], tolerance: int = 1) -> float | None:
    """Macro F1 after :func:`tolerant_predictions` (a near miss counts as the gold class)."""
    return macro_f1(gold, tolerant_predictions(gold, pred, tolerance))


def confusion_matrix(gold: Sequence[int], pred: Sequence[Pred], n_classes: int = N_CLASSES) -> np.ndarray:
    """Counts, rows = gold class, columns = predicted class, last column = unparseable."""
    _check(gold, pred)
    matrix = np.zeros((n_classes, n_classes + 1), dtype=np.int64)
    for g, p in zip(gold, pred, strict=True):
        matrix[int(g), n_classes if p is None else int(p)] += 1
    return matrix


def unparseable_rate(pred: Sequence[Pred]) -> float | None:
    if not pred:
        return None
    return sum(p is None for p in pred) / len(pred)


def delta_percent(with_context: float | None, without_context: float | None) -> float | None:
    """Relative change in percent, (with - without) / without * 100 (Table 6); None if undefined."""
    if with_context is None or without_context is None or without_context == 0:
        return None
    return (with_context - without_context) / without_context * 100.0


def transition_accuracy(pairs: Sequence[tuple[int, Pred, int, Pred]]) -> float | None:
    """Share of (gold1, pred1, gold2, pred2) pairs with both predictions exactly right (Table 7)."""
    if not pairs:
        return None
    return sum(
        p1 is not None and int(p1) == int(g1) and p2 is not None and int(p2) == int(g2) for g1, p1, g2, p2 in pairs
    ) / len(pairs)


def classification_summary(
    gold: Sequence[int], pred: Sequence[Pred], tolerance: int = 1
) -> dict[str, float | int | None]:
    """Every headline metric for one set of predictions."""
    return {
        "n": len(gold),
        "accuracy": accuracy(gold, pred),
        "tolerant_accuracy": tolerant_accuracy(gold, pred, tolerance),
        "macro_f1": macro_f1(gold, pred),
        "tolerant_f1": tolerant_f1(gold, pred, tolerance),
        "unparseable": sum(p is None for p in pred),
        "unparseable_rate": unparseable_rate(pred),
    }


# --- label distributions (labelling pipeline) -------------------------------------------------


Label = TypeVar("Label", bound=Hashable)


def label_distribution(samples: Sequence[Label]) -> dict[Label, float]:
    """Share of each label among ``samples``, in order of first appearance."""
    if not samples:
        return {}
    counts = Counter(samples)
    return {label: count / len(samples) for label, count in counts.items()}


def majority_label(samples: Sequence[Label]) -> Label:
    """Most common label; a tie goes to the label that appeared first in ``samples``."""
    if not samples:
        raise ValueError("no labels to take the majority of")
    return Counter(samples).most_common(1)[0][0]


def confidence(distribution: Mapping[Any, float]) -> float:
    """The largest share."""
    return max(distribution.values(), default=0.0)


def entropy(distribution: Mapping[Any, float]) -> float:
    """Shannon entropy in nats, -sum p ln p (0 ln 0 = 0)."""
    return float(-sum(p * math.log(p) for p in distribution.values() if p > 0))


# --- intervals ------------------------------------------------------------------------------------


def _macro_f1_of_resamples(codes: np.ndarray, idx: np.ndarray, n_classes: int) -> np.ndarray:
    """Macro F1 of every resample (row of ``idx``) at once, from per-resample confusion counts.

    ``codes[i] = gold_i * (n_classes + 1) + pred_i`` (pred ``n_classes`` = unparseable).
    Matches :func:`macro_f1`: F1 = 2TP / (2TP + FP + FN) = 2TP / (gold count + parsed prediction
    count), averaged over the classes seen in the resample's gold or parsed predictions.
    """
    batch = idx.shape[0]
    cells = n_classes * (n_classes + 1)
    flat = (codes[idx] + (np.arange(batch) * cells)[:, None]).ravel()
    counts = np.bincount(flat, minlength=batch * cells).reshape(batch, n_classes, n_classes + 1)
    return _macro_f1_of_counts(counts)


def _macro_f1_of_counts(counts: np.ndarray) -> np.ndarray:
    """Macro F1 of every ``(n_classes, n_classes + 1)`` confusion matrix in ``counts`` (NaN where no class is seen)."""
    n_classes = counts.shape[1]
    tp = np.diagonal(counts[:, :, :n_classes], axis1=1, axis2=2)
    gold_count = counts.sum(axis=2)
    pred_count = counts[:, :, :n_classes].sum(axis=1)
    seen = (gold_count + pred_count) > 0
    f1 = np.divide(2.0 * tp, gold_count + pred_count, out=np.zeros(tp.shape), where=seen)
    with np.errstate(invalid="ignore", divide="ignore"):
        macro: np.ndarray = f1.sum(axis=1) / seen.sum(axis=1)
    return macro


def _accuracy_of_counts(counts: np.ndarray) -> np.ndarray:
    """Exact-match accuracy of every confusion matrix in ``counts`` (NaN for an empty one)."""
    n_classes = counts.shape[1]
    right = np.diagonal(counts[:, :, :n_classes], axis1=1, axis2=2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share: np.ndarray = right / counts.sum(axis=(1, 2))
    return share


def per_class_f1_estimates(
    gold: Sequence[int], pred: Sequence[Pred], questions: Sequence[Hashable] | None = None
) -> dict[int, Estimate]:
    """:func:`per_class_f1` with n and a 95% interval for every class.

    F1_c = 2TP / (2TP + FP + FN) = 2p / (1 + p), where p = TP / n is the share right among the
    n = TP + FP + FN items that involve class c (gold c, or predicted c). The interval is the
    Wilson interval of p mapped through the same increasing function; n is those items. ``questions``:
    each item's question, where a question has several items (its contexts): the Wilson interval is
    then clustered on the question.
    """
    points = per_class_f1(gold, pred)
    owners = list(questions) if questions is not None else list(range(len(gold)))
    estimates = {}
    for c, point in points.items():
        involved = [
            (int(g), p, q)
            for g, p, q in zip(gold, pred, owners, strict=True)
            if int(g) == c or (p is not None and int(p) == c)
        ]
        right = [g == c and p is not None and int(p) == c for g, p, _ in involved]
        share = wilson_clustered(right, [q for _, _, q in involved])
        low, high = share.ci_low, share.ci_high
        estimates[c] = Estimate(
            value=point,
            n=len(involved),
            ci_low=None if low is None else 2 * low / (1 + low),
            ci_high=None if high is None else 2 * high / (1 + high),
            method=share.method,
        )
    return estimates


Asked = tuple[Hashable, int, Pred]
"""(question, gold class, prediction) of one answer."""
OfCounts = Callable[[np.ndarray], np.ndarray]


def delta_percent_estimates(
    with_context: Sequence[Asked],
    without_context: Sequence[Asked],
    points: Mapping[str, float | None],
    *,
    n_classes: int = N_CLASSES,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, Estimate]:
    """Table 6's Δ% of accuracy and macro F1 (``points["accuracy"]``, ``points["f1"]``) with 95% intervals.

    A question's answers with and without its context (several contexts for a non-stationary
    question) stay together: the bootstrap resamples questions, recomputes both sides from the
    resampled answers and takes :func:`delta_percent`; n is the number of questions.
    Resamples whose without-context value is 0 (Δ% undefined) are left out.
    """
    questions = list(dict.fromkeys(q for q, _, _ in [*with_context, *without_context]))
    where = {q: i for i, q in enumerate(questions)}

    def per_question(answers: Sequence[Asked]) -> np.ndarray:
        counts = np.zeros((len(questions), n_classes * (n_classes + 1)))
        for question, gold, prediction in answers:
            counts[
                where[question], int(gold) * (n_classes + 1) + (n_classes if prediction is None else int(prediction))
            ] += 1
        return counts

    by_question = per_question(with_context), per_question(without_context)

    def statistic(of_counts: OfCounts) -> OfCounts:
        def delta(idx: np.ndarray) -> np.ndarray:
            weights = resample_counts(idx, len(questions)).astype(np.float64)
            shape = (idx.shape[0], n_classes, n_classes + 1)
            with_value, without_value = (of_counts((weights @ q).reshape(shape)) for q in by_question)
            with np.errstate(invalid="ignore", divide="ignore"):
                out: np.ndarray = (with_value - without_value) / without_value * 100.0
            return np.where(without_value == 0, np.nan, out)

        return delta

    return {
        key: bootstrap(len(questions), statistic(of_counts), points.get(key), resamples=resamples, seed=seed)
        for key, of_counts in (("accuracy", _accuracy_of_counts), ("f1", _macro_f1_of_counts))
    }


def macro_f1_estimate(
    gold: Sequence[int],
    pred: Sequence[Pred],
    *,
    n_classes: int = N_CLASSES,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    questions: Sequence[Hashable] | None = None,
) -> Estimate:
    """:func:`macro_f1` with a percentile-bootstrap 95% interval: the items are resampled and
    the macro F1 recomputed on each resample (vectorised over resamples). ``questions``: each item's
    question, where a question has several items (its contexts): the questions are resampled then,
    each with its items."""
    _check(gold, pred)
    codes = np.array(
        [int(g) * (n_classes + 1) + (n_classes if p is None else int(p)) for g, p in zip(gold, pred, strict=True)],
        dtype=np.int64,
    )
    if questions is not None and len(set(questions)) < len(codes):
        return _clustered_macro_f1(codes, questions, macro_f1(gold, pred), n_classes, resamples, seed)
    return bootstrap(
        len(codes),
        lambda idx: _macro_f1_of_resamples(codes, idx, n_classes),
        macro_f1(gold, pred),
        resamples=resamples,
        seed=seed,
    )


def _clustered_macro_f1(
    codes: np.ndarray, questions: Sequence[Hashable], point: float | None, n_classes: int, resamples: int, seed: int
) -> Estimate:
    """Macro F1 with a bootstrap over questions: each resample's confusion counts summed over its questions."""
    order = {q: i for i, q in enumerate(dict.fromkeys(questions))}
    cells = n_classes * (n_classes + 1)
    per_question = np.zeros((len(order), cells))
    np.add.at(per_question, (np.asarray([order[q] for q in questions]), codes), 1.0)

    def resampled(idx: np.ndarray) -> np.ndarray:
        weights = resample_counts(idx, len(order)).astype(np.float64)
        return _macro_f1_of_counts((weights @ per_question).reshape(idx.shape[0], n_classes, n_classes + 1))

    found = bootstrap(len(order), resampled, point, resamples=resamples, seed=seed)
    return found.model_copy(update={"n": int(codes.size), "method": "cluster-bootstrap"})


def gate_agrees(gold: Sequence[int], pred: Sequence[Pred], threshold: int) -> list[bool]:
    """Per answer: does a retrieval gate on the prediction decide as one on the gold class would?

    The gate retrieves when the class is ``threshold`` or shorter (the answer changes within that
    horizon), and when nothing parsed (the one-sample rule of ``recency gate``)."""
    _check(gold, pred)
    return [(p is None or int(p) <= threshold) == (int(g) <= threshold) for g, p in zip(gold, pred, strict=True)]


def classification_estimates(
    gold: Sequence[int], pred: Sequence[Pred], tolerance: int = 1, questions: Sequence[Hashable] | None = None
) -> dict[str, dict[str, Any]]:
    """n and a 95% interval for each rate of :func:`classification_summary`, keyed like it:
    Wilson for accuracy, tolerant accuracy and the unparseable rate; a seeded bootstrap over
    items for macro F1 and tolerant F1. ``questions``: each item's question; where a question has
    several items (its contexts), every interval is clustered on the question."""
    _check(gold, pred)
    owners = list(questions) if questions is not None else list(range(len(gold)))
    exact = [p is not None and int(p) == int(g) for g, p in zip(gold, pred, strict=True)]
    near = [within_tolerance(g, p, tolerance) for g, p in zip(gold, pred, strict=True)]
    return {
        "accuracy": wilson_clustered(exact, owners).to_json(),
        "tolerant_accuracy": wilson_clustered(near, owners).to_json(),
        "macro_f1": macro_f1_estimate(gold, pred, questions=owners).to_json(),
        "tolerant_f1": macro_f1_estimate(gold, tolerant_predictions(gold, pred, tolerance), questions=owners).to_json(),
        "unparseable_rate": wilson_clustered([p is None for p in pred], owners).to_json(),
    }


# --- the recency gate against gold decisions -------------------------------------------------


def _balanced_accuracy_of(gold: np.ndarray, decided: np.ndarray) -> float:
    """Mean of the two recalls; NaN when one side has no items (a resample may draw none)."""
    positives, negatives = gold.sum(), (~gold).sum()
    if positives == 0 or negatives == 0:
        return math.nan
    return float(((decided & gold).sum() / positives + (~decided & ~gold).sum() / negatives) / 2.0)


def gate_estimates(
    gold: Sequence[bool], decided: Sequence[bool], *, resamples: int = RESAMPLES, seed: int = SEED
) -> dict[str, Estimate]:
    """How a retrieve / no-retrieval gate agrees with gold decisions, one pair per question.

    ``gold[i]``: question i's answer changes within the gate's threshold (retrieval is right);
    ``decided[i]``: the gate retrieved. ``agreement`` = share of questions decided as gold
    (Wilson); ``retrieve_when_changing`` = share retrieved among gold-true, ``keep_when_stable``
    = share not retrieved among gold-false (Wilson each); ``balanced_accuracy`` = the mean of
    those two (seeded bootstrap over questions), 0.5 for a gate that always answers the same
    or flips a coin, whatever the mix of the questions.
    """
    if len(gold) != len(decided):
        raise ValueError(f"gold has {len(gold)} decisions, decided {len(decided)}")
    g = np.asarray(gold, dtype=bool)
    d = np.asarray(decided, dtype=bool)
    point = _balanced_accuracy_of(g, d)

    def resampled(idx: np.ndarray) -> np.ndarray:
        return np.asarray([_balanced_accuracy_of(g[row], d[row]) for row in idx])

    return {
        "agreement": wilson(int((g == d).sum()), len(g)),
        "retrieve_when_changing": wilson(int((d & g).sum()), int(g.sum())),
        "keep_when_stable": wilson(int((~d & ~g).sum()), int((~g).sum())),
        "balanced_accuracy": bootstrap(
            len(g), resampled, None if math.isnan(point) else point, resamples=resamples, seed=seed
        ),
    }


def macro_f1_of_counts(counts: np.ndarray) -> np.ndarray:
    """Macro F1 of every confusion matrix in ``counts`` (``(batch, n_classes, n_classes + 1)``, the last column
    the unparseable answers), as :func:`macro_f1` computes it; NaN where no class is seen."""
    return _macro_f1_of_counts(counts)


def confusion_cell(gold: int, pred: Pred, n_classes: int = N_CLASSES) -> int:
    """The index of an answer's cell in a flattened ``(n_classes, n_classes + 1)`` confusion matrix."""
    return int(gold) * (n_classes + 1) + (n_classes if pred is None else int(pred))
