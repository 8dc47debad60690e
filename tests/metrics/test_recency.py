"""Hand-computed cases for the RecencyQA metrics (docs/recency.md has the definitions)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chronoprobe.metrics import recency as m

# Gold / predictions on the 12-class scale (indices), None = unparseable.
GOLD = [0, 0, 1, 2, 5, 11]
PRED = [0, 1, 1, None, 7, 10]


def test_accuracy_and_tolerant_accuracy_by_hand() -> None:
    # exact: items 0 and 2 -> 2/6
    assert m.accuracy(GOLD, PRED) == pytest.approx(2 / 6)
    # within one class: items 0, 1 (0 vs 1), 2, 5 (11 vs 10) -> 4/6; item 3 unparseable, item 4 two away
    assert m.tolerant_accuracy(GOLD, PRED) == pytest.approx(4 / 6)
    assert m.tolerant_accuracy(GOLD, PRED, tolerance=2) == pytest.approx(5 / 6)


def test_macro_f1_by_hand() -> None:
    # classes seen in gold or parsed predictions: 0, 1, 2, 5, 7, 10, 11
    # class 0: TP1 FP0 FN1 -> 2/3; class 1: TP1 FP1 FN0 -> 2/3; class 2: TP0 FN1 -> 0
    # class 5: FN1 -> 0; class 7: FP1 -> 0; class 10: FP1 -> 0; class 11: FN1 -> 0
    per_class = m.per_class_f1(GOLD, PRED)
    assert sorted(per_class) == [0, 1, 2, 5, 7, 10, 11]
    assert per_class[0] == pytest.approx(2 / 3)
    assert per_class[1] == pytest.approx(2 / 3)
    assert m.macro_f1(GOLD, PRED) == pytest.approx((2 / 3 + 2 / 3) / 7)


def test_tolerant_f1_replaces_near_misses_by_gold_before_macro_f1() -> None:
    # near misses become gold: PRED -> [0, 0, 1, None, 7, 11]
    assert m.tolerant_predictions(GOLD, PRED) == [0, 0, 1, None, 7, 11]
    # classes 0, 1, 2, 5, 7, 11: F1 = 1, 1, 0, 0, 0, 1 -> 3/6
    assert m.tolerant_f1(GOLD, PRED) == pytest.approx(0.5)


def test_tolerant_f1_differs_from_plain_f1_only_through_near_misses() -> None:
    gold = [3, 3, 8, 8]
    pred = [4, 3, 8, 6]
    # plain: class 3 TP1 FN1 -> 2/3; 4 FP1 -> 0; 6 FP1 -> 0; 8 TP1 FN1 -> 2/3 => (4/3)/4
    assert m.macro_f1(gold, pred) == pytest.approx(1 / 3)
    # tolerant: [3, 3, 8, 6]: class 3 -> 1; 6 -> 0; 8 TP1 FN1 -> 2/3 => (5/3)/3
    assert m.tolerant_f1(gold, pred) == pytest.approx(5 / 9)


def test_unparseable_is_wrong_and_never_a_prediction_of_a_class() -> None:
    assert m.accuracy([4], [None]) == 0
    assert m.tolerant_accuracy([4], [None]) == 0
    assert m.per_class_f1([4], [None]) == {4: 0.0}
    assert m.unparseable_rate([None, 1, None, 2]) == 0.5


def test_confusion_matrix_has_an_unparseable_column() -> None:
    matrix = m.confusion_matrix(GOLD, PRED)
    assert matrix.shape == (12, 13)
    assert matrix[0, 0] == 1 and matrix[0, 1] == 1 and matrix[2, 12] == 1 and matrix[11, 10] == 1
    assert matrix.sum() == len(GOLD)


def test_delta_percent_matches_the_paper_table6_convention() -> None:
    # Llama-3.1-8B zero-shot stationary accuracy: 0.429 with, 0.401 without -> +6.98 %
    assert m.delta_percent(0.429, 0.401) == pytest.approx(6.9825, abs=1e-3)
    assert m.delta_percent(0.25, 0.5) == pytest.approx(-50.0)
    assert m.delta_percent(0.3, 0.0) is None
    assert m.delta_percent(None, 0.3) is None


def test_transition_accuracy_needs_both_contexts_right() -> None:
    pairs = [(2, 2, 8, 8), (2, 2, 8, 9), (2, None, 8, 8), (5, 5, 6, 6)]
    assert m.transition_accuracy(pairs) == pytest.approx(0.5)
    assert m.transition_accuracy([]) is None


def test_label_distribution_majority_confidence_entropy() -> None:
    samples = ["A-Day"] * 7 + ["A-Week"] * 4 + ["Never"] * 2
    dist = m.label_distribution(samples)
    assert dist == pytest.approx({"A-Day": 7 / 13, "A-Week": 4 / 13, "Never": 2 / 13})
    assert m.majority_label(samples) == "A-Day"
    assert m.confidence(dist) == pytest.approx(7 / 13)
    expected = -(7 / 13 * math.log(7 / 13) + 4 / 13 * math.log(4 / 13) + 2 / 13 * math.log(2 / 13))
    assert m.entropy(dist) == pytest.approx(expected)
    assert m.entropy({"Never": 1.0}) == 0.0


def test_majority_tie_goes_to_the_first_seen_label() -> None:
    # RecencyQA q with {A-Few-Days 3, A-Day 5, A-Few-Years 5}: majority A-Day, seen before A-Few-Years
    samples = ["A-Few-Days", "A-Day", "A-Few-Years"] + ["A-Day"] * 4 + ["A-Few-Years"] * 4 + ["A-Few-Days"] * 2
    assert m.majority_label(samples) == "A-Day"


def test_majority_of_nothing_is_an_error_not_none() -> None:
    with pytest.raises(ValueError, match="no labels"):
        m.majority_label([])


def test_entropy_matches_a_dataset_row() -> None:
    # q_id 3438 in RecencyQA.json: A-Year 10/13, A-Few-Years 3/13, entropy 0.5402041423888608
    dist = {"A-Year": 10 / 13, "A-Few-Years": 3 / 13}
    assert m.entropy(dist) == pytest.approx(0.5402041423888608, abs=1e-12)


def test_empty_inputs_are_none_and_length_mismatch_fails() -> None:
    assert m.accuracy([], []) is None
    assert m.macro_f1([], []) is None
    with pytest.raises(ValueError):
        m.accuracy([1, 2], [1])
    assert np.array_equal(m.confusion_matrix([], []), np.zeros((12, 13), dtype=np.int64))


def test_tolerant_f1_can_be_far_above_tolerant_accuracy():
    # The docs/recency.md counterexample, every answer parsed.
    gold = [10] * 60 + [c for c in (0, 2, 4, 6, 8) for _ in range(3)]
    pred = [5] * 60 + [c for c in (0, 2, 4, 6, 8) for _ in range(3)]
    # Classes 0, 2, 4, 6, 8: F1 1 each; 10: no TP -> 0; 5: predicted only -> 0. Macro over 7 classes.
    assert m.tolerant_f1(gold, pred) == pytest.approx(5 / 7)
    assert round(m.tolerant_f1(gold, pred), 3) == 0.714  # type: ignore[arg-type]
    assert m.tolerant_accuracy(gold, pred) == pytest.approx(15 / 75)
    assert round(m.tolerant_accuracy(gold, pred), 3) == 0.200  # type: ignore[arg-type]


def test_gate_agreement_by_hand() -> None:
    """A-Year (8) as the horizon: retrieve at or below it, and when nothing parsed; compare with the gold's decision."""
    gold = [8, 9, 2, 11, 0]
    pred = [None, 9, 10, 3, 8]
    # retrieve/retrieve, keep/keep, keep/retrieve, retrieve/keep, retrieve/retrieve
    assert m.gate_agrees(gold, pred, 8) == [True, True, False, False, True]
