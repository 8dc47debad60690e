"""``chronoprobe recency eval`` end to end on a mock model: accuracies known from the handler's answers."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.cli.main import main
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock

pytestmark = pytest.mark.e2e

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "recency_sample.json"


def recency_answers(prompt: MockPrompt, params: DecodingParams) -> str:
    """Never with a context, A-Day without (unsure about the Berlin Wall); few-shot answers run on into
    another question, which the few-shot stop string cuts off."""
    question, _, rest = prompt.request.rsplit("Question: ", 1)[1].partition("\n")
    if rest.startswith("Context: "):
        answer = '{"label": "Never"}'
    else:
        answer = "I am not sure." if "Berlin Wall" in question else "A-Day"
    few_shot = "Solved examples" in prompt.request
    return answer + ("\nQuestion: Is this Never?" if few_shot else "")


@pytest.fixture(autouse=True)
def mock_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    register_mock("recency-e2e", recency_answers)
    yield
    unregister_mock("recency-e2e")


def test_recency_eval_on_a_mock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "recency"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "chronoprobe",
            "recency",
            "eval",
            "--data",
            str(SAMPLE),
            "--model",
            "mock:recency-e2e",
            "--strategy",
            "zero-shot",
            "--strategy",
            "few-shot",
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "c.sqlite"),
        ],
    )
    try:
        main()
    except SystemExit as stopped:
        assert stopped.code in (0, None), capsys.readouterr().err

    rows = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * (14 + 19)  # per strategy: 14 questions without context, 19 label contexts with
    assert not any("Question:" in r["answer"] for r in rows)  # cut at the few-shot stop string
    berlin = [r for r in rows if r["q_id"] == 3540 and r["context_mode"] == "without"]
    assert [(r["prediction"], r["correct"]) for r in berlin] == [(None, False), (None, False)]
    assert {r["prediction"] for r in rows if r["context_mode"] == "with"} == {"Never"}

    summary = json.loads((out / "summary.json").read_text())
    runs = {(r["strategy"], r["context_mode"]): r for r in summary["runs"]}
    assert set(runs) == {(s, c) for s in ("zero-shot", "few-shot") for c in ("with", "without")}
    for strategy in ("zero-shot", "few-shot"):
        without, with_ = runs[(strategy, "without")], runs[(strategy, "with")]
        assert without["model"] == "mock:recency-e2e"
        # Without context: A-Day is right for two questions and one class away for a third (A-Few-Days).
        assert (without["n"], without["unparseable"]) == (14, 1)
        assert (without["accuracy"], without["tolerant_accuracy"]) == pytest.approx((2 / 14, 3 / 14))
        # With context: Never is right for three contexts and one class away for two (Many-Years).
        assert (with_["n"], with_["unparseable"]) == (19, 0)
        assert (with_["accuracy"], with_["tolerant_accuracy"]) == pytest.approx((3 / 19, 5 / 19))
    assert summary["provenance"]["models"][0]["backend"] == "mock"
    report = (out / "report.md").read_text()
    assert "mock:recency-e2e" in report
    assert (out / "confusion_zero-shot_with.png").stat().st_size > 1000


def test_two_models_are_told_apart_in_every_report_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "two"
    argv = [
        "chronoprobe",
        "recency",
        "eval",
        "--data",
        str(SAMPLE),
        "--model",
        "mock:recency-e2e",
        "--model",
        "mock:constant=Never",
        "--strategy",
        "zero-shot",
        "--context-mode",
        "without",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "c.sqlite"),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    try:
        main()
    except SystemExit as stopped:
        assert stopped.code in (0, None), capsys.readouterr().err
    report = (out / "report.md").read_text()
    for section in ("## Per-class F1", "## How answers were parsed"):
        body = report.split(section, 1)[1].split("\n## ", 1)[0]
        rows = [line for line in body.splitlines() if line.startswith("|")][2:]
        assert len(rows) == 2
        assert any("recency-e2e" in row for row in rows) and any("constant=Never" in row for row in rows)
