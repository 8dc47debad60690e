"""The readers read the metric records a run logs, and older folders get the same records from their lens."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.reports.tidy_table import Row, read_run, run_rows

pytestmark = pytest.mark.e2e

LENS_RUNS = ("outdated", "dynamicqa", "mulan", "recency", "editing")


def _numbers(path: Path) -> list[tuple[object, ...]]:
    run = read_run(path)
    assert run is not None
    rows: list[Row] = run_rows(run)
    return [
        (
            r.model,
            r.lens,
            r.dataset,
            r.metric.group,
            r.metric.name,
            r.metric.value,
            r.metric.n,
            r.metric.ci_low,
            r.metric.ci_high,
        )
        for r in rows
    ]


@pytest.mark.parametrize("lens", LENS_RUNS)
def test_every_run_logs_its_metric_records(lens: str, run_folders: dict[str, Path]) -> None:
    log = json.loads((run_folders[lens] / "run.json").read_text(encoding="utf-8"))
    metrics = log["summary"]["metrics"]
    assert metrics and {"model", "group", "name", "value", "n", "ci_low", "ci_high", "unit", "headline"} <= set(
        metrics[0]
    )
    assert any(m["headline"] for m in metrics) and log["summary"]["dataset"]
    assert len(_numbers(run_folders[lens])) == len(metrics)


@pytest.mark.parametrize("lens", LENS_RUNS)
def test_a_run_log_from_before_the_records_gives_the_same_table(
    lens: str, run_folders: dict[str, Path], tmp_path: Path
) -> None:
    """A run.json written before metric records existed: its lens rebuilds them from the layout."""
    before = tmp_path / "before"
    shutil.copytree(run_folders[lens], before)
    log = json.loads((before / "run.json").read_text(encoding="utf-8"))
    for key in ("metrics", "dataset", "names", "specs", "labels"):
        del log["summary"][key]
    (before / "run.json").write_text(json.dumps(log), encoding="utf-8")
    run = str(run_folders[lens])
    assert [(run, *n[1:]) for n in _numbers(before)] == [(run, *n[1:]) for n in _numbers(run_folders[lens])]
    assert cp.load(before).summary.metrics == cp.load(run_folders[lens]).summary.metrics


@pytest.mark.parametrize("lens", LENS_RUNS)
def test_a_summary_json_folder_gives_the_same_table_and_loads(
    lens: str, run_folders: dict[str, Path], tmp_path: Path
) -> None:
    """A folder written before run.json: the lens that recognises its summary.json gives the records."""
    old = tmp_path / "old"
    shutil.copytree(run_folders[lens], old)
    (old / "run.json").unlink()
    assert _numbers(old) == _numbers(run_folders[lens])
    loaded = cp.load(old)
    assert loaded.layout == "summary.json" and loaded.rows
    assert loaded.summary.metrics == cp.load(run_folders[lens]).summary.metrics


def test_the_table_reads_the_records_not_the_layout(run_folders: dict[str, Path], tmp_path: Path) -> None:
    """Change one logged record: the table shows it, so no reader goes back to the lens's layout."""
    folder = tmp_path / "run"
    shutil.copytree(run_folders["recency"], folder)
    log = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    log["summary"]["metrics"][0]["value"] = 0.123
    log["summary"]["detail"] = {}
    (folder / "run.json").write_text(json.dumps(log), encoding="utf-8")
    assert _numbers(folder)[0][5] == 0.123
