"""`conflicts run dynamicqa` and `recency eval` with no --data, no shared folder and no hub: the shipped copy serves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def offline_env(**extra: str) -> dict[str, str]:
    """No shared data folder, and a hub that cannot be reached (it would fail at once, not after retries)."""
    env = {k: v for k, v in os.environ.items() if k not in {"CHRONOPROBE_SHARED_DATA", "CHRONOPROBE_RECENCYQA"}}
    return {**env, "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9", **extra}


def run_cli(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chronoprobe.cli.main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def extra(out: Path) -> dict[str, object]:
    return json.loads((out / "run.json").read_text())["provenance"]["extra"]  # type: ignore[no-any-return]


def test_conflicts_run_dynamicqa_needs_no_data_option(tmp_path: Path) -> None:
    out = tmp_path / "dq"
    done = run_cli(
        tmp_path,
        offline_env(),
        *("conflicts", "run", "dynamicqa", "--model", "mock:echo", "--balanced-limit", "3", "--judge", "exact"),
        *("--samples", "2", "--out", str(out), "--cache", str(tmp_path / "calls.sqlite")),
    )
    assert done.returncode == 0, done.stderr
    assert (
        extra(out)["data"] == "chronoprobe/data/dynamicqa (shipped copy of github.com/copenlu/dynamicqa@4c6d2cb, MIT)"
    )
    rows = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert {r["fact_class"] for r in rows} == {"static", "temporal", "disputed"}


def test_recency_eval_needs_no_data_option(tmp_path: Path) -> None:
    out = tmp_path / "rq"
    done = run_cli(
        tmp_path,
        offline_env(),
        *("recency", "eval", "--model", "mock:constant=A-Year", "--sample", "3", "--context-mode", "without"),
        *("--out", str(out), "--cache", str(tmp_path / "calls.sqlite")),
    )
    assert done.returncode == 0, done.stderr
    assert "deprecated" not in done.stderr
    assert extra(out)["pool"] == 4031
    assert "shipped copy of github.com/DataScienceUIBK/RecencyQA@2d460b5" in str(extra(out)["dataset"])


def test_recency_eval_reads_the_shared_data_variable_and_notes_the_old_one(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "recencyqa").mkdir(parents=True)
    shutil.copy(ASSETS / "recency_sample.json", shared / "recencyqa" / "RecencyQA.json")
    args = ("recency", "eval", "--model", "mock:constant=A-Year", "--context-mode", "without")
    cache = ("--cache", str(tmp_path / "calls.sqlite"))
    done = run_cli(
        tmp_path, offline_env(CHRONOPROBE_SHARED_DATA=str(shared)), *args, "--out", str(tmp_path / "a"), *cache
    )
    assert done.returncode == 0, done.stderr
    assert extra(tmp_path / "a")["pool"] == 14
    # the older variable still works, with a one-line note on stderr
    legacy = offline_env(CHRONOPROBE_RECENCYQA=str(ASSETS / "recency_sample.json"))
    done = run_cli(tmp_path, legacy, *args, "--out", str(tmp_path / "b"), *cache)
    assert done.returncode == 0, done.stderr
    assert extra(tmp_path / "b")["pool"] == 14
    notes = [
        line for line in done.stderr.splitlines() if "CHRONOPROBE_RECENCYQA is deprecated and removed in 0.4.0" in line
    ]
    assert len(notes) == 1 and "CHRONOPROBE_SHARED_DATA" in notes[0]


def test_a_missing_data_folder_is_one_line_naming_data(tmp_path: Path) -> None:
    done = run_cli(
        tmp_path,
        offline_env(),
        *("conflicts", "run", "dynamicqa", "--model", "mock:echo", "--data", str(tmp_path / "nowhere")),
        *("--out", str(tmp_path / "x"), "--cache", str(tmp_path / "calls.sqlite")),
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and "--data" in lines[0]


def test_mulan_without_data_is_one_line_saying_how_to_supply_it(tmp_path: Path) -> None:
    done = run_cli(
        tmp_path,
        offline_env(HF_DATASETS_OFFLINE="1"),
        *("conflicts", "run", "mulan", "--model", "mock:echo", "--balanced-limit", "3"),
        *("--out", str(tmp_path / "x"), "--cache", str(tmp_path / "calls.sqlite")),
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    # without ../shared the templates are missing first; with it, the queries (hub or --data)
    assert "no licence" in lines[0] and ("--templates" in lines[0] or "--data" in lines[0]), lines[0]
    assert not (tmp_path / "x").exists()
