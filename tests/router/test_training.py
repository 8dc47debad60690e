"""``scripts/train_router.py`` reproduces the shipped weights byte for byte, and its manifest meets the floor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chronoprobe.router.model import ARRAYS, MANIFEST_FILE, SETTINGS_FILE, shipped_weights

REPO = Path(__file__).resolve().parents[2]


def test_the_shipped_manifest_meets_the_floor_with_intervals() -> None:
    manifest = json.loads((shipped_weights() / MANIFEST_FILE).read_text(encoding="utf-8"))
    grouped = manifest["grouped_cv"]
    assert grouped["accuracy"]["value"] >= 0.55 and grouped["macro_f1"]["value"] >= 0.50
    assert grouped["gate_balanced_accuracy"]["value"] >= 0.85
    for figure in grouped.values():
        assert figure["low"] <= figure["value"] <= figure["high"]
    assert set(manifest["leave_one_source_out"]) == {"freshqa", "situatedqa", "patqa", "llm-generated"}
    assert len(manifest["training_data"]["sha256"]) == 64


@pytest.mark.slow
def test_training_again_writes_the_same_bytes(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "train_router.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for name in (SETTINGS_FILE, MANIFEST_FILE, *(f"{a}.npy" for a in ARRAYS)):
        assert (tmp_path / name).read_bytes() == (shipped_weights() / name).read_bytes(), name
