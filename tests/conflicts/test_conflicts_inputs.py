"""MuLan's inputs are checked before any work, and every missing one is named in the same single line."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.lenses.conflicts import run as conflicts_run
from chronoprobe.lenses.conflicts import sources
from cli_driver import run_main

ASSETS = Path(__file__).resolve().parents[1] / "assets"


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A fresh clone's view: no shared data folder, no hub package; the working directory is tmp_path."""
    monkeypatch.setattr(sources, "shared_data_root", lambda: None)
    monkeypatch.setattr(conflicts_run, "_hub_available", lambda: False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _one_line(ran_err: str) -> str:
    lines = [line for line in ran_err.splitlines() if line.strip()]
    assert len(lines) == 1, ran_err
    return " ".join(lines[0].split())


@pytest.mark.e2e
def test_every_missing_mulan_file_in_one_message(
    bare: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_main(monkeypatch, capsys, "conflicts", "run", "mulan", "--data", "queries.jsonl", "--balanced-limit", "5")
    assert ran.code == 2
    line = _one_line(ran.err)
    assert line.startswith("error: conflicts run mulan: 3 input(s) missing:")
    assert "--data queries.jsonl: no such file or folder" in line
    assert "--templates: mulan/templates/clean.json not found" in line and "pass --templates <file>" in line
    assert "--aliases-file: temporal_conflicts/aliases_MULAN.json not found" in line
    assert "pass --aliases-file <file>" in line
    assert not (bare / "results").exists()  # checked before the output folder was claimed


@pytest.mark.e2e
def test_given_files_that_do_not_exist_are_named_with_their_paths(
    bare: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--data", str(ASSETS / "mulan_queries.jsonl"), "--templates", "t.json", "--aliases-file", "a.json"]
    ran = run_main(monkeypatch, capsys, "conflicts", "run", "mulan", *args)
    line = _one_line(ran.err)
    assert (
        ran.code == 2
        and "2 input(s) missing: --templates t.json: no such file or folder; --aliases-file a.json: no such file or folder"
        in line
    )
    ran = run_main(monkeypatch, capsys, "conflicts", "run", "mulan")  # no --data and no hub package: all three
    line = _one_line(ran.err)
    assert "3 input(s) missing: --data: MuLan's queries file" in line and "pip install 'chronoprobe[hub]'" in line


@pytest.mark.e2e
def test_contexts_checks_the_same_inputs_first(
    bare: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_main(monkeypatch, capsys, "conflicts", "contexts", "--data", "q.jsonl", "--out", "ctx.jsonl")
    line = _one_line(ran.err)
    assert ran.code == 2 and line.startswith("error: conflicts contexts: 3 input(s) missing: --data q.jsonl")
    assert not (bare / "ctx.jsonl").exists()


@pytest.mark.e2e
def test_a_run_without_a_dataset_lists_the_choices(
    bare: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_main(monkeypatch, capsys, "conflicts", "run")
    assert ran.code == 2
    assert _one_line(ran.err).startswith("error: DATASET: missing; give one of dynamicqa, mulan")


def test_limit_help_says_it_is_a_total() -> None:
    from typer.main import get_command

    from chronoprobe.cli.tool_command import lens_group
    from chronoprobe.lenses.conflicts.lens import ConflictsLens

    run = get_command(lens_group(ConflictsLens)).commands["run"]  # type: ignore[attr-defined]  # a typer group has commands
    limit = next(p for p in run.params if p.name == "balanced_limit")
    assert "in total, not per class" in (limit.help or "")
