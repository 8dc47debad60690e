"""``recency route``, ``recency gate --router trained`` and ``chronoprobe.route`` end to end with the shipped
weights and the embedded MiniLM: the same decisions three ways, and standard input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import chronoprobe as cp
from cli_driver import run_main

pytestmark = pytest.mark.e2e

QUESTIONS = [
    "What is the current price of Bitcoin?",
    "When was the bass player of Miles Davis's first quintet born?",
    "Who is the head of state of France currently?",
]


def test_route_cli_json_matches_the_api_and_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"question": q}) + "\n" for q in QUESTIONS), encoding="utf-8")
    ran = run_main(monkeypatch, capsys, "recency", "route", "--questions", str(questions), "--json")
    assert ran.code == 0, ran.text
    records = [json.loads(line) for line in ran.out.splitlines() if line.startswith("{")]
    assert [r["question"] for r in records] == QUESTIONS
    api = [d.model_dump(mode="json") for d in cp.route(QUESTIONS)]
    for record, expected in zip(records, api, strict=True):
        assert record.pop("gate_quality") is None
        assert record["retrieve"] == expected["retrieve"] and record["predicted_class"] == expected["predicted_class"]
        assert record["share_within_threshold"] == pytest.approx(expected["share_within_threshold"], abs=1e-4)
        assert sum(record["distribution"].values()) == pytest.approx(1.0, abs=1e-4)
        assert record["router"] == "trained" and record["cut_off"] == 0.5 and record["threshold"] == "A-Year"
    assert records[0]["retrieve"] and not records[1]["retrieve"]  # a price now; a birth date never changes
    gated = run_main(monkeypatch, capsys, "recency", "gate", "--questions", str(questions), "--json")
    assert gated.code == 0, gated.text
    assert [json.loads(line) for line in gated.out.splitlines() if line.startswith("{")] == [
        {**r, "gate_quality": None} for r in records
    ]


def test_route_reads_standard_input_and_the_cut_off_moves_the_decision(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "chronoprobe.cli.main", "recency", "route", "--questions", "-"]
    done = subprocess.run(command, input="\n".join(QUESTIONS) + "\n", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith("RETRIEVE\t") and lines[1].startswith("NO RETRIEVAL\t")
    assert "grouped 5-fold CV" in done.stderr
    share = cp.route(QUESTIONS[2])[0].share_within_threshold
    assert share is not None
    assert 0 < share < 0.9
    assert cp.route(QUESTIONS[2], min_share=share * 0.9)[0].retrieve
    assert not cp.route(QUESTIONS[2], min_share=share * 1.1)[0].retrieve
