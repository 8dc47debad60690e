"""The conflicts summary layout is read through one typed view, checked once; a layout that does not
fit is a one-line error naming its file, and the stored layout is never rewritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.lenses.conflicts.metric_records import read_detail

ASSETS = Path(__file__).resolve().parents[1] / "assets"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> cp.Run:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    return cp.run(
        "conflicts",
        models="mock:echo",
        dataset="dynamicqa",
        data=ASSETS / "dynamicqa_small",
        balanced_limit=3,
        judge="exact",
        persuasion={"n_samples": 2},
        out=tmp_path / "dq",
        cache=tmp_path / "calls.sqlite",
    )


@pytest.mark.e2e
def test_the_view_is_the_stored_dict(run: cp.Run) -> None:
    stored = json.loads((run.path / "summary.json").read_text())
    detail = {k: v for k, v in stored.items() if k != "provenance"}
    assert read_detail(detail) is detail
    assert read_detail(detail)["classes"] == ["static", "temporal", "disputed"]
    assert set(read_detail(detail)["gaps"]) == {"mock:echo"}
    assert "detail" not in json.loads((run.path / "run.json").read_text())["summary"]  # the records are the summary


def test_an_old_folder_that_does_not_fit_names_its_file_and_place(run: cp.Run) -> None:
    (run.path / "run.json").unlink()
    summary = json.loads((run.path / "summary.json").read_text())
    assert cp.load(run.path).summary.models == ["mock:echo"]  # the old layout reads
    summary["summary"]["mock:echo"]["static"] = [0.5]
    (run.path / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(
        cp.DataError, match=r"summary\.json: unexpected conflicts run layout \(summary\.mock:echo\.static"
    ):
        cp.load(run.path)


def test_a_named_file_is_in_the_error() -> None:
    with pytest.raises(cp.DataError, match=r"^old/run\.json: unexpected summary layout \(classes"):
        read_detail({"classes": "static", "summary": {}}, where="old/run.json")
