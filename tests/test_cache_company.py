"""The call cache shared with other processes: one process's second connection drops no lock, a transient
SQLite error is retried with a bound, and one that stays is one line naming the cache and the way back."""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path

import pytest

from chronoprobe import cache as cache_module
from chronoprobe.cache import CACHE_RETRIES, CallCache, check_cache_file, held_in_this_process
from chronoprobe.cli.resume import resume_command, with_resume
from chronoprobe.errors import CacheUnavailable, ConfigError
from chronoprobe.models.base import Producer


def _blocker(path: Path) -> sqlite3.Connection:
    """Another connection holding the write lock, as another process's long write would."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return other


@pytest.fixture
def quick_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 0.05)  # SQLite's own wait, before our retries


def test_a_file_held_here_is_never_opened_by_hand(tmp_path: Path) -> None:
    """Closing any descriptor of the file would drop the process's locks on it (docs/scale.md): the header
    check skips a file a live connection of this process holds, and reads one no connection holds."""
    path = tmp_path / "c.sqlite"
    first = CallCache(path)
    assert held_in_this_process(path)
    assert not held_in_this_process(tmp_path / "other.sqlite")
    CallCache(path).put_many("ns", [("k", {"v": 1}, None)])  # a second cache here: the first keeps working
    assert first.get_many(["k"])["k"][0] == {"v": 1}
    first.close()
    del first
    gc.collect()
    assert not held_in_this_process(path)
    path.write_bytes(b"not sqlite at all")
    with pytest.raises(ConfigError, match="is not an SQLite database"):
        check_cache_file(path)


def test_a_write_blocked_for_a_moment_is_retried_and_kept(tmp_path: Path, quick_busy: None) -> None:
    path = tmp_path / "c.sqlite"
    cache = CallCache(path)
    blocker = _blocker(path)
    waits: list[float] = []

    def release(seconds: float) -> None:
        waits.append(seconds)
        blocker.execute("ROLLBACK")  # the other process finishes its write

    cache.sleep = release
    cache.put_many("ns", [("k", {"v": 1}, None)])
    assert waits == [CACHE_RETRIES.backoff(1)]
    assert cache.count() == 1


def test_a_lock_that_stays_is_one_line_after_a_bounded_number_of_tries(tmp_path: Path, quick_busy: None) -> None:
    path = tmp_path / "c.sqlite"
    cache = CallCache(path)
    blocker = _blocker(path)
    waits: list[float] = []
    cache.sleep = waits.append
    with pytest.raises(CacheUnavailable) as raised:
        cache.put_many("ns", [("k", {"v": 1}, None)])
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0]  # 6 attempts, ~15 s at most besides SQLite's own waits
    message = str(raised.value)
    assert message.startswith(f"call cache {path}: cannot be written (database is locked; 6 attempts")
    assert "\n" not in message
    blocker.execute("ROLLBACK")
    assert cache.count() == 0  # the failed batch left nothing half written


def test_the_line_ends_in_the_command_that_resumes() -> None:
    error = CacheUnavailable("call cache /c.sqlite", "cannot be written (database is locked; 6 attempts over 16 s)")
    assert with_resume(error, ["check"]).endswith("rerun the same command to resume")
    error.resume = ("--out", "results/check/my run")
    assert with_resume(error, ["check", "--model", "smollm2"]).endswith(
        "resume with chronoprobe check --model smollm2 --out 'results/check/my run'"
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["outdated", "run", "--limit", "5"], "chronoprobe outdated run --limit 5 --out f"),
        (["outdated", "run", "--out", "old", "--limit", "5"], "chronoprobe outdated run --limit 5 --out f"),
        (["outdated", "run", "--out=old"], "chronoprobe outdated run --out f"),
        (["check", "--output", "x"], "chronoprobe check --output x --out f"),
    ],
)
def test_resume_command_sets_the_folder_once(argv: list[str], expected: str) -> None:
    assert resume_command(argv, "--out", "f") == expected


def test_a_retried_write_stores_its_producer_again(tmp_path: Path, quick_busy: None) -> None:
    """The producer row inserted in a transaction that rolled back is gone: the retry must not reuse its id."""
    path = tmp_path / "c.sqlite"
    cache = CallCache(path)
    producer = Producer(backend="mock", version="1", device="cpu", dtype="float32")
    cache._producer_ids[producer.model_dump_json()] = 7  # as if learned in a transaction that then rolled back
    blocker = _blocker(path)

    def release(seconds: float) -> None:
        blocker.execute("ROLLBACK")

    cache.sleep = release
    cache.put_many("ns", [("k", {"v": 1}, None)], producer=producer)
    assert cache.get_entries(["k"])["k"].producer == producer
