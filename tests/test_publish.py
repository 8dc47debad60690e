"""Result folders are published whole: a kill at any step leaves the old or the new folder,
never a mix, and the next run recovers; users' folders are refused; one writer at a time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from chronoprobe.errors import ConfigError
from chronoprobe.records import publish
from chronoprobe.records.publish import MARKER, OutputClaim, check_output_dir, check_output_file, staged

OLD = {"a.txt": "old"}
NEW = {"a.txt": "new", "b.txt": "new"}


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(text)


def contents(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir() if p.name != MARKER}


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def exchange_supported(folder: Path) -> bool:
    a, b = folder / "xa", folder / "xb"
    a.mkdir()
    b.mkdir()
    (a / "f").write_text("a")
    try:
        ok = publish.exchange(a, b)
    finally:
        for path in (a, b):
            for child in path.iterdir():
                child.unlink()
            path.rmdir()
    return ok


# Run in a child process: publish NEW over OLD and die (os._exit, like kill -9) at one step.
CHILD = r"""
import os, shutil, sys
from pathlib import Path
from chronoprobe.records import publish

out, step, use_exchange = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
publish.USE_EXCHANGE = use_exchange
die = lambda: os._exit(137)

if step == "before-publish":
    publish.publish = lambda staging, target: die()
if step == "after-exchange":
    real_exchange = publish.exchange
    publish.exchange = lambda a, b: (real_exchange(a, b), die())
if step in ("after-move-old", "after-move-new"):
    real_rename, calls = os.rename, []
    def rename(a, b):
        real_rename(a, b)
        calls.append(1)
        if len(calls) == (1 if step == "after-move-old" else 2):
            die()
    os.rename = rename
if step == "while-deleting-old":
    def rmtree(path, ignore_errors=False):
        next(p for p in Path(path).iterdir() if p.name == "a.txt").unlink()
        die()
    shutil.rmtree = rmtree

with publish.staged(out, "test") as staging:
    (staging / "a.txt").write_text("new")
    if step == "while-writing":
        die()
    (staging / "b.txt").write_text("new")
print("finished")
"""

STEPS = {
    # step: (whether it exists with the exchange, with the fallback)
    "while-writing": (True, True),
    "before-publish": (True, True),
    "after-exchange": (True, False),
    "after-move-old": (False, True),
    "after-move-new": (False, True),
    "while-deleting-old": (True, True),
}


@pytest.mark.e2e
@pytest.mark.parametrize("use_exchange", [True, False], ids=["exchange", "fallback"])
@pytest.mark.parametrize("step", list(STEPS))
def test_kill_at_every_step_leaves_a_whole_report(tmp_path: Path, step: str, use_exchange: bool) -> None:
    if not STEPS[step][0 if use_exchange else 1]:
        pytest.skip("this step does not exist on this path")
    if use_exchange and not exchange_supported(tmp_path):
        pytest.skip("this filesystem has no RENAME_EXCHANGE")
    out = tmp_path / "results" / "report"
    with staged(out, "test") as staging:
        write(staging, OLD)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), step, "1" if use_exchange else "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == 137 and "finished" not in child.stdout, child.stderr

    if use_exchange or step not in ("after-move-old",):
        # at the instant of the kill the path already held a whole report
        assert contents(out) in (OLD, NEW)
    # the next run's claim recovers: a whole report (old or new) and no leftovers beside it
    with OutputClaim(out):
        pass
    assert contents(out) in (OLD, NEW)
    assert (out / MARKER).is_file()
    assert leftovers(out) == []
    # and the rerun publishes without being refused
    with staged(out, "test") as staging:
        write(staging, NEW)
    assert contents(out) == NEW and leftovers(out) == []


def test_fallback_kill_between_renames_restores_the_old_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with staged(out, "test") as staging:
        write(staging, OLD)
    # the state the fallback leaves when killed between its two renames
    os.rename(out, tmp_path / ".report.old-123-abcd")
    (tmp_path / ".report.staging-123-ef01").mkdir()
    write(tmp_path / ".report.staging-123-ef01", NEW)
    assert not out.exists()
    check_output_dir(out)  # the read-only check does not refuse it either
    with OutputClaim(out):
        assert contents(out) == OLD
    assert leftovers(out) == []


def test_killed_first_publish_leaves_no_folder_and_is_cleaned(tmp_path: Path) -> None:
    out = tmp_path / "report"
    (tmp_path / ".report.staging-99-beef").mkdir()
    write(tmp_path / ".report.staging-99-beef", NEW)
    (tmp_path / ".reportx.staging-99-beef").mkdir()  # another folder's: left alone
    with staged(out, "test") as staging:
        write(staging, OLD)
    assert contents(out) == OLD
    assert leftovers(out) == []
    assert (tmp_path / ".reportx.staging-99-beef").is_dir()


def test_failing_writer_keeps_the_old_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with staged(out, "test") as staging:
        write(staging, OLD)
    with pytest.raises(RuntimeError), staged(out, "test") as staging:
        write(staging, NEW)
        raise RuntimeError("plot failed")
    assert contents(out) == OLD and leftovers(out) == []


def test_marker_records_the_kind_and_missing_parents_are_created(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "report"
    with staged(out, "recency eval") as staging:
        write(staging, NEW)
    assert json.loads((out / MARKER).read_text())["kind"] == "recency eval"
    assert contents(out) == NEW and leftovers(out) == []


@pytest.mark.parametrize("kind", ["user files", "foreign summary"])
def test_users_folder_is_refused_and_untouched(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    if kind == "user files":
        (out / "notes.txt").write_text("precious")
    else:
        (out / "summary.json").write_text(json.dumps({"total": 3}))
    before = contents(out)
    with pytest.raises(ConfigError, match="refusing to replace it") as err, staged(out, "test") as staging:
        write(staging, NEW)
    assert str(err.value).startswith(f"--out {out}:")
    assert contents(out) == before and leftovers(out) == []


def test_older_report_without_marker_is_still_replaced(tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"provenance": {"command": "chronoprobe outdated run"}}))
    (out / "report.md").write_text("# old")
    with staged(out, "test") as staging:
        write(staging, NEW)
    assert contents(out) == NEW


def test_paths_that_cannot_be_written_are_refused_up_front(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match=r"^--out .*file\.txt/sub: .*file\.txt is a file, not a folder"):
        check_output_dir(blocker / "sub")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        OutputClaim(blocker / "deeper" / "sub").__enter__()
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        check_output_dir(blocker)
    with pytest.raises(ConfigError, match=r"^--out .*: is a folder; give a file path"):
        check_output_file(tmp_path)
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        check_output_file(blocker / "dataset.json")
    assert blocker.read_text() == "x"
    check_output_file(tmp_path / "new" / "dataset.json")  # a creatable path is fine
    assert not (tmp_path / "new").exists()  # the check creates nothing: the writer does, at publish time


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits; the file-in-the-way cases cover the check")
def test_read_only_parent_is_refused(tmp_path: Path) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        with pytest.raises(ConfigError, match="cannot write in"):
            OutputClaim(parent / "report").__enter__()
        with pytest.raises(ConfigError, match="cannot write in"):
            check_output_file(parent / "dataset.json")
    finally:
        parent.chmod(0o755)


def test_second_writer_in_another_thread_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "report"
    errors: list[str] = []
    with OutputClaim(out):
        thread = threading.Thread(target=lambda: errors.append(_try_claim(out)))
        thread.start()
        thread.join()
    assert errors == [f"--out: another chronoprobe run is writing {out}"]
    with OutputClaim(out):  # released: free again
        pass
    assert leftovers(out) == []


def _try_claim(out: Path) -> str:
    try:
        with OutputClaim(out):
            return "claimed"
    except ConfigError as exc:
        return str(exc)


HOLDER = r"""
import sys, time
from pathlib import Path
from chronoprobe.records.publish import OutputClaim
with OutputClaim(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.mark.e2e
def test_lock_is_held_across_processes_and_freed_by_a_kill(tmp_path: Path) -> None:
    out = tmp_path / "report"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert _try_claim(out) == f"--out: another chronoprobe run is writing {out}"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=30)  # waits, and closes the pipe
    assert _try_claim(out) == "claimed"  # the kernel drops the lock of a killed process
    assert leftovers(out) == []


WRITER = r"""
import sys, time
from pathlib import Path
from chronoprobe.errors import ConfigError
from chronoprobe.records.publish import staged
out, me = Path(sys.argv[1]), sys.argv[2]
try:
    with staged(out, "test") as staging:
        for i in range(20):
            (staging / f"{i}.txt").write_text(me)
            time.sleep(0.01)
except ConfigError as exc:
    print(exc)
    sys.exit(2)
"""


@pytest.mark.e2e
def test_concurrent_writers_never_mix_or_crash(tmp_path: Path) -> None:
    out = tmp_path / "report"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(out), str(k)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for k in range(4)
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    for code, stdout, stderr in results:
        assert code in (0, 2), stderr
        if code == 2:
            assert stdout.strip() == f"--out: another chronoprobe run is writing {out}"
    assert any(code == 0 for code, _, _ in results)
    written = contents(out)
    assert len(written) == 20 and len(set(written.values())) == 1  # one writer's whole folder
    assert leftovers(out) == []


def test_claims_nest_within_one_process(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with OutputClaim(out):  # the CLI's early claim
        with staged(out, "test") as staging:  # the writer's, at publish time
            write(staging, NEW)
        assert (tmp_path / ".report.lock").exists()
    assert contents(out) == NEW and leftovers(out) == []


def test_an_output_may_not_be_in_or_hold_an_input(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "data.json").write_text("{}")
    for out, words in [
        (run, "is the --from input"),
        (run / "sub", "lies inside the --from input"),
        (tmp_path, "holds the --from input"),
    ]:
        with pytest.raises(ConfigError, match=words):
            publish.check_not_input(out, {"--from": run})
    with pytest.raises(ConfigError, match=r"would also write .*data\.json, which .*--data input"):
        publish.check_not_input([tmp_path / "d.json", run / "data.json"], [("--data", run / "data.json")])
    (tmp_path / "link").symlink_to(run)
    with pytest.raises(ConfigError, match="is the --from input"):
        publish.check_not_input(tmp_path / "link", {"--from": run})  # the same folder by another name
    publish.check_not_input(tmp_path / "other", {"--from": run, "--cache": None})


def test_another_kind_of_report_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with staged(out, "outdated run") as staging:
        write(staging, OLD)
    refused = pytest.raises(ConfigError, match="holds a report from `outdated run`; `conflicts run` refuses")
    with refused, staged(out, "conflicts run") as staging:
        write(staging, NEW)
    assert contents(out) == OLD
    with staged(out, "outdated run") as staging:  # the same kind: replaced
        write(staging, NEW)
    assert contents(out) == NEW


def test_a_failed_claim_removes_the_folders_it_created(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "report"
    with pytest.raises(RuntimeError), OutputClaim(out):
        assert (tmp_path / "a" / "b").is_dir()
        raise RuntimeError("the run failed")
    assert not (tmp_path / "a").exists()
    with staged(out, "test") as staging:
        write(staging, NEW)
    assert contents(out) == NEW  # a published folder keeps its parents


def test_staged_files_publish_every_file_or_none(tmp_path: Path) -> None:
    out = tmp_path / "sets" / "d.json"
    with publish.staged_files(out) as staging:
        (staging / "d.json").write_text("new")
        (staging / "d.report.json").write_text("{}")
    assert sorted(p.name for p in out.parent.iterdir()) == ["d.json", "d.report.json"]
    with pytest.raises(RuntimeError), publish.staged_files(out) as staging:
        (staging / "d.json").write_text("newer")
        raise RuntimeError("the report could not be written")
    assert out.read_text() == "new" and sorted(p.name for p in out.parent.iterdir()) == ["d.json", "d.report.json"]
    refused = pytest.raises(ConfigError, match="exists and is not a dataset; refusing to overwrite it")
    with refused, publish.staged_files(out, ours=lambda path: False, what="a dataset") as staging:
        (staging / "d.json").write_text("x")
    assert out.read_text() == "new"
    with pytest.raises(RuntimeError), publish.staged_files(tmp_path / "new" / "d.json"):
        raise RuntimeError("failed before writing")
    assert not (tmp_path / "new").exists()


SLOW_RUN = r"""
import sys, time
from chronoprobe.cli.main import main
from chronoprobe.testing import register_mock

def slow(prompt, params):
    print("asked", flush=True)
    time.sleep(60)
    return "x"

register_mock("slow", slow)
sys.argv = ["chronoprobe", "outdated", "run", "--model", "mock:slow", "--limit", "1", "--out", sys.argv[1],
            "--cache", sys.argv[2]]
main()
"""


@pytest.mark.e2e
def test_sigterm_mid_run_leaves_no_lock_staging_or_folder(tmp_path: Path) -> None:
    """A run killed with SIGTERM (a scheduler's stop, `kill PID`) unwinds as Ctrl-C does: nothing stays beside --out."""
    out = tmp_path / "new" / "report"
    run = subprocess.Popen(
        [sys.executable, "-c", SLOW_RUN, str(out), str(tmp_path / "c.sqlite")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert run.stdout is not None and run.stdout.readline().strip() == "asked"  # the claim is held now
        assert (out.parent / ".report.lock").exists()
        run.send_signal(signal.SIGTERM)
        _, said = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 128 + signal.SIGTERM
    assert "terminated: finished model calls are cached" in said
    assert not out.parent.exists()  # the lock, any staging folder and the parent the claim created are gone
