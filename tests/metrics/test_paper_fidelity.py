"""Issue 8 section 1: the numbers that go into paper-style tables, hand-computed, in both
fidelity modes (corrected default, original one switch away). See docs/conflicts.md."""

from __future__ import annotations

import pytest

from chronoprobe.metrics import conflicts as m
from chronoprobe.metrics import mulan as mm

# --- F1 truncation -----------------------------------------------------------------------


def test_original_truncates_by_characters_before_tokenising():
    # "parisian city"[:len("paris")] == "paris" -> one token, equal to the gold: F1 1.
    assert mm.token_f1("Parisian city", "Paris", truncate="characters") == 1.0
    # Our corrected truncation cuts whole tokens: ["parisian"] vs ["paris"] -> 0.
    assert mm.token_f1("Parisian city", "Paris", truncate="tokens") == 0.0
    # "the eiffel tower in paris" -> "eiffel tower in paris"[:12] = "eiffel tower" -> 1.
    assert mm.token_f1("the Eiffel Tower in Paris", "Eiffel Tower", truncate="characters") == 1.0
    # A cut inside a word: "new yorker city"[:8] = "new york" -> 1; tokens: [new, yorker] vs [new, york] -> 1/2.
    assert mm.token_f1("New Yorker city", "New York", truncate="characters") == 1.0
    assert mm.token_f1("New Yorker city", "New York", truncate="tokens") == pytest.approx(0.5)


@pytest.mark.parametrize("truncate", ["none", "tokens", "characters"])
def test_an_alias_that_normalises_to_nothing_never_matches(truncate: str):
    # "The A" (an alias of Atlanta) normalises to "": no common token, so 0 whatever the prediction.
    assert mm.normalize_answer("The A") == ""
    assert mm.normalize_answer("...") == ""
    for prediction in ("Boston", "", "The A"):
        assert mm.token_f1(prediction, "...", truncate=truncate) == 0.0  # type: ignore[arg-type]
    assert mm.f1_with_aliases("Boston", ["Atlanta"], ["...", "The"], truncate=truncate) == 0.0  # type: ignore[arg-type]
    assert mm.f1_with_aliases("Atlanta", ["Atlanta"], ["..."], truncate=truncate) == 1.0  # type: ignore[arg-type]


def test_fidelity_picks_the_truncation():
    assert mm.f1_truncation("original") == "characters"
    assert mm.f1_truncation("corrected") == "tokens"


# --- F1 and confidence means ----------------------------------------------------------------


def test_f1_mean_skips_empty_predictions_and_confidence_mean_counts_them_as_zero():
    rows = [
        {"relation": "P1", "prediction": "Paris", "f1": 1.0, "confidence": 0.8},
        {"relation": "P1", "prediction": "", "f1": 0.0, "confidence": 0.0},
        {"relation": "P2", "prediction": "Lyon", "f1": 0.5, "confidence": 0.4},
        {"relation": "P2", "prediction": "Nice", "f1": 0.0, "confidence": 0.6},
    ]
    from chronoprobe.lenses.conflicts.completion import summarise_completion
    from chronoprobe.lenses.conflicts.rows import CompletionRow

    typed = [
        CompletionRow(
            model="m",
            query_id=f"f{i}/0",
            fact_id=f"f{i}",
            fact_class="c",
            template_index=0,
            prefix="p",
            generation=r["prediction"],
            golds=[],
            **r,
        )
        for i, r in enumerate(rows)
    ]
    summary = summarise_completion(typed, [], ["c"])["c"]
    # F1: P1 over its one non-empty query = 100, P2 = 25; weighted by scored queries (1, 2): (100 + 50) / 3.
    assert summary["f1"] == pytest.approx(50.0)
    assert summary["empty_predictions"] == 1
    # Confidence: every query, the empty one as 0: (0.8 + 0 + 0.4 + 0.6) / 4.
    assert summary["confidence"] == pytest.approx(0.45)


def test_empty_generation_and_bare_article_have_confidence_zero():
    assert mm.first_token_confidence([], []) == 0.0
    assert mm.first_token_confidence(["</s>"], [0.9], [True]) == 0.0
    assert mm.first_token_confidence([" the"], [0.7]) == 0.0
    assert mm.first_token_confidence_original([], []) == 0.0
    assert mm.first_token_confidence_original(["</s>"], [0.9], [True]) == 0.0
    assert mm.first_token_confidence_original([" the"], [0.7]) == 0.0


# --- first-token confidence -------------------------------------------------------------------


def test_corrected_skips_one_article_in_any_case():
    assert mm.first_token_confidence(["The", " Eiff", "el"], [0.9, 0.6, 0.5]) == 0.6
    assert mm.first_token_confidence([" the", " Eiff", "el"], [0.9, 0.6, 0.5]) == 0.6


def test_original_hf_path_is_case_sensitive_and_vllm_path_is_not():
    tokens, probs = ["The", " Eiff", "el"], [0.9, 0.6, 0.5]
    assert mm.first_token_confidence_original(tokens, probs) == 0.9  # "The" is not "the"
    assert mm.first_token_confidence_original(tokens, probs, case_sensitive=False) == 0.6
    assert mm.first_token_confidence_original([" the", " Eiff", "el"], probs) == 0.6


def test_original_drops_specials_and_a_final_period_and_indexes_tokens():
    # BOS dropped; "the" first word -> the second remaining token.
    assert (
        mm.first_token_confidence_original(
            ["<s>", " the", " Eiff", "el"], [0.1, 0.8, 0.6, 0.5], [True, False, False, False]
        )
        == 0.6
    )
    # A final "." is dropped: " the" "." -> only an article -> 0.
    assert mm.first_token_confidence_original([" the", "."], [0.8, 0.9]) == 0.0
    # A leading newline is a token of its own in the original (index 0), unlike ours.
    assert mm.first_token_confidence_original(["\n", "Paris"], [0.2, 0.7]) == 0.2
    assert mm.first_token_confidence(["\n", "Paris"], [0.2, 0.7]) == 0.7


# --- update success --------------------------------------------------------------------------


def test_original_update_success_is_raw_case_sensitive_startswith():
    assert mm.update_succeeded("Lyonnais", "Lyon", fidelity="original")
    assert not mm.update_succeeded("Lyonnais", "Lyon")
    assert not mm.update_succeeded("lyon", "Lyon", fidelity="original")
    assert mm.update_succeeded("lyon", "Lyon")
    assert not mm.update_succeeded("the Lyon", "Lyon", fidelity="original")
    assert mm.update_success_rate(["Lyonnais", "lyon", "Lyon"], ["Lyon"] * 3, fidelity="original") == pytest.approx(
        2 / 3
    )
    assert mm.update_success_rate(["Lyonnais", "lyon", "Lyon"], ["Lyon"] * 3) == pytest.approx(2 / 3)


# --- stubborn / persuaded: only the answers are cleaned ----------------------------------------


def test_persuaded_and_stubborn_clean_the_answers_but_not_the_gold():
    # clean("Answer: Cats") = "cats". Raw gold: 7 tokens, LCS 1 -> P 1, R 1/7, F = 2/8 = 0.25 <= 0.3.
    # Cleaning the gold as well would leave "cats" -> F 1 -> persuaded.
    gold = "answer answer answer answer answer answer cats"
    assert m.rouge_l(m.clean_answer("Answer: Cats"), gold) == pytest.approx(0.25)
    assert m.rouge_l(m.clean_answer("Answer: Cats"), m.clean_answer(gold)) == pytest.approx(1.0)
    assert not m.is_persuaded("Answer: Cats", gold)
    # Not persuaded, and the cleaned answers agree with and without context -> stubborn.
    assert m.is_stubborn("Answer: Cats", "assistant: cats", gold)
    assert m.stubborn_persuaded_percent(["Answer: Cats"], ["assistant: cats"], [gold]) == (100.0, 0.0)


# --- ties in best-template selection -------------------------------------------------------


def test_best_template_tie_is_decided_exactly():
    # Both means are 3/20 mathematically; in floats (0.1 + 0.2) / 2 > (0.3 + 0.0) / 2.
    assert (0.1 + 0.2) / 2 > (0.3 + 0.0) / 2
    assert mm.best_template_per_relation({("r", 0): [0.3, 0.0], ("r", 1): [0.1, 0.2]}) == {"r": 0}
    # Different counts, equal means (1/3); template 2 is higher.
    scores = {("r", 1): [1 / 3], ("r", 0): [0.1, 0.2, 0.7], ("r", 2): [0.5, 0.5], ("s", 3): [0.0], ("s", 4): [0.0]}
    assert mm.best_template_per_relation(scores) == {"r": 2, "s": 3}
    del scores[("r", 2)]
    assert mm.best_template_per_relation(scores) == {"r": 0, "s": 3}
    assert mm.best_template_per_relation({("r", 0): [0.2, 0.1], ("r", 1): [0.3, 0.0]}) == {"r": 0}
