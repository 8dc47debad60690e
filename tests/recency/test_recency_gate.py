from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import chronoprobe as cp
from chronoprobe.contract.tool import tool_class
from chronoprobe.datasets.recency_taxonomy import RecencyClass as R
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.lenses.recency.gate import (
    DEFAULT_SAMPLES,
    GateDecision,
    decide_retrieval,
    read_gate_questions,
    recency_gate,
    recency_gate_many,
)
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock


def test_fast_changing_answer_means_retrieve() -> None:
    labels = [R.A_DAY] * 3 + [R.A_WEEK, R.NEVER]
    decision = decide_retrieval(labels, threshold=R.A_YEAR)
    assert decision.retrieve and decision.predicted_class is R.A_DAY
    assert decision.share_within_threshold == pytest.approx(0.8)
    assert decision.distribution == pytest.approx({"A-Day": 0.6, "A-Week": 0.2, "Never": 0.2})
    assert "3/5 samples" in decision.reason and "retrieve" in decision.reason


def test_stable_answer_means_no_retrieval() -> None:
    decision = decide_retrieval([R.NEVER, R.MANY_YEARS, R.NEVER, None], threshold=R.A_YEAR)
    assert not decision.retrieve and decision.predicted_class is R.NEVER and decision.unparseable == 1
    assert decision.share_within_threshold == 0.0


def test_the_threshold_class_itself_counts_as_within() -> None:
    assert decide_retrieval([R.A_YEAR], threshold=R.A_YEAR).retrieve
    assert not decide_retrieval([R.A_FEW_YEARS], threshold=R.A_YEAR).retrieve
    # a split vote: 2 of 4 within -> share 0.5 >= min_share 0.5
    split = [R.A_MONTH, R.NEVER, R.A_DAY, R.NEVER]
    assert decide_retrieval(split, R.A_YEAR).retrieve
    assert not decide_retrieval(split, R.A_YEAR, min_share=0.75).retrieve


def test_nothing_parsed_means_retrieve_to_be_safe() -> None:
    decision = decide_retrieval([None, None], threshold=R.A_YEAR)
    assert decision.retrieve and decision.predicted_class is None and "to be safe" in decision.reason


def test_bad_threshold_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="threshold"):
        recency_gate("Who is the CEO?", model=None, threshold="soonish")  # type: ignore[arg-type]


def test_reason_counts_the_samples_drawn_not_one_greedy_answer() -> None:
    # five samples drawn, only one parsed: this is not "one greedy answer"
    decision = decide_retrieval([R.A_DAY, None, None, None, None], threshold=R.A_YEAR)
    assert "greedy" not in decision.reason
    assert "1/1 samples that parsed; 4 of 5 unparseable" in decision.reason
    assert decision.samples == 5 and decision.unparseable == 4
    # a single label that was sampled, not greedy, is not called greedy either
    assert "greedy" not in decide_retrieval([R.A_DAY], threshold=R.A_YEAR, greedy=False).reason
    assert "one greedy answer" in decide_retrieval([R.A_DAY], threshold=R.A_YEAR).reason
    assert "5 sampled answers" in decide_retrieval([None] * 5, threshold=R.A_YEAR).reason


def test_json_names_the_classes_and_reads_back() -> None:
    decision = decide_retrieval([R.A_DAY, R.A_DAY, R.NEVER], threshold=R.A_FEW_MONTHS)
    record = json.loads(decision.model_dump_json())
    assert record["threshold"] == "A-Few-Months" and record["predicted_class"] == "A-Day"
    assert GateDecision.model_validate_json(decision.model_dump_json()) == decision
    unknown = json.loads(decide_retrieval([None], threshold=R.A_YEAR).model_dump_json())
    assert unknown["predicted_class"] is None and unknown["threshold"] == "A-Year"


def test_cli_and_python_share_one_sample_default() -> None:
    from chronoprobe.lenses.recency.tools import GateToolConfig

    python_default = inspect.signature(recency_gate).parameters["samples"].default
    cli_default = GateToolConfig.model_fields["samples"].default
    assert python_default == cli_default == DEFAULT_SAMPLES
    assert inspect.signature(recency_gate_many).parameters["samples"].default == DEFAULT_SAMPLES


def test_question_files_text_and_jsonl(tmp_path: Path) -> None:
    text = tmp_path / "q.txt"
    text.write_text("Who is the CEO of Apple?\n\n# a comment\nWhat is the capital of France?\n", encoding="utf-8")
    assert read_gate_questions(text) == ["Who is the CEO of Apple?", "What is the capital of France?"]
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"question": "Who is the pope?", "q_id": 3}\n{"question": " Who won? "}\n', encoding="utf-8")
    assert read_gate_questions(jsonl) == ["Who is the pope?", "Who won?"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok?"}\n{"q": 1}\n', encoding="utf-8")
    with pytest.raises(DataError, match="line 2"):
        read_gate_questions(bad)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Qui est le pr\xe9sident ?\n".encode("latin-1"))
    with pytest.raises(DataError, match="UTF-8"):
        read_gate_questions(latin)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match="no questions"):
        read_gate_questions(empty)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chronoprobe.cli.main", "recency", "gate", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["Who?", "--questions", "x.txt"], "not both"),
        ([], "give a question or --questions FILE"),
        (["Who?", "--samples", "0"], "--samples"),
        (["Who?", "--min-share", "1.5"], "--min-share"),
        (["--questions", "/no/such/questions.txt"], "/no/such/questions.txt"),
    ],
)
def test_cli_bad_gate_input_is_one_line(args: list[str], expected: str) -> None:
    done = _cli(*args)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and done.stderr.strip().count("\n") == 0, done.stderr


@pytest.mark.slow
def test_cli_decisions_go_to_stdout_one_per_question(tmp_path: Path) -> None:
    cache = str(tmp_path / "calls.sqlite")
    single = _cli("Who wrote Hamlet?", "--samples", "2", "--cache", cache)
    assert single.returncode == 0, single.stderr
    assert single.stdout.startswith(("RETRIEVE", "NO RETRIEVAL")) and "why:" in single.stdout
    assert "RETRIEV" not in single.stderr and "greedy" not in single.stdout
    questions = tmp_path / "questions.txt"
    questions.write_text(
        "Who wrote Hamlet?\nWhat is the current price of bitcoin?\nWho is the UK prime minister?\n", encoding="utf-8"
    )
    many = _cli("--questions", str(questions), "--samples", "2", "--json", "--cache", cache)
    assert many.returncode == 0, many.stderr
    records = [json.loads(line) for line in many.stdout.splitlines() if line.strip()]
    assert [r["question"] for r in records] == questions.read_text(encoding="utf-8").splitlines()
    for record in records:
        assert record["threshold"] == "A-Year" and record["samples"] == 2
        assert record["predicted_class"] is None or isinstance(record["predicted_class"], str)
    lines = _cli("--questions", str(questions), "--samples", "2", "--cache", cache).stdout.splitlines()
    assert len(lines) == 3 and all(line.split("\t")[-1] in questions.read_text(encoding="utf-8") for line in lines)


def _class_by_subject(prompt: MockPrompt, params: DecodingParams) -> str:
    return "A-Day" if "CEO" in prompt.request else "Never"


def test_produce_gates_each_question_and_the_tool_says_it_as_the_command_does(tmp_path: Path) -> None:
    """``cp.produce("recency.gate")`` is the command: one decision per question of the file, a tab-separated
    line each on stdout, and (never measured) one warning on stderr; two models are refused, naming --model."""
    questions = tmp_path / "q.txt"
    questions.write_text("Who is the CEO of Apple?\nWho wrote Hamlet?\n", encoding="utf-8")
    register_mock("by-subject", _class_by_subject)
    try:
        options: dict[str, Any] = {"questions": questions, "models": "mock:by-subject", "samples": 1}
        gated = cp.produce("recency.gate", cache=tmp_path / "calls.sqlite", **options)
        with pytest.raises(ConfigError, match=r"^--model: the gate uses one model$"):
            cp.produce("recency.gate", question="Who?", models=("mock:by-subject", "mock:echo"))
    finally:
        unregister_mock("by-subject")
    assert [(d.question, d.predicted_class, d.retrieve, d.samples) for d in gated.decisions] == [
        ("Who is the CEO of Apple?", R.A_DAY, True, 1),
        ("Who wrote Hamlet?", R.NEVER, False, 1),
    ]
    assert gated.quality is None and gated.info.spec == "mock:by-subject"
    tool = tool_class("recency.gate").from_options(**options)
    assert tool.answer(gated) == ["RETRIEVE\tA-Day\tWho is the CEO of Apple?", "NO RETRIEVAL\tNever\tWho wrote Hamlet?"]
    [warning] = tool.present(gated)
    assert warning.startswith("[yellow]warning[/]: ") and "mock:by-subject was never measured" in warning
