"""One reader of the older layouts: a folder written before metric records (or before their notes) reads through
``lenses/old_layouts.py``, whichever lens wrote it; a lens's own layout is never read back from a new run log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chronoprobe.contract.released_hooks import released_dataset_label
from chronoprobe.lenses import old_layouts
from chronoprobe.provenance import Provenance
from chronoprobe.records.runlog import Metric, Summary, read_folder

SHARES = {"up-to-date": 40.0, "outdated": 20.0, "irrelevant": 40.0, "ambiguous": 0.0}
OUTDATED = {
    "as_of": None,
    "overall_key": "all",
    "models": {
        "m": {
            "name": "tiny",
            "per_category": {"all": {"soft_constraint_pct": SHARES}},
            "knowledge_date": {"per_category": {}, "cutoff": {"too_few": 3}, "deployed_at": {"date": "2025-01"}},
            "claimed_cutoff": {"value": "2023-12", "year": 2023 + 11 / 12, "n": 2, "asked": 3, "answers": []},
        }
    },
}
"""An ``outdated run`` layout as ``summary.json`` and an older run log's ``summary.detail`` held it."""


def _log(folder: Path, summary: dict[str, Any], lens: str = "outdated") -> Path:
    folder.mkdir(parents=True)
    log = {"format": "chronoprobe-run/1", "lens": lens, "kind": "outdated run", "summary": summary}
    log["provenance"] = {"snapshot": {"name": "dyknow-2023-12-18"}}
    (folder / "run.json").write_text(json.dumps(log), encoding="utf-8")
    return folder


def test_a_summary_json_of_every_kind_is_recognised_by_its_keys() -> None:
    where = Path("old/summary.json")
    found = old_layouts.file_summary({**OUTDATED, "provenance": {"snapshot": {"name": "s"}}}, None, where)
    assert found is not None and found[:2] == ("outdated", "outdated run") and found[2].dataset == "s"
    recency = {"runs": [{"model": "m", "strategy": "zero-shot", "context_mode": "with", "n": 1}], "labels": []}
    assert (old_layouts.file_summary(recency, None, where) or ("",))[0] == "recency"
    assert (old_layouts.file_summary({"classes": [], "summary": {}}, None, where) or ("",))[0] == "conflicts"
    assert (old_layouts.file_summary({"models": {}, "methods": []}, None, where) or ("",))[0] == "editing"
    assert old_layouts.file_summary({"something": "else"}, None, where) is None


def test_an_older_run_log_gets_its_records_and_words_from_its_layout(tmp_path: Path) -> None:
    run = read_folder(_log(tmp_path / "old", {"lens": "outdated", "models": ["m"], "headline": {}, "detail": OUTDATED}))
    assert run is not None and run.dataset == "dyknow-2023-12-18" and run.models[0].name == "tiny"
    assert run.summary.headline["m"]["soft_constraint_pct.up-to-date"] == 40.0
    [claimed] = [m for m in run.summary.metrics if m.name == "claimed_cutoff"]
    assert claimed.value == pytest.approx(2023 + 11 / 12) and claimed.n == 2
    assert run.summary.note("m", "knowledge_cutoff.too_few") == "3"
    assert run.summary.note("m", "deployed_at") == "2025-01"
    assert run.summary.note("m", "claimed_cutoff") == "says its knowledge ends 2023-12 (2 of 3 answers name a date)"


def test_a_run_log_with_records_but_before_notes_reads_its_words_from_its_layout(tmp_path: Path) -> None:
    """Its records stay as logged (one is changed here to show it); only the words come from the layout."""
    logged = Metric(model="m", group="all", name="soft_constraint_pct.up-to-date", value=1.5, unit="%")
    summary = {
        "lens": "outdated",
        "models": ["m"],
        "headline": {},
        "detail": OUTDATED,
        "metrics": [logged.model_dump()],
    }
    run = read_folder(_log(tmp_path / "between", summary))
    assert run is not None and run.summary.metrics == [logged]
    assert run.summary.note("m", "deployed_at") == "2025-01"


def test_a_new_run_log_is_never_read_through_a_layout(tmp_path: Path) -> None:
    summary = Summary(lens="outdated", models=["m"], headline={}, dataset="d").model_dump(mode="json")
    assert "detail" not in summary and summary["notes"] == []
    run = read_folder(_log(tmp_path / "new", {**summary, "detail": OUTDATED}))  # a layout beside is not read
    assert run is not None and run.summary.notes == [] and run.summary.metrics == []


def test_the_layouts_reader_knows_no_plug_in_layout(tmp_path: Path) -> None:
    """A plug-in's log from before notes keeps its summary as logged (no words to add)."""
    assert old_layouts.run_log_summary("toy", None, {"toy": 1}, Provenance(), tmp_path / "run.json") is None


def test_a_plug_in_written_for_0_2_0_names_its_dataset_with_a_warning() -> None:
    class Released:
        @classmethod
        def dataset_label(cls, summary: Summary, provenance: Provenance) -> str:
            return f"years ({len(summary.models)} model)"

    summary = Summary(lens="toy", models=["m"], headline={})
    with pytest.warns(DeprecationWarning, match=r"Released\.dataset_label is 0\.2\.0's hook; it is called until 0\.4"):
        assert released_dataset_label(Released(), summary, Provenance()) == "years (1 model)"
    assert released_dataset_label(object(), summary, Provenance()) is None


def test_the_layout_a_0_2_0_plug_in_gives_its_summary_is_kept_in_memory_only() -> None:
    summary = Summary(lens="toy", models=["m"], headline={}, detail={"m": {"year_pct": 50.0}})
    with pytest.warns(DeprecationWarning, match="0.4.0"):
        assert summary.detail == {"m": {"year_pct": 50.0}}
    assert "detail" not in summary.model_dump_json()
