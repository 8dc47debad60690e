"""The recency summary layout is read through one typed view, checked once: the stored dict is the view,
and an old folder whose layout does not fit is a one-line error naming its file and the place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.lenses.recency.metric_records import read_detail

pytestmark = pytest.mark.e2e

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def test_the_view_is_the_stored_dict_and_a_misfit_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    run = cp.run(
        "recency",
        models="mock:constant=A-Year",
        data=str(ASSETS / "recency_sample.json"),
        sample=4,
        out=tmp_path / "run",
        cache=tmp_path / "calls.sqlite",
    )
    detail = {k: v for k, v in json.loads((run.path / "summary.json").read_text()).items() if k != "provenance"}
    assert read_detail(detail) is detail
    assert {r["strategy"] for r in read_detail(detail)["runs"]} == {"zero-shot"}
    (run.path / "run.json").unlink()
    summary = json.loads((run.path / "summary.json").read_text())
    assert cp.load(run.path).summary.models == ["mock:constant=A-Year"]  # the old layout reads
    del summary["runs"][0]["strategy"]
    (run.path / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(cp.DataError, match=r"summary\.json: unexpected recency eval layout \(runs\.0\.strategy"):
        cp.load(run.path)
