"""The outdated summary layouts are read through typed views, checked once: the stored dict is the
view (no layout change), and a layout that does not fit is a one-line error naming its file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.lenses.editing.dataset import build_from_run
from chronoprobe.lenses.outdated.metric_records import read_run_detail, read_score_detail


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> cp.Run:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    return cp.run("outdated", models="mock:echo", limit=2, out=tmp_path / "run", cache=tmp_path / "calls.sqlite")


def _damage_run_log(run: cp.Run) -> Path:
    """The run log as one written before metric records (its summary the lens's layout), the layout damaged."""
    log_path = run.path / "run.json"
    log = json.loads(log_path.read_text())
    layout = {k: v for k, v in json.loads((run.path / "summary.json").read_text()).items() if k != "provenance"}
    layout["models"]["mock:echo"]["per_category"] = []
    for key in ("metrics", "notes", "paired", "dataset", "names", "specs", "labels"):
        log["summary"].pop(key, None)
    log["summary"]["detail"] = layout
    log_path.write_text(json.dumps(log))
    return log_path


@pytest.mark.e2e
def test_the_view_is_the_stored_dict(run: cp.Run) -> None:
    stored = json.loads((run.path / "summary.json").read_text())
    detail = {k: v for k, v in stored.items() if k != "provenance"}
    assert read_run_detail(detail) is detail
    assert read_run_detail(detail)["models"]["mock:echo"]["name"] == "echo"
    assert "detail" not in json.loads((run.path / "run.json").read_text())["summary"]  # the records are the summary


@pytest.mark.e2e
def test_editing_names_a_run_log_whose_summary_does_not_fit(run: cp.Run) -> None:
    log_path = _damage_run_log(run)
    pattern = rf"^{log_path}: unexpected outdated run layout \(models\.mock:echo\.per_category"
    with pytest.raises(cp.DataError, match=pattern):
        build_from_run(run.path)


@pytest.mark.e2e
def test_the_knowledge_date_frame_names_a_folder_whose_summary_does_not_fit(run: cp.Run) -> None:
    pytest.importorskip("pandas")
    _damage_run_log(run)
    with pytest.raises(cp.DataError, match=r"unexpected outdated run layout \(models\.mock:echo\.per_category"):
        cp.knowledge_date(run.path)


def test_a_score_layout_without_its_model_is_named() -> None:
    with pytest.raises(cp.DataError, match=r"^old/summary\.json: unexpected summary layout \(model: Field required"):
        read_score_detail({"categories": {}, "overall": {}}, where="old/summary.json")
