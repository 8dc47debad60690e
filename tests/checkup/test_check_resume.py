"""A check killed with SIGKILL at three points resumes without redoing a finished call and ends identical.

The points: inside the first lens, between the two lenses (the first one's folder published), inside
the second lens. The model is ``mock:slow`` (tests/check/slow_main.py), a few milliseconds per answer.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from world import World, knower

from chronoprobe.testing import register_mock, unregister_mock
from cli_driver import run_main

SLOW_MAIN = Path(__file__).resolve().parent / "slow_main.py"
AUDIT_CALLS, RECENCY_CALLS = 390 + 3, 93  # the audit asks its 390 questions and 3 on its knowledge cutoff
VOLATILE = {
    "created",
    "seconds",
    "model_calls_made",
    "from_cache",
    "written_first",
    "written_last",
    "threads",
    "call_cache",
    "command",
    "written",
    "handler",
}
"""What differs between two runs of one check: times, paths, new calls, and the mock handler's Python name
(the uninterrupted run calls the same answers in this process, without the pauses)."""


def cached_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


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


def args(out: Path, cache: Path) -> list[str]:
    return [sys.executable, str(SLOW_MAIN), *check_args(out, cache)]


def kill_when(out: Path, cache: Path, ready: Callable[[], bool]) -> None:
    proc = subprocess.Popen(args(out, cache), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the check ended before the kill point"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def scrub(value: object, roots: tuple[str, ...]) -> object:
    """Drop what differs between two runs of the same check (times, paths, counts of new calls)."""
    if isinstance(value, dict):
        return {k: scrub(v, roots) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v, roots) for v in value]
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root, "<out>")
    return value


def contents(out: Path) -> dict[str, object]:
    """Every file of the check folder, JSON files scrubbed, the card by its number cells."""
    found: dict[str, object] = {}
    roots = (str(out), str(out.parent))
    for path in sorted(out.rglob("*")):
        name = str(path.relative_to(out))
        if path.is_dir() or path.name in (".chronoprobe-run", "card.html", "report.md"):
            continue
        if path.suffix == ".json":
            found[name] = scrub(json.loads(path.read_text()), roots)
        elif path.suffix == ".jsonl":
            found[name] = [scrub(json.loads(line), roots) for line in path.read_text().splitlines()]
        elif path.suffix in (".md", ".csv"):
            found[name] = scrub(path.read_text(), roots)
        else:
            found[name] = path.read_bytes()
    card = (out / "card.html").read_text()
    found["card cells"] = sorted(set(part.split(">")[0] for part in card.split('<td class="num" ')[1:]))
    found["card answer"] = card.split('<section class="answer"')[1].split("</section>")[0]
    return found


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
