"""Table 6 / Table 7 numbers computed by hand from synthetic per-item rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from recency_rows import row, write_report

from chronoprobe.lenses.recency.summary import summarise, transition_pairs
from chronoprobe.provenance import Provenance

ROWS = [
    # stationary: without 1/2 right, with 2/2 right
    row(1, "without", True, "A-Day", "A-Day"),
    row(2, "without", True, "Never", "Many-Years"),
    row(1, "with", True, "A-Day", "A-Day", 0),
    row(2, "with", True, "Never", "Never", 0),
    # non-stationary q3 (2 contexts) and q4 (3 contexts)
    row(3, "without", False, "A-Year", "A-Year"),
    row(4, "without", False, "A-Week", None),
    row(3, "with", False, "A-Year", "A-Year", 0),
    row(3, "with", False, "A-Few-Years", "A-Few-Years", 1),
    row(4, "with", False, "A-Week", "A-Week", 0),
    row(4, "with", False, "A-Month", "A-Week", 1),
    row(4, "with", False, "A-Few-Months", "A-Few-Months", 2),
]


def test_table6_by_hand() -> None:
    table = {e["stationarity"]: e for e in summarise(ROWS)["table6"]}
    s, ns = table["Stationary"], table["Non-Stationary"]
    assert (s["accuracy_with"], s["accuracy_without"]) == (1.0, 0.5)
    assert s["accuracy_delta_pct"] == pytest.approx(100.0)
    # stationary F1 without: classes A-Day (1), Never (0: FN), Many-Years (0: FP) -> 1/3; with: 1.0
    assert s["f1_without"] == pytest.approx(1 / 3) and s["f1_with"] == 1.0
    assert s["f1_delta_pct"] == pytest.approx(200.0)
    # non-stationary: with 4/5 right, without 1/2 -> +60 %
    assert ns["accuracy_with"] == pytest.approx(0.8) and ns["accuracy_without"] == 0.5
    assert ns["accuracy_delta_pct"] == pytest.approx(60.0)
    assert (ns["n_with"], ns["n_without"]) == (5, 2)


def test_table7_by_hand() -> None:
    pairs = transition_pairs(ROWS)
    # q3: (0,1); q4: (0,1), (0,2), (1,2)
    assert [(a.q_id, a.context_index, b.context_index) for a, b in pairs] == [
        (3, 0, 1),
        (4, 0, 1),
        (4, 0, 2),
        (4, 1, 2),
    ]
    t7 = summarise(ROWS)["table7"][0]
    assert t7["pairs"] == 4 and t7["questions"] == 2
    # RL1 rows: q3c0 ok, q4c0 ok, q4c0 ok, q4c1 wrong -> 3/4; RL2 rows: q3c1 ok, q4c1 wrong, q4c2 ok, q4c2 ok -> 3/4
    assert t7["rl1_accuracy"] == pytest.approx(0.75) and t7["rl2_accuracy"] == pytest.approx(0.75)
    # both right: q3 (0,1) and q4 (0,2) -> 2/4
    assert t7["transition_accuracy"] == pytest.approx(0.5)
    assert t7["all_contexts_right"] == pytest.approx(0.5)  # q3 yes, q4 no


def test_runs_report_unparseable_counts() -> None:
    runs = {r["context_mode"]: r for r in summarise(ROWS)["runs"]}
    assert runs["without"]["unparseable"] == 1 and runs["without"]["unparseable_rate"] == pytest.approx(0.25)
    assert runs["without"]["accuracy"] == pytest.approx(0.5)
    # A-Week for A-Month is two classes away (A-Few-Weeks between): 6 of 7 within one class
    assert runs["with"]["tolerant_accuracy"] == pytest.approx(6 / 7)
    assert runs["without"]["confusion"][3][12] == 0 and runs["without"]["confusion"][4][12] == 1


@pytest.mark.e2e
def test_outputs_are_written_with_provenance(tmp_path: Path) -> None:
    paths = write_report(tmp_path, ROWS, Provenance(extra={"dataset": "synthetic"}))
    report = paths["report"].read_text()
    assert "Table 6" in report and "Table 7" in report and "+60.0%" in report and "## Provenance" in report
    assert (tmp_path / "confusion_zero-shot_with.png").read_bytes()[:4] == b"\x89PNG"
    assert len(paths["items"].read_text().splitlines()) == len(ROWS)
    import json

    summary = json.loads(paths["summary"].read_text())
    assert summary["provenance"]["extra"]["dataset"] == "synthetic"
