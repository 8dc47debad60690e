"""Conflicts summaries and reports give every rate and mean its n and a 95% interval."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conflicts_rows import completion_row, persuasion_row, update_row

from chronoprobe.lenses.conflicts.completion import summarise_completion
from chronoprobe.lenses.conflicts.persuasion import summarise_persuasion
from chronoprobe.lenses.conflicts.report import completion_markdown, persuasion_markdown
from chronoprobe.lenses.conflicts.rows import CompletionRow, PersuasionRow
from chronoprobe.metrics.uncertainty import bootstrap_mean, wilson


def _dq_row(fact: str, counterfactual: bool, cp: float, correct: bool, persuaded: bool) -> PersuasionRow:
    return persuasion_row(
        fact_id=fact,
        counterfactual=counterfactual,
        cp=cp,
        correct_context=correct,
        correct_no_context=fact != "c",
        correct_no_context_original=0.5,
        se_context=cp / 2,
        se_no_context=0.1,
        stubborn=(not persuaded) if counterfactual else None,
        persuaded=persuaded if counterfactual else None,
    )


ROWS = [
    _dq_row("a", False, 0.1, True, False),
    _dq_row("a", True, 1.0, True, True),
    _dq_row("b", False, 0.3, True, False),
    _dq_row("b", True, 2.0, False, False),
    _dq_row("c", False, 0.2, False, False),
    _dq_row("c", True, float("nan"), True, True),
]


def test_persuasion_estimates_by_hand() -> None:
    static = summarise_persuasion(ROWS, ["static"])["static"]
    est = static["estimates"]
    # accuracy with context: 4 of 6 items, two per fact (a: both right, b and c: one each); the clustered
    # variance is below the binomial one here, so the effective size stays 6: Wilson's bounds, clustered
    clustered = {**wilson(4, 6).to_json(), "method": "wilson-clustered"}
    assert est["accuracy_context"] == clustered
    # without: 2 of 3 facts
    assert est["accuracy_no_context"] == wilson(2, 3).to_json()
    # stubborn/persuaded: percentages over the 3 counterfactual items
    assert est["persuaded_pct"]["n"] == 3 and est["persuaded_pct"]["value"] == static["persuaded_pct"]
    assert est["persuaded_pct"]["ci_low"] == pytest.approx(wilson(2, 3, scale=100.0).ci_low)
    # CP: mean over the 5 items with a finite CP; the bootstrap resamples the 3 facts, each with its items
    cp = est["cp"]
    assert cp["method"] == "cluster-bootstrap" and cp["n"] == 5 and cp["value"] == static["cp"]
    sums, sizes = np.array([1.1, 2.3, 0.2]), np.array([2.0, 2.0, 1.0])
    rng, means = np.random.default_rng(0), []
    for _ in range(5):  # 1,000 resamples in batches of 200, as every bootstrap here draws them
        for row in rng.integers(0, 3, size=(200, 3)):
            means.append(sums[row].sum() / sizes[row].sum())
    assert cp["ci_low"] == pytest.approx(np.quantile(means, 0.025)) and cp["ci_high"] == pytest.approx(
        np.quantile(means, 0.975)
    )
    assert cp != bootstrap_mean([0.1, 1.0, 0.3, 2.0, 0.2], point=static["cp"]).to_json()  # items: too narrow
    assert cp["ci_low"] < static["cp"] < cp["ci_high"]
    assert est["cp_counterfactual"]["n"] == 2 and est["se_no_context"]["n"] == 3
    assert summarise_persuasion(ROWS, ["static"])["static"]["estimates"] == est  # seeded: identical reruns
    json.dumps(est, allow_nan=False)


def test_disputed_has_no_no_context_estimate() -> None:
    rows = [r.model_copy(update={"fact_class": "disputed"}) for r in ROWS]
    est = summarise_persuasion(rows, ["disputed"], no_context_accuracy_classes=[])["disputed"]["estimates"]
    assert est["accuracy_no_context"] is None and est["accuracy_context"]["n"] == 6


def test_persuasion_report_adds_interval_columns_and_keeps_the_paper_columns() -> None:
    static = summarise_persuasion(ROWS, ["static"])["static"]
    report = persuasion_markdown({"m": {"static": static}}, ["static"], "t")
    assert "| Model | Static all | Static true ctx | Static counterfactual | Static all 95% CI |" in report
    cp = static["estimates"]["cp"]
    assert f"| m | {static['cp']:.3f} | 0.200 | 1.500 | [{cp['ci_low']:.3f}, {cp['ci_high']:.3f}] (n=5) |" in report
    acc = wilson(4, 6)
    assert f"| m w/context | 0.667 | [{acc.ci_low:.3f}, {acc.ci_high:.3f}] (n=6) |" in report


def _completion_row(i: int, f1: float, prediction: str, confidence: float | None) -> CompletionRow:
    return completion_row(
        fact_id=f"f{i}", relation="P1" if i % 2 else "P2", prediction=prediction, f1=f1, confidence=confidence
    )


def test_completion_estimates_by_hand() -> None:
    rows = [
        _completion_row(0, 1.0, "Paris", 0.9),
        _completion_row(1, 0.0, "Rome", 0.2),
        _completion_row(2, 0.5, "New York", None),
        _completion_row(3, 0.0, "", 0.0),
    ]
    updates = [
        update_row(prediction="Berlin is", new_object="Berlin"),
        update_row(prediction="Madrid", new_object="Lyon"),
    ]
    stats = summarise_completion(rows, updates, ["c"])["c"]
    est = stats["estimates"]
    assert est["f1"]["n"] == 3 and est["f1"]["value"] == stats["f1"]  # the empty prediction is left out
    assert stats["f1"] == pytest.approx(np.mean([100.0, 0.0, 50.0]))
    assert est["confidence"]["n"] == 3 and est["confidence"]["value"] == stats["confidence"]
    assert est["update_success"] == wilson(1, 2).to_json()
    report = completion_markdown({"m": {"c": stats}}, ["c"], "t")
    f1 = est["f1"]
    assert f"[{f1['ci_low']:.2f}, {f1['ci_high']:.2f}] (n=3)" in report
    up = wilson(1, 2)
    assert f"| m | 0.500 | 2 of 1 | [{up.ci_low:.3f}, {up.ci_high:.3f}] (n=2) |" in report


def test_console_headline_shows_interval_and_n() -> None:
    from chronoprobe.lenses.conflicts.lens import headline as _headline
    from chronoprobe.metrics.records import group_metrics
    from chronoprobe.records.runlog import Summary

    def of(numbers: dict) -> Summary:
        return Summary(lens="conflicts", models=["m"], headline={}, metrics=group_metrics("m", "static", numbers))

    static = summarise_persuasion(ROWS, ["static"])["static"]  # CP 0.72, its bootstrap over facts 0.20 to 1.15
    assert _headline(of(static), "m", "static", "dynamicqa") == "CP 0.720 [0.200, 1.150] (n=5)"
    assert _headline(of({"cp": 0.5}), "m", "static", "dynamicqa") == "CP 0.500"  # an old summary without estimates


def test_each_relation_f1_has_its_interval_and_n() -> None:
    rows = [
        _completion_row(0, 1.0, "Paris", 0.9),  # P2
        _completion_row(1, 0.0, "Rome", 0.2),  # P1
        _completion_row(2, 0.5, "New York", None),  # P2
        _completion_row(3, 0.0, "", 0.0),  # P1, empty: left out
        _completion_row(5, 1.0, "Lyon", 0.4),  # P1
    ]
    stats = summarise_completion(rows, [], ["c"])["c"]
    assert stats["f1_per_relation"] == {"P1": 50.0, "P2": 75.0}
    per_relation = stats["estimates"]["f1_per_relation"]
    # P1 scores 0 and 100: resampled means 0, 50, 100 (1/4, 1/2, 1/4), so the interval is [0, 100]
    assert per_relation["P1"] == bootstrap_mean([0.0, 100.0], point=50.0).to_json()
    assert (per_relation["P1"]["n"], per_relation["P1"]["ci_low"], per_relation["P1"]["ci_high"]) == (2, 0.0, 100.0)
    assert (per_relation["P2"]["n"], per_relation["P2"]["ci_low"], per_relation["P2"]["ci_high"]) == (2, 50.0, 100.0)
    report = completion_markdown({"m": {"c": stats}}, ["c"], "t")
    assert "| Model | Class | Relation | F1 | F1 95% CI |" in report
    assert "| m | c | P1 | 50.00 | [0.00, 100.00] (n=2) |" in report


def test_negative_semantic_entropy_is_explained_in_the_report() -> None:
    rows = [r.model_copy(update={"se_context": -0.95}) if r.fact_id == "a" else r for r in ROWS]
    summary = {"m": summarise_persuasion(rows, ["static"])}
    assert "below zero" in persuasion_markdown(summary, ["static"], "t", rows)
    assert "below zero" not in persuasion_markdown({"m": summarise_persuasion(ROWS, ["static"])}, ["static"], "t", ROWS)


def test_the_negative_entropy_sentence_speaks_of_the_table_only_when_the_table_has_one() -> None:
    """One slightly negative item among positive ones: the table's mean and interval stay at or above zero."""
    positive = [r.model_copy(update={"se_context": 1.0, "se_no_context": 1.0}) for r in ROWS]
    rows = [
        r.model_copy(update={"se_context": -0.001}) if r.fact_id == "a" and r.counterfactual else r for r in positive
    ]
    summary = {"m": summarise_persuasion(rows, ["static"])}
    stats = summary["m"]["static"]
    assert stats["se_context"] > 0 and stats["estimates"]["se_context"]["ci_low"] >= 0
    report = persuasion_markdown(summary, ["static"], "t", rows)
    assert "in this table are below zero" not in report
    assert (
        "Every value in this table is at or above zero, but 1 item(s) in items.jsonl" in report
    )  # fact a's counterfactual row (its other row keeps fact a's mean, and every resample's, above zero)
    clean = persuasion_markdown({"m": summarise_persuasion(positive, ["static"])}, ["static"], "t", positive)
    assert "below zero" not in clean
