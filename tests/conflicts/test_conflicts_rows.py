"""Conflicts rows stay typed from ``run`` to ``summarise``; rows read back loosely type to the same rows."""

from __future__ import annotations

from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.lenses.conflicts.rows import CompletionRow, ConflictsRow, PersuasionRow, UpdateRow, typed_row

ASSETS = Path(__file__).resolve().parents[1] / "assets"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))


def test_persuasion_rows_are_typed_and_load_back_the_same(tmp_path: Path) -> None:
    run = cp.run(
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
    assert run.rows and all(type(r) is PersuasionRow for r in run.rows)
    loaded = cp.load(run.path).rows
    assert all(type(r) is ConflictsRow for r in loaded)  # the API's row type, every field kept
    assert [typed_row(r) for r in loaded] == run.rows


def test_completion_and_update_rows_are_told_apart_by_kind() -> None:
    completion = CompletionRow(
        model="m",
        query_id="f/0",
        fact_id="f",
        fact_class="c",
        relation="P1",
        template_index=0,
        prefix="p",
        generation=" Paris.",
        prediction="Paris",
        golds=["Paris"],
        f1=1.0,
        confidence=0.9,
    )
    update = UpdateRow(
        model="m",
        fact_id="f",
        fact_class="c",
        relation="P1",
        query_id="f/0",
        original_prediction="Paris",
        new_object="Lyon",
        altered_fact="The capital of X is Lyon.",
        prediction="Lyon",
        success=True,
    )
    for row in (completion, update):
        loose = ConflictsRow.model_validate_json(row.model_dump_json())
        assert typed_row(loose) == row
    with pytest.raises(ValueError, match="success"):
        typed_row(ConflictsRow.model_validate({**update.model_dump(), "success": "maybe"}))
