"""chronoprobe's tasks inside the real inspect_ai (chronoprobe[inspect]), offline, and its logs read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="chronoprobe[inspect] is not installed (pip install 'chronoprobe[inspect]')")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from chronoprobe.cli.main import main
from chronoprobe.integrations import inspect_tasks
from chronoprobe.integrations.outdated_items import load_items

pytestmark = pytest.mark.e2e  # the harness libraries

INSPECT = Path(sys.executable).parent / "inspect"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def run_inspect(*args: str, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OFFLINE, "COLUMNS": "400"}
    return subprocess.run(
        [str(INSPECT), *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env, check=False
    )


def run_chronoprobe(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *args])
    try:
        main()
    except SystemExit as stopped:
        return stopped.code if isinstance(stopped.code, int) else 0
    finally:
        capsys.readouterr()
    return 0


def answering(by_sentence: dict[str, str]) -> Any:
    """inspect's mockllm, answering each prompt by the paraphrase it quotes (usage set: no tokenizer download)."""

    def answer(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        prompt = input[-1].text
        text = next((a for sentence, a in by_sentence.items() if sentence in prompt), "no idea")
        output = ModelOutput.from_content(model="mockllm", content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return answer


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {name: m.value for score in log.results.scores for name, m in score.metrics.items()}


@pytest.fixture(scope="module")
def mock_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalLog, Path]:
    """Two facts: paraphrase 1 names the current holder, 2 a past one, 3 nobody (hand-computed below)."""
    items, gold = load_items(limit=2)
    by_sentence = {}
    for item in items:
        answers = gold.answers[item.fact.fact_id]
        current = answers.current()[0].label
        past = next(s.label for s in answers.counted().statements if not s.is_current)
        by_sentence[item.template] = [current, past, "I cannot say"][item.template_index]
    log_dir = tmp_path_factory.mktemp("inspect-logs")
    model = get_model("mockllm/model", custom_outputs=answering(by_sentence))
    [log] = inspect_eval(inspect_tasks.outdated(limit=2), model=model, log_dir=str(log_dir), display="none")
    return log, log_dir


def test_samples_carry_fact_category_and_prompt_kind(mock_log: tuple[EvalLog, Path]) -> None:
    log, _ = mock_log
    assert log.status == "success" and log.samples is not None and len(log.samples) == 6
    first = log.samples[0]
    assert first.metadata["fact_id"] == "countries_byGDP/Italy/President of Italy"
    assert first.metadata["category"] == "countries_byGDP"
    assert first.metadata["prompt_kind"] == "paraphrase 1 of 3"
    assert "As of today, the person serving as President of Italy is" in first.input
    # the scorer is recorded by name and options, not with the snapshot inside
    assert log.eval.scorers is not None
    assert log.eval.scorers[0].options == {"snapshot": None, "facts": None, "aliases": False, "as_of": None}


def test_score_value_is_the_verdict_and_metrics_are_hand_computed(mock_log: tuple[EvalLog, Path]) -> None:
    log, _ = mock_log
    assert log.samples is not None
    values = [s.scores["outdated_verdict"].value for s in log.samples]  # type: ignore[index]
    assert values == ["up-to-date", "outdated", "irrelevant"] * 2
    found = metrics(log)
    # per prompt: 2 of 6 answers each; per fact (soft constraint): both facts have an up-to-date paraphrase
    assert found["up-to-date"] == pytest.approx(1 / 3)
    assert found["outdated"] == pytest.approx(1 / 3)
    assert found["irrelevant"] == pytest.approx(1 / 3)
    assert found["ambiguous"] == 0.0
    assert found["per-fact up-to-date"] == 1.0 and found["per-fact irrelevant"] == 0.0
    assert found["per-fact up-to-date stderr"] == 0.0
    # inspect's clustered stderr: both facts have the same share, so the clusters agree
    assert found["up-to-date stderr"] == pytest.approx(0.0, abs=1e-9)


def test_log_rescored_into_a_run_folder_that_results_and_card_read(
    mock_log: tuple[EvalLog, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log, log_dir = mock_log
    out = tmp_path / "rescored"
    assert (
        run_chronoprobe(monkeypatch, capsys, "outdated", "score", "--generations", str(log_dir), "--out", str(out)) == 0
    )
    run = json.loads((out / "run.json").read_text())
    assert run["kind"] == "outdated run" and run["provenance"]["extra"]["harness"] == "inspect_ai"
    rows = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert log.samples is not None
    assert [r["verdict"] for r in rows] == [s.scores["outdated_verdict"].value for s in log.samples]  # type: ignore[index]
    soft = json.loads((out / "summary.json").read_text())["models"]["mockllm/model"]["per_category"]["all"][
        "soft_constraint"
    ]
    assert soft["up-to-date"] == 2
    table = tmp_path / "results.csv"
    assert run_chronoprobe(monkeypatch, capsys, "results", str(out), "--out", str(table)) == 0
    assert "mockllm/model" in table.read_text()
    card = tmp_path / "card.html"
    assert run_chronoprobe(monkeypatch, capsys, "card", str(out), "--out", str(card)) == 0
    assert card.is_file()


def test_recency_task_scores_with_our_parser(tmp_path: Path) -> None:
    task = inspect_tasks.recency(sample=8)
    golds = [str(s.target) for s in task.dataset]
    guess = Counter(golds).most_common(1)[0][0]
    model = get_model("mockllm/model", custom_outputs=answering({"": f'{{"RecencyLabel": "{guess}"}}'}))
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")
    found = metrics(log)
    assert found["accuracy"] == pytest.approx(golds.count(guess) / len(golds))
    assert found["unparseable"] == 0.0


def test_tasks_are_listed(tmp_path: Path) -> None:
    package = Path(inspect_tasks.__file__).parent
    listed = run_inspect("list", "tasks", cwd=package)
    assert {"inspect_tasks.py@outdated", "inspect_tasks.py@recency"} <= set(listed.stdout.split()), listed.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["chronoprobe/conflicts"], "next-token distributions"),
        (["chronoprobe/outdated", "-T", "snapshot=no-such-snapshot"], "error: snapshot 'no-such-snapshot'"),
        (["chronoprobe/outdated", "-T", "as_of=last-spring"], "error: -T as_of"),
    ],
)
def test_refusals_are_one_line_without_traceback(tmp_path: Path, args: list[str], expected: str) -> None:
    refused = run_inspect("eval", *args, "--model", "mockllm/model", "--log-dir", str(tmp_path), cwd=tmp_path)
    said = [line for line in (refused.stdout + refused.stderr).splitlines() if line.strip()]
    assert len(said) == 1 and expected in said[0], said
    assert not list(tmp_path.glob("*.eval"))


def _tiktoken_offline() -> bool:
    """inspect's mockllm counts tokens with tiktoken's o200k_base, which tiktoken downloads once."""
    probe = "import tiktoken; tiktoken.get_encoding('o200k_base')"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=60, check=False).returncode == 0


def test_inspect_cli_runs_outdated_on_mockllm(tmp_path: Path) -> None:
    if not _tiktoken_offline():
        pytest.skip("inspect's mockllm needs tiktoken's o200k_base file, which is not cached on this offline machine")
    done = run_inspect(
        "eval",
        "chronoprobe/outdated",
        "--model",
        "mockllm/model",
        "--limit",
        "5",
        "--log-dir",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "irrelevant" in done.stdout and list(tmp_path.glob("*.eval"))


@pytest.mark.slow
def test_hf_provider_on_local_smollm2_agrees_with_our_audit(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    our_audit: dict[tuple[str, int], dict[str, Any]],
) -> None:
    """inspect's own hf provider, greedy, on the prepared SmolLM2 folder; its log re-scored and set beside our run."""
    from chronoprobe.models.embedded import converted_gguf, smollm2_gguf

    folder, _ = converted_gguf(smollm2_gguf())
    logs = tmp_path / "logs"
    done = run_inspect(
        "eval", "chronoprobe/outdated", "--model", "hf/local", "-M", f"model_path={folder}", "-M", "device=cpu",
        "-M", "do_sample=false", "--limit", "10", "--log-dir", str(logs), "--display", "plain", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rescored = tmp_path / "rescored"
    code = run_chronoprobe(monkeypatch, capsys, "outdated", "score", "--generations", str(logs), "--out", str(rescored))
    assert code == 0

    from inspect_ai.log import list_eval_logs, read_eval_log

    [log_info] = list_eval_logs(str(logs))
    log = read_eval_log(log_info)
    assert log.samples is not None and len(log.samples) == 10
    in_log = {s.id: s.scores["outdated_verdict"].value for s in log.samples}  # type: ignore[index]
    theirs = {f"{r['fact_id']}#{r['template_index']}": r for r in _rows(rescored)}
    mine = {f"{fact_id}#{index}": row for (fact_id, index), row in our_audit.items()}
    # Same answers, same verdicts: the log's scores are exactly what re-scoring gives.
    assert {k: r["verdict"] for k, r in theirs.items()} == in_log
    agree = sum(mine[k]["verdict"] == r["verdict"] for k, r in theirs.items())
    assert agree / len(theirs) >= 0.9, f"{agree} of {len(theirs)} verdicts agree with chronoprobe outdated run"


def _rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
