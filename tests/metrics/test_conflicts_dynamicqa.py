"""Hand-computed cases for the DynamicQA-side metrics (formulas in docs/conflicts.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chronoprobe.metrics import conflicts as m


@pytest.mark.e2e
def test_rouge_l_is_f_measure_with_stemming():
    # pred 6 tokens, ref 1, LCS 1: P = 1/6, R = 1, F = 2/7.
    assert m.rouge_l("The capital of France is Paris.", "Paris") == pytest.approx(2 / 7)
    # pred 2 tokens: P = 1/2, R = 1, F = 2/3.
    assert m.rouge_l("Paris, France", "Paris") == pytest.approx(2 / 3)
    # Porter stemmer: played / playing -> play.
    assert m.rouge_l("played", "playing") == pytest.approx(1.0)
    assert m.rouge_l("", "Paris") == 0.0


def test_correct_is_strictly_above_threshold():
    assert not m.is_correct("The capital of France is Paris.", "Paris")  # 0.2857 <= 0.3
    assert m.is_correct("Paris, France", "Paris")
    # LCS 3, ref 4 tokens, pred 16 tokens: P = 3/16, R = 3/4, F = 0.3 exactly -> not correct.
    pred = "red green blue " + " ".join(f"w{i}" for i in range(13))
    assert m.rouge_l(pred, "red green blue black") == pytest.approx(0.3)
    assert not m.is_correct(pred, "red green blue black")
    assert not m.is_correct("Paris, France", "Paris", threshold=2 / 3)


def test_accuracy_eq4_counts_both_items_of_each_fact():
    acc = m.accuracy_with_context(["Paris", "London"], ["Paris", "Paris"], ["Lyon", "Paris"], ["Lyon", "Lyon"])
    assert acc == pytest.approx(2 / 4)


def test_accuracy_eq5_uses_only_the_true_answer():
    outputs, true, substitutes = ["Lyon", "Lyon"], ["Paris", "Paris"], ["Lyon", "Lyon"]
    assert m.accuracy_without_context(outputs, true) == 0.0
    # The original code's bug: the no-context output also scored against the substitute.
    assert m.accuracy_without_context_original(outputs, true, substitutes) == pytest.approx(0.5)
    assert math.isnan(m.accuracy_without_context([], []))


def test_kl_natural_log_and_zero_handling():
    p = np.array([0.5, 0.5, 0.0])
    q = np.array([0.25, 0.25, 0.5])
    assert m.kl_divergence(p, q) == pytest.approx(math.log(2))
    # q_v = 0 with p_v > 0: the infinite term is dropped (contributes 0).
    assert m.kl_divergence(np.array([0.5, 0.5]), np.array([1.0, 0.0])) == pytest.approx(0.5 * math.log(0.5))
    assert m.kl_divergence(q, q) == pytest.approx(0.0)


def test_coherent_persuasion_is_mean_kl_over_all_cluster_pairs():
    a1, a2 = np.array([0.5, 0.5, 0.0]), np.array([1.0, 0.0, 0.0])
    b1 = np.array([0.25, 0.25, 0.5])
    assert m.coherent_persuasion([a1, a2], [b1]) == pytest.approx((math.log(2) + math.log(4)) / 2)
    b2 = np.array([0.5, 0.5, 0.0])
    # KL(a1||b1)=ln2, KL(a1||b2)=0, KL(a2||b1)=ln4, KL(a2||b2)=ln2 -> 4 ln2 / 4.
    assert m.coherent_persuasion([a1, a2], [b1, b2]) == pytest.approx(math.log(2))
    # Direction matters: KL(context || no-context).
    assert m.coherent_persuasion([b1], [a1]) != pytest.approx(m.coherent_persuasion([a1], [b1]))


def test_cluster_distribution_is_member_mean_and_cp_from_samples():
    d1, d2, d3 = np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([0.5, 0.5])
    assert m.cluster_distribution([d1, d2]) == pytest.approx(np.array([0.5, 0.5]))
    # Context: clusters {d1, d2} -> [.5,.5], {d3} -> [.5,.5]; no context: one cluster [.25,.75].
    q = np.array([0.25, 0.75])
    expected = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    cp = m.coherent_persuasion_from_samples([d1, d2, d3], [0, 0, 1], [q, q], [0, 0])
    assert cp == pytest.approx(expected)


def test_semantic_entropy_kuhn_without_shift():
    # L0 = logsumexp(-1, -1) = -1 + ln 2, L1 = -2; SE = -(L0 + L1) / 2.
    se = m.semantic_entropy([-1.0, -1.0, -2.0], [0, 0, 1])
    assert se == pytest.approx(-((-1 + math.log(2)) + (-2)) / 2)
    assert m.semantic_entropy([-0.5], [3]) == pytest.approx(0.5)
    assert m.length_normalised_loglik([-1.0, -2.0, -3.0]) == pytest.approx(-2.0)


def test_stubborn_and_persuaded():
    with_ctx = ["Assistant: Lyon", "Paris", "Berlin"]
    without = ["Paris", "Paris", "Rome"]
    subs = ["Lyon", "Lyon", "Lyon"]
    assert m.is_persuaded(with_ctx[0], subs[0])
    assert m.is_stubborn(with_ctx[1], without[1], subs[1])
    assert not m.is_stubborn(with_ctx[2], without[2], subs[2])
    stubborn, persuaded = m.stubborn_persuaded_percent(with_ctx, without, subs)
    assert stubborn == pytest.approx(100 / 3)
    assert persuaded == pytest.approx(100 / 3)
    # Persuaded answers are never stubborn, even if they also match the no-context answer.
    assert not m.is_stubborn("Lyon", "Lyon", "Lyon")


def test_clean_answer_strips_markers():
    assert m.clean_answer("Assistant: Answer: Paris ") == "paris"
    assert m.clean_answer("ANSWER:  New   York") == "new york"
