"""Inspect logs that did not finish, or are damaged, are one line saying what happened (chronoprobe[inspect]).

The first log is real: our task run by inspect's mockllm whose every call fails, as it does offline
when it cannot download its tokenizer file. The others are that log edited and written back by
inspect itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="chronoprobe[inspect] is not installed (pip install 'chronoprobe[inspect]')")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, get_model

from chronoprobe.integrations import inspect_tasks
from cli_driver import run_main

pytestmark = pytest.mark.e2e

FAILURE = "tiktoken could not download o200k_base"


@pytest.fixture(scope="module")
def failed_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real inspect log of our outdated task (2 facts, 6 samples) whose every model call raised."""

    def fails(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        raise RuntimeError(FAILURE)

    log_dir = tmp_path_factory.mktemp("failed-logs")
    model = get_model("mockllm/model", custom_outputs=fails)
    [log] = inspect_eval(inspect_tasks.outdated(limit=2), model=model, log_dir=str(log_dir), display="none")
    assert log.status == "error" and log.location
    return Path(log.location)


def _cancelled(log: EvalLog) -> None:
    log.status = "cancelled"
    log.error = None


def _all_samples_failed(log: EvalLog) -> None:
    log.status = "success"  # what fail_on_error=False leaves: the run finished, each sample with its error
    log.error = None


def _answered(log: EvalLog) -> None:
    log.status, log.error = "success", None
    for sample in log.samples or []:
        sample.error = None
        sample.output = ModelOutput.from_content(model="mockllm/model", content="Sergio Mattarella")


def _index_not_a_number(log: EvalLog) -> None:
    _answered(log)
    assert log.samples
    log.samples[1].metadata["template_index"] = "the second"


def _index_out_of_range(log: EvalLog) -> None:
    _answered(log)
    assert log.samples
    log.samples[0].metadata["template_index"] = 7


CASES: dict[str, tuple[Callable[[EvalLog], None] | None, str]] = {
    "status-error": (
        None,
        f"did not finish (status error; 6 of 6 samples errored); first error: RuntimeError('{FAILURE}')",
    ),
    "cancelled": (
        _cancelled,
        f"did not finish (status cancelled; 6 of 6 samples errored); first error: RuntimeError('{FAILURE}')",
    ),
    "all-samples-failed": (
        _all_samples_failed,
        "finished, but every sample failed (status success; 6 of 6 samples errored)",
    ),
    "template-index-word": (_index_not_a_number, "template_index 'the second' is not an integer"),
    "template-index-range": (_index_out_of_range, "template_index 7 is out of range"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_unusable_inspect_log_is_one_line_saying_what_happened(
    case: str, failed_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, expected = CASES[case]
    logs = tmp_path / "logs"
    logs.mkdir()
    path = logs / failed_log.name
    log = read_eval_log(str(failed_log))
    if edit is not None:
        edit(log)
    write_eval_log(log, str(path))
    (logs / "notes.json").write_bytes(b'\xff\xfe not text {"eval" "version"')  # a stray file beside it is no log
    out = tmp_path / "scored"
    ran = run_main(monkeypatch, capsys, "outdated", "score", "--generations", str(logs), "--out", str(out))
    lines = [line for line in ran.err.splitlines() if line.strip()]
    assert ran.code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {path}"), lines
    assert expected in lines[0], lines
    assert "no sample carries" not in lines[0]
    assert not out.exists()


def test_a_cutoff_names_the_model_as_the_inspect_log_does(
    failed_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = read_eval_log(str(failed_log))
    _answered(log)
    path = tmp_path / failed_log.name
    write_eval_log(log, str(path))
    base = ("outdated", "score", "--generations", str(path))
    # the folder's name is no model's name: the log calls it mockllm/model
    refused = run_main(
        monkeypatch, capsys, *base, "--out", str(tmp_path / "no"), "--cutoff", f"{tmp_path.name}=2023-06"
    )
    assert refused.code == 2 and f"no model named {tmp_path.name!r}; models: mockllm/model" in refused.err
    assert not (tmp_path / "no").exists()
    out = tmp_path / "scored"
    ran = run_main(monkeypatch, capsys, *base, "--out", str(out), "--cutoff", "mockllm/model=2023-06")
    assert ran.code == 0, ran.text
    assert "mockllm/model: published cutoff 2023-06 (--cutoff)" in ran.err
    block = json.loads((out / "summary.json").read_text())["models"]["mockllm/model"]
    assert block["knowledge_date"]["published_cutoff"] == "2023-06"
