"""Progress stays visible when stderr is a log file, not a terminal."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from chronoprobe.progress_bars import PlainProgress
from chronoprobe.progress_lines import PROGRESS_EVERY_ENV, ProgressLines, progress_every
from chronoprobe.testing import register_mock, unregister_mock
from cli_driver import run_main


def test_plain_progress_prints_periodic_lines_and_a_final_one() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=60)
    with PlainProgress(console, every=0.0) as progress:
        task = progress.add_task("outdated smollm2", total=390)
        progress.advance(task, 120)
        progress.advance(task, 270)
        open_ended = progress.add_task("querying Wikidata", total=None)
        progress.advance(open_ended, 7)
    lines = buffer.getvalue().splitlines()
    assert lines[0].startswith("outdated smollm2: 120/390 (31%) 00:0") and " elapsed, " in lines[0]
    assert ", ETA " in lines[0] and "/s" in lines[0]
    assert lines[1].startswith("outdated smollm2: 390/390 (100%)") and "ETA" not in lines[1]  # nothing left
    assert lines[2].startswith("querying Wikidata: 7 done")
    assert len(lines) == 3  # a finished task is not repeated at the end
    assert "━" not in buffer.getvalue()


def test_plain_progress_is_rate_limited_but_always_ends_with_a_line() -> None:
    buffer = io.StringIO()
    with PlainProgress(Console(file=buffer, force_terminal=False), every=3600.0) as progress:
        task = progress.add_task("recency gate", total=10)
        for _ in range(4):
            progress.advance(task, 1)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("recency gate: 4/10 (40%)")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_line_comes_every_interval_even_while_a_batch_runs() -> None:
    """The ticker's rule: a running task gets a line once ``every`` seconds pass, advanced or not."""
    clock, lines = Clock(), list[str]()
    progress = ProgressLines(lines.append, every=10.0, clock=clock)
    task = progress.add("smollm2", 390)
    clock.now += 4
    progress.tick()
    assert lines == []  # not due yet
    clock.now += 6
    progress.tick()
    assert lines == ["smollm2: 0/390 (0%) 00:10 elapsed"]  # nothing done yet: no rate, no ETA
    clock.now += 10
    progress.advance(task, 130)  # 130 in 20 s: 6.5/s, 260 left: 40 s
    assert lines[-1] == "smollm2: 130/390 (33%) 00:20 elapsed, 6.5/s, ETA 00:40"
    clock.now += 5
    progress.advance(task, 10)
    progress.tick()
    assert len(lines) == 2  # the last line is 5 s old
    clock.now += 5
    progress.tick()
    assert lines[-1] == "smollm2: 140/390 (36%) 00:30 elapsed, 4.7/s, ETA 00:53"
    progress.advance(task, 250)
    assert lines[-1] == "smollm2: 390/390 (100%) 00:30 elapsed, 13.0/s"
    clock.now += 60
    progress.tick()
    progress.close()
    assert len(lines) == 4  # a finished task is told once


def test_progress_every_defaults_to_eight_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROGRESS_EVERY_ENV, raising=False)
    assert progress_every() == 8.0  # under the 10 s a pipe may go without a line
    monkeypatch.setenv(PROGRESS_EVERY_ENV, "2.5")
    assert progress_every() == 2.5
    monkeypatch.setenv(PROGRESS_EVERY_ENV, "soon")
    assert progress_every() == 8.0  # under the 10 s a pipe may go without a line


def _slow_answer(prompt: object, params: object) -> str:
    time.sleep(0.3)  # one answer per batch below: the ticker must speak while it waits
    return "Paris"


def _progress_lines(text: str, task: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(re.escape(task) + r": \d+/\d+ \(", line)]


@pytest.fixture
def slow_mock() -> Iterator[str]:
    register_mock("slow-paris", _slow_answer)
    yield "mock:slow-paris"
    unregister_mock("slow-paris")


@pytest.mark.e2e
def test_a_piped_run_prints_progress_lines_while_it_works(
    slow_mock: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """stderr is not a terminal here (captured): plain lines with rate and ETA, from the ticker too."""
    monkeypatch.setenv(PROGRESS_EVERY_ENV, "0.02")
    args = ["outdated", "run", "--model", slow_mock, "--limit", "1", "--batch-size", "1", "--no-claimed-cutoff"]
    ran = run_main(monkeypatch, capsys, *args, "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "run"))
    assert ran.code == 0, ran.text
    lines = _progress_lines(ran.err, slow_mock)
    assert lines[0].startswith(f"{slow_mock}: 0/3 (0%)")  # before the first answer came back
    assert any(", ETA " in line and "/s" in line for line in lines)
    assert lines[-1].startswith(f"{slow_mock}: 3/3 (100%)")
    assert "━" not in ran.err


@pytest.mark.e2e
def test_the_api_logs_the_progress_on_stderr_and_is_quiet_when_asked(
    slow_mock: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import chronoprobe as cp

    monkeypatch.setenv(PROGRESS_EVERY_ENV, "0.02")
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # a script that configured no logging (pytest did)
    cache = tmp_path / "c.sqlite"
    cp.run("outdated", slow_mock, limit=1, batch_size=1, claimed_cutoff=False, out=tmp_path / "a", cache=cache)
    out, err = capfd.readouterr()
    assert out == ""
    lines = _progress_lines(err, slow_mock)
    assert lines and lines[-1].startswith(f"{slow_mock}: 3/3 (100%)"), err
    assert not logging.getLogger("chronoprobe.progress").handlers  # the stderr handler was for the run only
    cp.run("outdated", slow_mock, limit=1, out=tmp_path / "b", cache=cache, progress=False)
    assert capfd.readouterr() == ("", "")


@pytest.mark.slow
def test_progress_lines_reach_a_log_file(tmp_path: Path) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_text("Who wrote Hamlet?\nWho is the pope?\nWhat is the price of gold?\n", encoding="utf-8")
    log = tmp_path / "stderr.log"
    with log.open("w", encoding="utf-8") as stderr:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "chronoprobe.cli.main",
                "recency",
                "gate",
                "--questions",
                str(questions),
                "--samples",
                "1",
                "--batch-size",
                "1",
                "--cache",
                str(tmp_path / "calls.sqlite"),
            ],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=300,
            env={**os.environ, PROGRESS_EVERY_ENV: "0"},
        )
    assert done.returncode == 0, log.read_text(encoding="utf-8")
    lines = log.read_text(encoding="utf-8").splitlines()
    assert [line.split(" (")[0] for line in lines if line.startswith("recency gate:")] == [
        "recency gate: 1/3",
        "recency gate: 2/3",
        "recency gate: 3/3",
    ]
    assert len(done.stdout.splitlines()) == 3


def _bars_on(hf_logging: Any) -> None:
    import warnings

    with warnings.catch_warnings():  # the hub warns that its own switch, read at import, says off
        warnings.simplefilter("ignore")
        hf_logging.enable_progress_bar()


def test_third_party_load_bars_are_turned_off_unless_the_user_wants_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers.utils import logging as hf_logging

    from chronoprobe.progress_lines import quiet_third_party_output

    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    _bars_on(hf_logging)  # transformers imported (and its bars on) before chronoprobe ran
    quiet_third_party_output()
    assert not hf_logging.is_progress_bar_enabled()  # no "Loading weights" bar
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "0")  # the user asked for them
    _bars_on(hf_logging)
    quiet_third_party_output()
    assert hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()


def test_a_slow_step_without_counts_gets_a_line_and_a_quick_one_none() -> None:
    from chronoprobe.progress_lines import line_if_slow

    lines: list[str] = []
    with line_if_slow(lines.append, "loading smollm2 ...", 3600.0):
        pass  # loaded (or failed) long before the interval: no line
    assert lines == []
    with line_if_slow(lines.append, "loading smollm2 ...", 0.0):  # interval 0: every step is told
        assert lines == ["loading smollm2 ..."]
