"""The Python API: ``chronoprobe.run``, ``load``, ``model`` and the public surface."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock

ASSETS = Path(__file__).resolve().parent / "assets"


def answers(prompt: MockPrompt, params: DecodingParams) -> str:
    asked = prompt.request
    if "Hamlet" in asked:
        return "Never"
    if "Italy" in asked:
        return "Sergio Mattarella"
    if "Question: " in asked:
        return "A-Year" if "Context: " in asked else "Never"
    return "Paris"


@pytest.fixture
def mock_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    register_mock("api", answers)
    yield "mock:api"
    unregister_mock("api")


@pytest.mark.e2e
def test_public_surface_is_all_and_import_stays_light() -> None:
    assert {"run", "load", "model", "Run", "Model", "recency_gate", "ChronoprobeError", "__version__"} <= set(
        cp.__all__
    )
    for name in cp.__all__:
        assert getattr(cp, name) is not None
    code = "import sys, chronoprobe; print(sorted(m for m in ('torch', 'pydantic', 'chronoprobe.api') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
    with pytest.raises(AttributeError):
        cp.no_such_thing  # noqa: B018


@pytest.mark.e2e
def test_run_returns_a_run_and_load_reads_it_back(mock_spec: str, tmp_path: Path) -> None:
    run = cp.run("outdated", models=mock_spec, limit=4)
    assert run.path.parent == Path("results/outdated") and run.path.name.startswith("api-")
    assert run.summary.headline[mock_spec]["soft_constraint_pct.up-to-date"] == pytest.approx(25.0)
    assert len(run.rows) == 12 and run.rows[0].verdict in {"up-to-date", "irrelevant"}  # type: ignore[attr-defined]
    again = cp.load(run.path)
    assert again.layout == "run.json" and again.summary == run.summary and again.rows == run.rows
    assert again.config is not None and again.config.limit == 4 and again.lens == "outdated"  # type: ignore[attr-defined]
    assert again.config == run.config  # read back as the lens's own config type
    second = cp.run("outdated", models=mock_spec, limit=4)
    assert second.path != run.path and run.path.is_dir()  # run history: nothing replaced


@pytest.mark.e2e
def test_load_reads_folders_written_before_run_json(mock_spec: str, tmp_path: Path) -> None:
    run = cp.run("recency", models=mock_spec, data=str(ASSETS / "recency_sample.json"), sample=4, out=tmp_path / "r")
    old = tmp_path / "old"
    shutil.copytree(run.path, old)
    (old / "run.json").unlink()
    (old / "items.jsonl").unlink()
    shutil.copy(run.path / "items.jsonl", old / "items.jsonl")  # recency's old layout had items.jsonl too
    (old / ".chronoprobe-run").unlink()  # and older folders no marker: found by summary.json's layout
    back = cp.load(old)
    assert back.layout == "summary.json" and back.lens == "recency"
    assert back.summary.headline == run.summary.headline and back.rows == run.rows
    assert back.provenance.extra["questions"] == 4 and back.config is None  # no config before run.json


@pytest.mark.e2e
def test_a_model_handle_serves_runs_and_the_gate_with_one_load(mock_spec: str, tmp_path: Path) -> None:
    handle = cp.model(mock_spec)
    before = handle.backend.calls  # type: ignore[attr-defined]
    first = cp.run(
        "recency",
        models=handle,
        data=str(ASSETS / "recency_sample.json"),
        sample=3,
        context_mode="without",
        out=tmp_path / "a",
    )
    decisions = cp.recency_gate_many(["Who wrote Hamlet?", "Who wrote Hamlet, really?"], handle, samples=1)
    assert [d.predicted_class.label for d in decisions] == ["Never", "Never"]  # type: ignore[union-attr]
    assert not any(d.retrieve for d in decisions)
    assert first.summary.models == [mock_spec]
    assert handle.backend.calls > before  # type: ignore[attr-defined]


def test_to_pandas_and_its_clear_error(mock_spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = cp.run(
        "conflicts",
        models=mock_spec,
        dataset="dynamicqa",
        data=ASSETS / "dynamicqa_small",
        balanced_limit=3,
        judge="exact",
        persuasion={"n_samples": 2},
        out=tmp_path / "c",
    )
    assert json.loads((run.path / "run.json").read_text())["config"]["methodology"] == "dynamicqa"
    pandas = pytest.importorskip("pandas")
    frame = run.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and len(frame) == len(run.rows) and "model" in frame.columns
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(cp.ConfigError, match="pip install pandas"):
        run.to_pandas()


def test_user_mistakes_are_one_line_errors(mock_spec: str, tmp_path: Path) -> None:
    with pytest.raises(cp.ConfigError, match="'fixing' is not a lens"):
        cp.run("fixing", models=mock_spec)
    with pytest.raises(cp.ConfigError, match=r"from_ .* or dataset"):  # editing needs the facts to edit
        cp.run("editing", models=mock_spec)
    with pytest.raises(cp.ConfigError, match="limt"):
        cp.run("outdated", models=mock_spec, limt=3)
    with pytest.raises(cp.ConfigError, match="limit"):
        cp.run("outdated", models=mock_spec, limit=0)
    with pytest.raises(cp.DataError, match="not a chronoprobe run folder"):
        cp.load(tmp_path)


def _damage_log(folder: Path, change: str) -> None:
    log_path = folder / "run.json"
    log = json.loads(log_path.read_text())
    if change == "no summary":
        del log["summary"]
    elif change == "summary a list":
        log["summary"] = [1, 2]
    elif change == "summary a string":
        log["summary"] = "fine"
    elif change == "headline a list":
        log["summary"]["headline"] = [1]
    elif change == "models a number":
        log["summary"]["models"] = 3
    elif change == "provenance a string":
        log["provenance"] = "somewhere"
    elif change == "no lens":
        del log["lens"]
    log_path.write_text(json.dumps(log))


@pytest.mark.e2e
@pytest.mark.parametrize(
    "change",
    [
        "no summary",
        "summary a list",
        "summary a string",
        "headline a list",
        "models a number",
        "provenance a string",
        "no lens",
    ],
)
def test_load_names_a_damaged_run_json(mock_spec: str, tmp_path: Path, change: str) -> None:
    run = cp.run("outdated", models=mock_spec, limit=1, out=tmp_path / "run")
    _damage_log(run.path, change)
    with pytest.raises(cp.DataError) as caught:
        cp.load(run.path)
    assert str(run.path / "run.json") in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.e2e
def test_load_names_a_run_json_folder_and_unreadable_items(mock_spec: str, tmp_path: Path) -> None:
    run = cp.run("outdated", models=mock_spec, limit=1, out=tmp_path / "run")
    (run.path / "items.jsonl").write_bytes(b'{"model": "caf\xe9"}\n')
    with pytest.raises(cp.DataError, match=r"items\.jsonl.*not UTF-8"):
        cp.load(run.path)
    (run.path / "run.json").unlink()
    (run.path / "run.json").mkdir()  # not quietly read as an older folder through its summary.json
    with pytest.raises(cp.DataError, match=r"run\.json: is a folder"):
        cp.load(run.path)


@pytest.mark.e2e
def test_load_names_a_damaged_old_summary(mock_spec: str, tmp_path: Path) -> None:
    run = cp.run("outdated", models=mock_spec, limit=1, out=tmp_path / "run")
    (run.path / "run.json").unlink()
    summary = json.loads((run.path / "summary.json").read_text())
    for spec in summary["models"]:
        summary["models"][spec]["per_category"] = []
    (run.path / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(cp.DataError, match=r"summary\.json: unexpected outdated run layout"):
        cp.load(run.path)
