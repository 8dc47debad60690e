"""Output paths at the command line: users' folders refused, unwritable paths refused before any
model loads (one line, exit 2), one writer per folder, and a killed publish recovered by the rerun."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chronoprobe.records.publish import MARKER, OutputClaim

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
ASSETS = REPO / "tests" / "assets"
DYKNOW = REPO.parent / "shared" / "data" / "dyknow"


def run_cli(*args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chronoprobe.cli.main", *args], capture_output=True, text=True, timeout=timeout
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and "Traceback" not in result.stderr
    return lines[0]


def folder_commands(out: Path, cache: Path) -> dict[str, list[str]]:
    """Every command that writes a results folder, cheap arguments, output at ``out``."""
    return {
        "outdated run": ["outdated", "run", "--limit", "1", "--out", str(out), "--cache", str(cache)],
        "outdated score": ["outdated", "score", "--generations", str(out.parent / "no-generations"), "--out", str(out)],
        "recency eval": [
            "recency",
            "eval",
            "--data",
            str(ASSETS / "recency_sample.json"),
            "--sample",
            "1",
            "--out",
            str(out),
            "--cache",
            str(cache),
        ],
        "conflicts run": [
            "conflicts",
            "run",
            "dynamicqa",
            "--data",
            str(ASSETS / "dynamicqa_small"),
            "--balanced-limit",
            "1",
            "--judge",
            "exact",
            "--out",
            str(out),
            "--cache",
            str(cache),
        ],
    }


def file_commands(out: Path, cache: Path) -> dict[str, list[str]]:
    """Commands that write files (or a folder of snapshots) rather than a results folder."""
    return {
        "recency label": [
            "recency",
            "label",
            str(ASSETS / "recency_questions.jsonl"),
            "--out",
            str(out / "d.json"),
            "--cache",
            str(cache),
        ],
        "conflicts contexts": [
            "conflicts",
            "contexts",
            "--data",
            str(ASSETS / "mulan_queries.jsonl"),
            "--templates",  # the test assets, so the refusal is the output's with or without ../shared
            str(ASSETS / "mulan_templates.json"),
            "--aliases-file",
            str(ASSETS / "mulan_aliases.jsonl"),
            "--out",
            str(out / "c.jsonl"),
            "--cache",
            str(cache),
        ],
        "snapshot fetch": ["snapshot", "fetch", "--endpoint", "http://127.0.0.1:9/sparql", "--output-dir", str(out)],
    }


@pytest.mark.parametrize("command", ["outdated run", "outdated score", "recency eval", "conflicts run"])
def test_users_folder_is_refused(tmp_path: Path, command: str) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("precious")
    (out / "summary.json").write_text('{"mine": true}')
    line = one_line_error(run_cli(*folder_commands(out, tmp_path / "c.sqlite")[command]))
    assert f"--out {out}" in line and "refusing to replace it" in line
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "summary.json"]
    assert (out / "notes.txt").read_text() == "precious"
    assert not (tmp_path / "c.sqlite").exists(), "no model may load before the check"


@pytest.mark.parametrize(
    "command",
    [
        "outdated run",
        "outdated score",
        "recency eval",
        "conflicts run",
        "recency label",
        "conflicts contexts",
        "snapshot fetch",
    ],
)
def test_file_in_the_way_is_refused_before_any_model_loads(tmp_path: Path, command: str) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder")
    cache = tmp_path / "c.sqlite"
    commands = {**folder_commands(blocker / "sub", cache), **file_commands(blocker / "sub", cache)}
    line = one_line_error(run_cli(*commands[command]))
    option = "--output-dir" if command == "snapshot fetch" else "--out"
    assert f"{option} {blocker}/sub" in line and f"{blocker} is a file, not a folder" in line
    assert blocker.read_text() == "a file, not a folder"
    assert not cache.exists(), "no model may load before the check"


def test_an_output_folder_that_is_a_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.write_text("x")
    line = one_line_error(run_cli(*folder_commands(out, tmp_path / "c.sqlite")["recency eval"]))
    assert f"--out {out}: is a file, not a folder" in line


def test_a_run_already_writing_the_folder_is_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with OutputClaim(out):  # another run holds it
        line = one_line_error(run_cli(*folder_commands(out, tmp_path / "c.sqlite")["outdated score"]))
    assert line == f"error: --out: another chronoprobe run is writing {out}"


# `outdated score` killed (like kill -9) between the fallback's two renames: the old report is
# moved aside and the new one not yet in place.
KILLED_SCORE = r"""
import os, sys
from chronoprobe.records import publish
from chronoprobe.cli.main import main
publish.USE_EXCHANGE = False
real_rename = os.rename
def rename(a, b):
    real_rename(a, b)
    if ".old-" in os.path.basename(b):
        os._exit(137)
os.rename = rename
sys.argv = ["chronoprobe", *sys.argv[1:]]
main()
"""


def test_rerun_after_a_killed_publish_recovers(tmp_path: Path) -> None:
    if not (DYKNOW / "grc_generated.json").is_file():
        pytest.skip("../shared/data/dyknow is not present")
    results = DYKNOW / "models_output" / "results"
    out = tmp_path / "scored"
    args = ["outdated", "score", "--out", str(out), "--gold", str(DYKNOW / "grc_generated.json")]
    first = run_cli(*args, "--generations", str(results / "gpt2-xl"))
    assert first.returncode == 0, first.stderr
    old_summary = json.loads((out / "summary.json").read_text())
    assert old_summary["model"] == "gpt2-xl" and (out / MARKER).is_file()

    killed = subprocess.run(
        [sys.executable, "-c", KILLED_SCORE, *args, "--generations", str(results / "OLMo-1B")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == 137, killed.stderr
    assert not out.exists()  # the only moment the fallback leaves no folder at the path
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(".scored.old-")]
    assert len(aside) == 1 and json.loads((aside[0] / "summary.json").read_text()) == old_summary

    # the old report is back before the new run even starts writing
    check = run_cli("outdated", "score", "--out", str(out), "--generations", str(tmp_path / "nothing"))
    assert check.returncode == 2 and "nothing" in check.stderr
    assert json.loads((out / "summary.json").read_text()) == old_summary

    rerun = run_cli(*args, "--generations", str(results / "OLMo-1B"))
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads((out / "summary.json").read_text())["model"] == "OLMo-1B"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scored"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can set the immutable attribute")
def test_read_only_parent_is_refused_even_for_root(tmp_path: Path) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    if subprocess.run(["chattr", "+i", str(parent)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        line = one_line_error(run_cli(*folder_commands(parent / "report", tmp_path / "c.sqlite")["recency eval"]))
        assert f"--out {parent}/report" in line and "cannot write in" in line
    finally:
        subprocess.run(["chattr", "-i", str(parent)], check=True)
