"""Hand-computed cases for the MuLan-side metrics (formulas in docs/conflicts.md)."""

from __future__ import annotations

import math
import random

import pytest

from chronoprobe.metrics import mulan as mm


def test_squad_normalisation():
    assert mm.normalize_answer("The  Eiffel-Tower, in PARIS!") == "eiffeltower in paris"
    assert mm.normalize_answer("an apple a day") == "apple day"


def test_token_f1_and_truncation():
    # pred [eiffel, tower, in, paris], gold [eiffel, tower]: P 1/2, R 1 -> 2/3.
    assert mm.token_f1("the Eiffel Tower in Paris", "Eiffel Tower") == pytest.approx(2 / 3)
    # Truncated to the gold's 2 tokens: exact.
    assert mm.token_f1("the Eiffel Tower in Paris", "Eiffel Tower", truncate="tokens") == pytest.approx(1.0)
    # Multiset overlap: pred [new, new, york], gold [new, york]: common 2, P 2/3, R 1 -> 0.8.
    assert mm.token_f1("new new york", "New York") == pytest.approx(0.8)
    assert mm.token_f1("", "the") == 0.0  # both empty after normalisation: no common token
    assert mm.token_f1("", "Paris") == 0.0
    assert mm.token_f1("Lyon", "Paris") == 0.0


def test_f1_max_over_golds_and_aliases():
    assert mm.f1_with_aliases("USA", ["United States"], ["USA"]) == 1.0
    assert mm.f1_with_aliases("United", ["United States"]) == pytest.approx(2 / 3)
    assert mm.f1_with_aliases("x", []) == 0.0


def test_weighted_type_mean():
    assert mm.weighted_type_mean({"P1": (50.0, 2), "P2": (80.0, 6)}) == pytest.approx(72.5)
    assert math.isnan(mm.weighted_type_mean({}))


def test_first_token_confidence_skips_specials_whitespace_and_one_article():
    assert (
        mm.first_token_confidence(["<s>", " the", " Eiff", "el"], [0.9, 0.8, 0.6, 0.5], [True, False, False, False])
        == 0.6
    )
    assert mm.first_token_confidence(["An", " apple"], [0.3, 0.7]) == 0.7
    assert mm.first_token_confidence([" Paris", "."], [0.4, 0.9]) == 0.4
    assert mm.first_token_confidence([" ", "Paris"], [0.2, 0.8]) == 0.8
    # Only one article is skipped.
    assert mm.first_token_confidence(["the", "the", "x"], [0.1, 0.2, 0.3]) == 0.2
    assert mm.first_token_confidence(["the", "</s>"], [0.5, 0.5], [False, True]) == 0.0  # only an article


def _score(fact_id: str, cls: str, rel: str, f1: float = 1.0, conf: float | None = 0.9) -> mm.FactScore:
    return mm.FactScore(fact_id=fact_id, fact_class=cls, relation=rel, f1=f1, confidence=conf)


def test_memorised_requires_exact_f1_and_confidence():
    assert mm.is_memorised(_score("a", "c", "r"))
    assert not mm.is_memorised(_score("a", "c", "r", f1=0.99))
    assert not mm.is_memorised(_score("a", "c", "r", conf=0.49))
    assert mm.is_memorised(_score("a", "c", "r", conf=0.5))
    assert not mm.is_memorised(_score("a", "c", "r", conf=None))


def test_select_memorised_balances_classes_and_spreads_relations():
    scores = [
        _score("a1", "A", "r1"),
        _score("a2", "A", "r1"),
        _score("a3", "A", "r1"),
        _score("a4", "A", "r2"),
        _score("a5", "A", "r2", f1=0.5),
        _score("b1", "B", "r3"),
        _score("b2", "B", "r3"),
        _score("b3", "B", "r3", conf=0.1),
    ]
    chosen = mm.select_memorised(scores, seed=3)
    by_class = {c: [s for s in chosen if s.fact_class == c] for c in ("A", "B")}
    assert len(by_class["A"]) == len(by_class["B"]) == 2
    assert {s.relation for s in by_class["A"]} == {"r1", "r2"}  # one per relation, round robin
    assert {s.fact_id for s in by_class["B"]} == {"b1", "b2"}
    assert mm.select_memorised(scores, seed=3) == chosen  # deterministic
    assert len(mm.select_memorised(scores, seed=3, per_class=1)) == 2


def test_best_template_ties_go_to_lowest_index():
    scores = {("r", 0): [1.0, 0.0], ("r", 1): [1.0, 1.0], ("r", 2): [1.0, 1.0], ("s", 4): [0.2]}
    assert mm.best_template_per_relation(scores) == {"r": 1, "s": 4}


def test_update_success_and_new_object():
    assert mm.update_succeeded("Lyon, France", "Lyon")
    assert mm.update_succeeded("the Lyon", "Lyon")
    assert not mm.update_succeeded("Lyonnais", "Lyon")
    assert not mm.update_succeeded("", "Lyon")
    assert not mm.update_succeeded("in Lyon", "Lyon")
    assert mm.update_success_rate(["Lyon", "Paris", "New York City"], ["Lyon", "Lyon", "New York"]) == pytest.approx(
        2 / 3
    )
    picked = {mm.pick_new_object("Paris", ["Paris Saint", "Lyon", "Nice"], random.Random(s)) for s in range(20)}
    assert picked == {"Lyon", "Nice"}
    assert mm.pick_new_object("Paris", ["Paris"], random.Random(0)) is None
    assert (
        mm.update_prompt("X was born in Lyon.", "X was born in")
        == "Imagine that X was born in Lyon. Then, X was born in"
    )
