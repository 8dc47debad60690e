"""Every lens's run folder records the CPU threads behind it (tests/test_provenance.py has the details)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronoprobe.threads import usable_cores

pytestmark = pytest.mark.e2e


def test_every_lens_records_cpu_threads(run_folders: dict[str, Path]) -> None:
    folders = {key: path for key, path in run_folders.items() if key != "root"}
    assert set(folders) == {"outdated", "score", "dynamicqa", "mulan", "recency", "editing"}
    for key, folder in folders.items():
        log = folder / "run.json" if (folder / "run.json").is_file() else folder / "summary.json"  # outdated score
        recorded = json.loads(log.read_text(encoding="utf-8"))["provenance"]["threads"]
        assert recorded["policy"] and recorded["cores"] == usable_cores(), key
        if key != "score":  # mock models run no torch work (outdated score runs no model at all)
            assert recorded["torch"] == [], key
        if key != "score":  # it writes no report
            assert "- CPU threads: " in (folder / "report.md").read_text(encoding="utf-8"), key
