"""A check killed with SIGKILL at six points resumes without redoing a finished call and ends identical.

The points: inside the first lens, between the two lenses (the first one's folder published), inside
the second lens; then, on a check of one lens, half-way through the atomic write (temporary file written,
not yet renamed) of check.md, of card.html and of the final check.json. The model is ``mock:slow``
(tests/checkup/slow_main.py), a few milliseconds per answer.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from check_contents import cached_rows, contents
from world import World, knower

from chronoprobe.testing import register_mock, unregister_mock
from cli_driver import run_main

pytestmark = pytest.mark.e2e

SLOW_MAIN = Path(__file__).resolve().parent / "slow_main.py"
AUDIT_CALLS, RECENCY_CALLS = 390 + 3, 93  # the audit asks its 390 questions and 3 on its knowledge cutoff


def check_args(out: Path, cache: Path) -> list[str]:
    return [
        "check",
        "--model",
        "mock:slow",
        "--lens",
        "outdated",
        "--lens",
        "recency",
        "--out",
        str(out),
        "--cache",
        str(cache),
    ]


def args(out: Path, cache: Path, lenses: tuple[str, ...] = ("outdated", "recency")) -> list[str]:
    chosen = [part for lens in lenses for part in ("--lens", lens)]
    return [sys.executable, str(SLOW_MAIN), *check_args(out, cache)[:3], *chosen, *check_args(out, cache)[7:]]


def kill_when(
    out: Path, cache: Path, ready: Callable[[], bool], *, lenses: tuple[str, ...] = ("outdated", "recency"), **env: str
) -> None:
    proc = subprocess.Popen(
        args(out, cache, lenses), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **env}
    )
    deadline = time.monotonic() + 120
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the check ended before the kill point"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def test_a_check_killed_three_times_resumes_to_the_same_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    clean, clean_cache = tmp_path / "clean" / "check", tmp_path / "clean.sqlite"
    register_mock("slow", knower(World(), every=2))  # the same answers, in this process and without the pauses
    try:
        assert run_main(monkeypatch, capsys, *check_args(clean, clean_cache)).code == 0
    finally:
        unregister_mock("slow")
    assert cached_rows(clean_cache) == AUDIT_CALLS + RECENCY_CALLS

    out, cache = tmp_path / "killed" / "check", tmp_path / "killed.sqlite"
    kill_when(out, cache, lambda: cached_rows(cache) >= 120)  # inside the audit
    assert 120 <= cached_rows(cache) < AUDIT_CALLS and not (out / "outdated").exists()

    def audit_kept() -> bool:
        try:
            return [e["lens"] for e in json.loads((out / "check.json").read_text())["lenses"]] == ["outdated"]
        except (OSError, ValueError, KeyError):
            return False

    kill_when(out, cache, audit_kept)  # between the lenses
    assert (out / "outdated" / "run.json").is_file() and cached_rows(cache) >= AUDIT_CALLS
    kill_when(out, cache, lambda: cached_rows(cache) >= AUDIT_CALLS + 30)  # inside recency
    before = cached_rows(cache)
    assert AUDIT_CALLS + 30 <= before < AUDIT_CALLS + RECENCY_CALLS

    finished = subprocess.run(args(out, cache), check=True, timeout=300, capture_output=True, text=True)
    assert "outdated: finished earlier in this folder with the same settings; kept, no model calls" in finished.stderr
    assert f"recency: done, {AUDIT_CALLS + RECENCY_CALLS - before} new model calls" in finished.stderr  # none redone
    assert cached_rows(cache) == AUDIT_CALLS + RECENCY_CALLS
    assert not [p.name for p in out.rglob(".*") if ".staging-" in p.name or ".old-" in p.name]
    assert contents(out) == contents(clean)


def test_a_check_killed_while_writing_its_own_files_resumes_to_the_same_folder(tmp_path, monkeypatch, capsys) -> None:
    one = ("recency",)
    clean, clean_cache = tmp_path / "clean" / "check", tmp_path / "clean.sqlite"
    register_mock("slow", knower(World(), every=2))
    try:
        assert run_main(monkeypatch, capsys, *check_args(clean, clean_cache)[:3], "--lens", "recency",
                        *check_args(clean, clean_cache)[7:]).code == 0  # fmt: skip
    finally:
        unregister_mock("slow")

    out, cache, flag = tmp_path / "killed" / "check", tmp_path / "killed.sqlite", tmp_path / "paused"
    for point in ("check.md", "card.html", "check.json:2"):  # check.json's first write lists the finished lens
        flag.unlink(missing_ok=True)
        kill_when(out, cache, flag.exists, lenses=one, PAUSE_BEFORE=point, PAUSE_FLAG=str(flag), SLOW_SECONDS="0")
        assert cached_rows(cache) == RECENCY_CALLS  # every call made before the first kill, none after
        assert [p.name for p in out.glob(f".{point.split(':')[0]}.*.tmp")], f"no half-written {point}"

    finished = subprocess.run(args(out, cache, one), check=True, timeout=300, capture_output=True, text=True)
    assert "recency: kept from earlier" in finished.stderr
    assert cached_rows(cache) == RECENCY_CALLS
    assert not [p.name for p in out.rglob(".*") if p.name.endswith(".tmp") or ".staging-" in p.name]
    assert contents(out) == contents(clean)
