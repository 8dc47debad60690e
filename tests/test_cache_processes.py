"""The call cache under company, with real processes: nothing reported written is lost, nobody crashes on
another's activity, and the test suite itself never reaches the user's own cache (docs/scale.md)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from chronoprobe import cache as cache_module
from chronoprobe.cache import CallCache
from chronoprobe.retry import RetryPolicy
from cli_driver import run_main, said_lines

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[1]
OPEN_AND_CLOSE = "import sys\nfrom chronoprobe.cache import CallCache\nCallCache(sys.argv[1]).close()"
COUNT = "import sys\nfrom chronoprobe.cache import CallCache\nprint(CallCache(sys.argv[1]).count())"


def _python(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_a_second_cache_in_one_process_keeps_its_writes_visible_to_others(tmp_path: Path) -> None:
    """The cause of the lost answers: a second CallCache on the file (``check`` opens one per lens) read its
    header by hand, which dropped the process's locks; another process's close then took itself for the last,
    checkpointed and deleted the WAL the first went on writing into. Before the fix the third process saw 1."""
    path = tmp_path / "c.sqlite"
    first = CallCache(path)
    first.put_many("ns", [("a", {"v": 1}, None)])
    second = CallCache(path)
    _python(OPEN_AND_CLOSE, str(path))
    assert Path(f"{path}-wal").exists()  # nobody took itself for the last connection
    first.put_many("ns", [("b", {"v": 2}, None)])
    second.put_many("ns", [("c", {"v": 3}, None)])
    assert _python(COUNT, str(path)) == "3"


def test_many_processes_with_kills_lose_nothing_reported_written(tmp_path: Path) -> None:
    """scripts/cache_stress.py at a small size: 3 writers of 1 MB and 185 KB distributions (killed with SIGKILL
    and restarted every few seconds), a reader, a process truncating the WAL while it opens and closes, and
    ``chronoprobe check`` over two lenses of a mock model, which must succeed."""
    sizes = ["--seconds", "30", "--writers", "3", "--readers", "1", "--kill-every", "3", "--checks", "1"]
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "cache_stress.py"), str(tmp_path / "c.sqlite"), *sizes],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["crashed"] == []
    assert report["lost"] == 0
    assert report["kills"] >= 5
    assert report["reported_written"] >= 20  # it did write, between the kills
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_slice_of_the_suite_leaves_the_users_home_untouched(tmp_path: Path) -> None:
    """Run with no CHRONOPROBE_HOME and HOME pointing at a fresh folder, the cache tests write nothing there:
    tests/conftest.py's private home is in place before any test (or CLI it starts) resolves a path."""
    user = tmp_path / "user"
    (user / ".cache").mkdir(parents=True)
    before = sorted(p.relative_to(user) for p in user.rglob("*"))
    env = {k: v for k, v in os.environ.items() if k not in {"CHRONOPROBE_HOME", "XDG_CACHE_HOME"}}
    env.update(HOME=str(user), PYTHONPATH=os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")]))
    slice_ = ["tests/test_cache.py", "tests/test_cache_company.py", "tests/test_private_home.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "t"), *slice_],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert sorted(p.relative_to(user) for p in user.rglob("*")) == before


def test_a_cache_locked_through_every_retry_is_one_line_with_the_command_that_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another process holds the write lock past every retry (short ones here): the run stops with one line that
    names the cache and the command to run again, with the folder the run was writing."""
    monkeypatch.chdir(tmp_path)  # the run's own folder goes under results/ here
    cache = tmp_path / "c.sqlite"
    CallCache(cache).close()
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 0.05)
    monkeypatch.setattr(cache_module, "CACHE_RETRIES", RetryPolicy(max_retries=2, backoff_s=0.01))
    blocker = sqlite3.connect(cache, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process's long write
    try:
        ran = run_main(
            monkeypatch, capsys, "outdated", "run", "-m", "mock:constant=Paris", "--limit", "2", "--cache", str(cache)
        )
    finally:
        blocker.execute("ROLLBACK")
    lines = said_lines(ran.err)
    assert ran.code == 2 and "Traceback" not in ran.err, ran.err
    [line] = [ln for ln in lines if ln.startswith("error:")]
    assert line.startswith(f"error: call cache {cache}: cannot be ")
    assert "(database is locked; 3 attempts over" in line
    folder = line.rsplit(" --out ", 1)[1]
    assert line.endswith(
        f"resume with chronoprobe outdated run -m mock:constant=Paris --limit 2 --cache {cache} --out {folder}"
    )
    assert folder.startswith("results")
    # the command it prints resumes: the same words, the same folder, once the lock is gone
    rerun = run_main(monkeypatch, capsys, *line.split("resume with chronoprobe ", 1)[1].split())
    assert rerun.code == 0, rerun.err
    assert (Path(folder) / "run.json").is_file()
