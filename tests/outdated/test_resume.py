"""A run killed with SIGKILL resumes without redoing finished calls and ends identical."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ARGS = ["outdated", "run", "--limit", "4", "--batch-size", "2", "--max-new-tokens", "8"]


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "chronoprobe.cli.main", *args]


def cached_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def responses(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "responses.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One uninterrupted run (its folder and its cache), the reference both tests compare against."""
    folder = tmp_path_factory.mktemp("clean")
    out, cache = folder / "out", folder / "calls.sqlite"
    subprocess.run(cli(*ARGS, "--out", str(out), "--cache", str(cache)), check=True, timeout=600)
    return out, cache


def test_kill_and_resume_matches_uninterrupted_run(tmp_path, clean):
    clean_out, clean_cache = clean
    total = cached_rows(clean_cache)
    assert total == 12 + 3  # 4 facts x 3 paraphrases, and 3 questions on its knowledge cutoff

    out, cache = tmp_path / "killed", tmp_path / "killed.sqlite"
    proc = subprocess.Popen(cli(*ARGS, "--out", str(out), "--cache", str(cache)), stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while cached_rows(cache) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    done_before_kill = cached_rows(cache)
    assert 4 <= done_before_kill < total, "the kill must land mid-run"
    assert not out.exists(), "a killed run must not leave a report behind"

    subprocess.run(cli(*ARGS, "--out", str(out), "--cache", str(cache)), check=True, timeout=600)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["provenance"]["extra"]["model_calls_made"]["smollm2"] == total - done_before_kill
    assert responses(out) == responses(clean_out)
    clean_models = json.loads((clean_out / "summary.json").read_text())["models"]
    assert summary["models"] == clean_models


def test_warm_cache_run_makes_no_model_calls(tmp_path, clean):
    """The first run is the module's uninterrupted one; the second runs on a copy of its cache."""
    first, clean_cache = clean
    cache = tmp_path / "c.sqlite"
    with sqlite3.connect(clean_cache) as source, sqlite3.connect(cache) as copy:
        source.backup(copy)
    subprocess.run(cli(*ARGS, "--out", str(tmp_path / "second"), "--cache", str(cache)), check=True, timeout=600)
    second = json.loads((tmp_path / "second" / "summary.json").read_text())
    assert second["provenance"]["extra"]["model_calls_made"] == {"smollm2": 0}
    assert responses(first) == responses(tmp_path / "second")
