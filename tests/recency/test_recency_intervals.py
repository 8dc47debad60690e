"""Recency summaries and reports give every rate its n and a 95% interval, identical on reruns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recency_rows import row, write_report

from chronoprobe.lenses.recency.summary import summarise
from chronoprobe.metrics.uncertainty import wilson
from chronoprobe.provenance import Provenance

ROWS = [
    row(1, "without", True, "A-Day", "A-Day"),
    row(2, "without", True, "Never", "Many-Years"),
    row(3, "without", False, "A-Year", "A-Year"),
    row(4, "without", False, "A-Week", None),
    row(1, "with", True, "A-Day", "A-Day", 0),
    row(3, "with", False, "A-Year", "A-Year", 0),
    row(3, "with", False, "A-Few-Years", "A-Few-Years", 1),
    row(4, "with", False, "A-Week", "A-Week", 0),
    row(4, "with", False, "A-Month", "A-Week", 1),
]


def test_every_rate_has_an_estimate_equal_to_it() -> None:
    summary = summarise(ROWS)
    runs = {r["context_mode"]: r for r in summary["runs"]}
    without = runs["without"]
    assert without["estimates"]["accuracy"] == wilson(2, 4).to_json()
    assert without["estimates"]["unparseable_rate"] == wilson(1, 4).to_json()
    for run in summary["runs"]:
        for key in ("accuracy", "tolerant_accuracy", "macro_f1", "tolerant_f1", "unparseable_rate"):
            assert run["estimates"][key]["value"] == run[key] and run["estimates"][key]["n"] == run["n"]
        assert run["Stationary"]["estimates"]["accuracy"]["n"] == run["Stationary"]["n"]
    for entry in summary["table6"]:
        for key in ("accuracy_with", "accuracy_without", "f1_with", "f1_without"):
            assert entry["estimates"][key]["value"] == entry[key]
    t7 = summary["table7"][0]
    assert (
        t7["estimates"]["transition_accuracy"] == wilson(1, 2).to_json() and t7["pairs"] == 2
    )  # q3 (0,1) right, q4 (0,1) not
    assert t7["estimates"]["all_contexts_right"]["n"] == t7["questions"] == 2
    json.dumps(summary, allow_nan=False)
    assert summarise(ROWS) == summary  # seeded bootstrap: identical reruns


@pytest.mark.e2e
def test_report_cells_read_value_and_interval(tmp_path: Path) -> None:
    paths = write_report(tmp_path / "first", ROWS, Provenance())
    report = paths["report"].read_text()
    acc = wilson(2, 4)
    assert f"| m | zero-shot | without | 4 | 0.500 [{acc.ci_low:.3f}, {acc.ci_high:.3f}] |" in report
    again = write_report(tmp_path / "again", ROWS, Provenance())
    first = json.loads(paths["summary"].read_text())
    second = json.loads(again["summary"].read_text())
    assert [r["estimates"] for r in first["runs"]] == [r["estimates"] for r in second["runs"]]


@pytest.mark.e2e
def test_table6_delta_and_per_class_f1_have_intervals(tmp_path: Path) -> None:
    from chronoprobe.metrics.recency import delta_percent_estimates

    summary = summarise(ROWS)
    stationary = next(e for e in summary["table6"] if e["stationarity"] == "Stationary")
    # q1 right with and without; q2 only without (wrong): accuracy 1 vs 1/2, Δ% +100 over 2 questions
    assert stationary["accuracy_delta_pct"] == 100.0
    delta = stationary["estimates"]["accuracy_delta_pct"]
    assert (delta["value"], delta["n"], delta["method"]) == (100.0, 2, "bootstrap")
    assert delta == (
        delta_percent_estimates(
            [(1, 0, 0)], [(1, 0, 0), (2, 11, 10)], {"accuracy": 100.0, "f1": stationary["f1_delta_pct"]}
        )["accuracy"].to_json()
    )
    without = next(r for r in summary["runs"] if r["context_mode"] == "without")
    assert set(without["per_class_f1_estimates"]) == set(without["per_class_f1"])
    day = without["per_class_f1_estimates"]["A-Day"]  # q1: 1 right of the 1 answer that involves A-Day
    assert (day["value"], day["n"], day["ci_high"]) == (1.0, 1, 1.0)
    report = write_report(tmp_path, ROWS, Provenance())["report"].read_text()
    assert f"+100.0% [{delta['ci_low']:.1f}, {delta['ci_high']:.1f}] (n=2)" in report
    low = day["ci_low"]
    assert f"1.00 [{low:.2f}, 1.00] (n=1)" in report
