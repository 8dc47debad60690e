"""Progress stays visible when stderr is a log file, not a terminal."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from chronoprobe.cli.common import PROGRESS_EVERY_ENV, PlainProgress


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
    assert lines[0].startswith("outdated smollm2: 120/390 (31%) 00:0") and lines[0].endswith(" elapsed")
    assert lines[1].startswith("outdated smollm2: 390/390 (100%)")
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
