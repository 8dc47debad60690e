"""`--model NAME=SPEC`: the name labels the model everywhere, the spec stays in provenance and cache keys."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_named_model_in_an_outdated_run(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "chronoprobe.cli.main",
            "outdated",
            "run",
            "--limit",
            "1",
            "--model",
            "tiny=smollm2",
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "calls.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["models"]) == ["tiny"] and summary["models"]["tiny"]["name"] == "tiny"
    (info,) = summary["provenance"]["models"]
    assert info["spec"] == "smollm2" and info["name"] == "tiny" and info["given_name"] == "tiny"
    for stem in ("recency", "verdicts"):
        assert (out / f"{stem}.png").is_file() and (out / f"{stem}.svg").is_file()
    assert ">tiny<" in (out / "recency.svg").read_text(encoding="utf-8")
