"""``chronoprobe catalogue``: templates, build (kill -9 and rerun) and report, through the real ``main()``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.knowledge.templates import shipped_dir
from chronoprobe.testing.wdqs import Fault, StubWDQS
from cli_driver import run_main, run_ok

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def wdqs() -> Iterator[StubWDQS]:
    with StubWDQS() as server:
        yield server


def small_coaches(tmp_path: Path) -> Path:
    """The shipped club_head_coaches template in pages of four subjects (five pages)."""
    text = (shipped_dir() / "club_head_coaches.toml").read_text(encoding="utf-8")
    path = tmp_path / "coaches.toml"
    path.write_text(text.replace('property = "P286"', 'property = "P286"\npage_size = 4'), encoding="utf-8")
    return path


def test_templates_lists_the_shipped_set(monkeypatch, capsys) -> None:
    text = run_ok(monkeypatch, capsys, "catalogue", "templates")
    for name in ("heads_of_state", "club_head_coaches", "newspaper_editors", "office_holders"):
        assert name in text
    assert "50 facts on the stand-in" in text


def test_build_then_report(monkeypatch, capsys, wdqs: StubWDQS, tmp_path: Path) -> None:
    out = tmp_path / "built"
    text = run_ok(
        monkeypatch,
        capsys,
        "catalogue",
        "build",
        "heads_of_state",
        "city_mayors",
        "--out",
        str(out),
        "--endpoint",
        wdqs.url,
    )
    assert "60 facts in 3 categories (14 new, 46 DyKnow) from 2 templates" in " ".join(text.split())
    report = " ".join(run_ok(monkeypatch, capsys, "catalogue", "report", str(out)).split())
    assert (
        "city_mayors refused: unlabelled_subject 1, unlabelled_value 1, colliding_labels 1, contradictory 2" in report
    )
    assert "heads_of_state kept DyKnow facts as shipped despite: unchanged 5" in report
    assert "colliding_subject: " in report and "(made up)" in report


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no_such_template"], "error: template 'no_such_template': not a shipped template"),
        (["--endpoint", "ftp://example.org/sparql"], "is not an http(s) URL"),
        (["--per-template", "0"], "--per-template"),
        (["--as-of", "2999-01-01"], "is in the future"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(monkeypatch, capsys, tmp_path: Path, args, message) -> None:
    out = tmp_path / "built"
    ran = run_main(monkeypatch, capsys, "catalogue", "build", *args, "--out", str(out))
    assert ran.code == 2 and message in ran.err and len(ran.err.strip().splitlines()) == 1, ran.err
    assert not out.exists()


def test_a_bad_template_file_fails_alone_naming_it(monkeypatch, capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text((shipped_dir() / "party_leaders.toml").read_text().replace('"Q7278"', '"Q7278 }"'))
    ran = run_main(monkeypatch, capsys, "catalogue", "build", "city_mayors", str(bad), "--out", str(tmp_path / "out"))
    assert ran.code == 2 and ran.err.startswith(f"error: template {bad}: subjects.classes.0: ")
    assert not (tmp_path / "out").exists()


def test_report_of_a_folder_that_is_no_build(monkeypatch, capsys, tmp_path: Path) -> None:
    ran = run_main(monkeypatch, capsys, "catalogue", "report", str(tmp_path))
    assert ran.code == 2 and "has no report.json: not a catalogue build" in ran.err


def test_kill_9_during_a_build_then_rerun_gives_the_uninterrupted_catalogue(
    monkeypatch, capsys, wdqs: StubWDQS, tmp_path: Path
) -> None:
    template = small_coaches(tmp_path)
    clean = tmp_path / "clean" / "built"
    run_ok(monkeypatch, capsys, "catalogue", "build", str(template), "--out", str(clean), "--endpoint", wdqs.url)
    killed = tmp_path / "killed" / "built"
    pages = killed / "pages" / "club_head_coaches"
    wdqs.always = Fault.slow(0.3)
    try:
        command = [sys.executable, "-m", "chronoprobe.cli.main", "catalogue", "build", str(template)]
        build = subprocess.Popen(
            [*command, "--out", str(killed), "--endpoint", wdqs.url],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while not (pages / "page-00001.json").exists() and build.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert build.poll() is None, build.communicate()[1]
        os.kill(build.pid, signal.SIGKILL)
        build.communicate()  # waits, and closes the pipe
    finally:
        wdqs.always = None
    assert build.returncode == -signal.SIGKILL
    assert not (killed / "catalogue.json").exists() and (pages / "page-00001.json").is_file()
    before = wdqs.count
    run_ok(monkeypatch, capsys, "catalogue", "build", str(template), "--out", str(killed), "--endpoint", wdqs.url)
    assert wdqs.count - before <= 3  # only the pages the killed run had not saved
    for name in ("catalogue.json", "snapshot.json", "report.json"):
        assert (killed / name).read_text() == (clean / name).read_text(), name
