"""Intervals added in 0.2.0, checked by hand: differences of two groups (the conflicts sweep gap),
per-class F1 (recency) and Table 6's Δ% (recency)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chronoprobe.metrics.recency import delta_percent_estimates, per_class_f1, per_class_f1_estimates
from chronoprobe.metrics.uncertainty import bootstrap_difference, newcombe, resample_counts, wilson

Z = 1.959963984540054  # the normal quantile of a 95% interval


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def test_newcombe_difference_of_two_proportions_by_hand() -> None:
    # 5/10 - 2/10: Wilson 5/10 = [0.2366, 0.7634], 2/10 = [0.0567, 0.5098]
    (l1, u1), (l2, u2) = wilson_by_hand(5, 10), wilson_by_hand(2, 10)
    gap = newcombe(wilson(5, 10), wilson(2, 10))
    assert gap.value == pytest.approx(0.3)
    assert gap.ci_low == pytest.approx(0.3 - math.sqrt((0.5 - l1) ** 2 + (u2 - 0.2) ** 2))
    assert gap.ci_high == pytest.approx(0.3 + math.sqrt((u1 - 0.5) ** 2 + (0.2 - l2) ** 2))
    assert (round(gap.ci_low, 4), round(gap.ci_high, 4)) == (-0.1067, 0.5999)
    assert gap.n == 20 and gap.method == "newcombe"
    assert newcombe(wilson(0, 0), wilson(1, 2)).value is None


def test_bootstrap_difference_by_hand() -> None:
    # first = [0, 1] resamples to a mean of 0, 0.5 or 1 (1/4, 1/2, 1/4); second = [0] is always 0
    gap = bootstrap_difference([0.0, 1.0], [0.0])
    assert gap.value == 0.5 and gap.n == 3
    assert (gap.ci_low, gap.ci_high) == (0.0, 1.0)
    constant = bootstrap_difference([2.0, 2.0, 2.0], [0.5, 0.5])
    assert (constant.value, constant.ci_low, constant.ci_high) == (1.5, 1.5, 1.5)
    assert bootstrap_difference([1.0, 2.0], [0.0, 4.0]) == bootstrap_difference([1.0, 2.0], [0.0, 4.0])  # seeded
    assert bootstrap_difference([], [1.0]).value is None
    assert not bootstrap_difference([1.0], [2.0]).has_interval  # one item each: every resample is the same


def test_resample_counts() -> None:
    counts = resample_counts(np.array([[0, 0, 2], [1, 2, 1]]), 3)
    assert counts.tolist() == [[2, 0, 1], [0, 2, 1]]


def test_per_class_f1_interval_by_hand() -> None:
    gold, pred = [0, 0, 1, 2], [0, 1, 1, None]
    # class 0: TP 1, FN 1 -> p = 1/2 of n = 2; class 1: TP 1, FP 1 -> 1/2 of 2; class 2: FN 1 -> 0/1
    estimates = per_class_f1_estimates(gold, pred)
    assert {c: e.value for c, e in estimates.items()} == per_class_f1(gold, pred) == {0: 2 / 3, 1: 2 / 3, 2: 0.0}
    low, high = wilson_by_hand(1, 2)
    assert estimates[0].n == 2
    assert estimates[0].ci_low == pytest.approx(2 * low / (1 + low))  # 0.1727
    assert estimates[0].ci_high == pytest.approx(2 * high / (1 + high))  # 0.9504
    assert estimates[2].n == 1 and estimates[2].ci_low == 0.0
    assert estimates[2].ci_high == pytest.approx(2 * wilson_by_hand(0, 1)[1] / (1 + wilson_by_hand(0, 1)[1]))


def test_table6_delta_interval_by_hand() -> None:
    # q1: right with and without context; q2: right with, wrong without (gold 0, predicted 1).
    with_context = [("q1", 0, 0), ("q2", 0, 0)]
    without = [("q1", 0, 0), ("q2", 0, 1)]
    # accuracy 1 vs 1/2: Δ% = +100. Resampled questions: {q1,q1} Δ 0 (1/4), {q2,q2} undefined (1/4),
    # mixed Δ 100 (1/2). Macro F1 1 vs 1/3 (class 0: 2/3, class 1: 0): Δ% = +200; {q1,q1} Δ 0,
    # {q2,q2} F1 without = 0 (undefined), mixed 200.
    deltas = delta_percent_estimates(with_context, without, {"accuracy": 100.0, "f1": 200.0})
    accuracy, f1 = deltas["accuracy"], deltas["f1"]
    assert (accuracy.value, accuracy.n, accuracy.ci_low, accuracy.ci_high) == (100.0, 2, 0.0, 100.0)
    assert (f1.value, f1.n, f1.ci_low, f1.ci_high) == (200.0, 2, pytest.approx(0.0), pytest.approx(200.0))  # type: ignore[comparison-overlap]  # approx equals a float
    assert delta_percent_estimates(with_context, without, {"accuracy": None, "f1": None})["f1"].value is None


def test_table6_delta_keeps_a_questions_contexts_together() -> None:
    # one non-stationary question with two contexts (both right) and one without (wrong): a resample
    # of it alone is undefined, so the only finite resamples hold both questions in some mix.
    with_context = [("q1", 0, 0), ("q1", 1, 1), ("q2", 0, 0)]
    without = [("q1", 0, 2), ("q2", 0, 0)]
    deltas = delta_percent_estimates(with_context, without, {"accuracy": 100.0, "f1": None})
    assert deltas["accuracy"].n == 2
    # {q2,q2}: 1 vs 1 -> 0; {q1,q2}: 1 vs 1/2 -> 100; {q1,q1}: without = 0, undefined
    assert (deltas["accuracy"].ci_low, deltas["accuracy"].ci_high) == (0.0, 100.0)
