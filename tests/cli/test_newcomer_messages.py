"""What a new user trips over gets one clear line (issue 25, §7)."""

from __future__ import annotations

from pathlib import Path

import pytest

import chronoprobe as cp
from cli_driver import run_main

pytestmark = pytest.mark.e2e

MOCK = "mock:constant=Mario Draghi"


def _line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return " ".join(lines[0].split())


def test_a_shared_data_variable_that_names_no_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHRONOPROBE_SHARED_DATA", "/nonexistent")
    ran = run_main(monkeypatch, capsys, "recency", "eval", "--model", "mock:echo", "--sample", "2", "--out", "r")
    assert ran.code == 2
    assert _line(ran.err).startswith("error: $CHRONOPROBE_SHARED_DATA=/nonexistent: no such folder; point it at")
    assert not (tmp_path / "r").exists()
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("CHRONOPROBE_SHARED_DATA", str(tmp_path / "file"))
    ran = run_main(monkeypatch, capsys, "conflicts", "run", "dynamicqa", "--model", "mock:echo", "--judge", "exact")
    assert ran.code == 2 and "is not a folder" in _line(ran.err)


def test_a_sample_larger_than_the_data_says_what_it_became(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = Path(__file__).resolve().parents[1] / "assets" / "recency_sample.json"
    args = ["--model", "mock:echo", "--context-mode", "without", "--sample", "100000", "--data", str(data)]
    monkeypatch.chdir(tmp_path)
    ran = run_main(monkeypatch, capsys, "recency", "eval", *args, "--out", "r", "--cache", "c.sqlite")
    assert ran.code == 0, ran.text
    shown = " ".join(ran.err.split())
    assert "note: --sample 100000: the data holds 14 questions, so all 14 are asked" in shown


def test_editing_from_a_parent_folder_lists_the_run_folders_inside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    cp.run("outdated", models=MOCK, limit=1, out=tmp_path / "results" / "outdated" / "first", cache=tmp_path / "c")
    cp.run("outdated", models=MOCK, limit=1, out=tmp_path / "results" / "outdated" / "second", cache=tmp_path / "c")
    for command in (["editing", "run", "--model", MOCK], ["editing", "dataset"]):
        ran = run_main(monkeypatch, capsys, *command, "--from", "results/")
        assert ran.code == 2
        line = _line(ran.err)
        assert line == (
            "error: --from results: is not a run folder (no run.json); give one of the outdated run folders inside "
            "it: results/outdated/first, results/outdated/second"
        )
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["outdated"]  # no editing folder was claimed
    ran = run_main(monkeypatch, capsys, "editing", "run", "--model", MOCK, "--from", "nowhere")
    assert _line(ran.err) == "error: --from nowhere: no such folder"
