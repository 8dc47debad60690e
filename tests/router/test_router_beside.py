"""The router beside the audited model in the recency lens: paired on the same questions, by hand."""

from __future__ import annotations

import pytest

from chronoprobe.lenses.recency.metric_records import router_metrics
from chronoprobe.lenses.recency.plain_words import sentences
from chronoprobe.lenses.recency.router_beside import router_beside
from chronoprobe.lenses.recency.rows import RecencyRow
from chronoprobe.records.runlog import Summary
from chronoprobe.router.model import question_key


def _row(q_id: int, gold: str, correct: bool, mode: str = "without") -> RecencyRow:
    return RecencyRow(
        model="m",
        strategy="zero-shot",
        context_mode=mode,
        item_id=f"{q_id}-{mode}",
        q_id=q_id,
        question=f"Question {q_id}?",
        context=None,
        context_index=None,
        n_contexts=0,
        stationarity="Stationary",
        gold=gold,
        prediction=gold if correct else None,
        parsed_by=None,
        correct=correct,
        answer="",
        finish_reason=None,
        template=None,
    )


def test_paired_on_the_questions_the_router_did_not_train_on() -> None:
    # the model is right on questions 1 and 2; the router (class 8 = A-Year) on 1, 3 and 4
    rows = [_row(1, "A-Year", True), _row(2, "Never", True), _row(3, "A-Year", False), _row(4, "A-Year", False)]
    rows += [_row(1, "A-Year", False, mode="with"), _row(5, "A-Year", True)]  # a context row; an unknown question
    predictions = {str(q): (8, question_key(f"Question {q}?")) for q in (1, 2, 3, 4)}
    predictions["2"] = (8, question_key("Question 2?"))
    [found] = router_beside(rows, predictions)
    assert found["n"] == 4
    assert found["model_accuracy"]["value"] == pytest.approx(0.5)
    assert found["router_accuracy"]["value"] == pytest.approx(0.75)
    gap = found["router_minus_model"]
    assert gap["value"] == pytest.approx(0.25) and gap["test"] == "exact McNemar"
    assert gap["ci_low"] < 0.25 < gap["ci_high"]
    # a fingerprint that does not match (another data set's question 1) leaves the question out
    assert router_beside(rows, {"1": (8, "000000000000")}) == []


def test_the_check_sentence_names_the_router_and_what_to_do() -> None:
    rows = [_row(q, "A-Year", q % 10 == 0) for q in range(40)]
    predictions = {str(q): (8, question_key(f"Question {q}?")) for q in range(40)}
    metrics = router_metrics(router_beside(rows, predictions))
    names = {m.name for m in metrics}
    assert names == {"zero-shot.without.router_accuracy", "zero-shot.without.router_minus_model_accuracy"}
    from chronoprobe.lenses.recency.metric_records import metrics as all_metrics

    detail = {
        "runs": [
            {
                "model": "m",
                "strategy": "zero-shot",
                "context_mode": "without",
                "n": 40,
                "accuracy": 0.1,
                "estimates": {"accuracy": {"value": 0.1, "n": 40, "ci_low": 0.04, "ci_high": 0.23}},
            }
        ],
        "router": router_beside(rows, predictions),
    }
    summary = Summary(lens="recency", models=["m"], headline={}, metrics=all_metrics(detail))  # type: ignore[arg-type]
    [sentence] = sentences(summary, "m")
    assert "router shipped with chronoprobe names the right interval for 100.0%" in sentence
    assert "paired, n = 40: +90.0 points" in sentence and "What to do:" in sentence
