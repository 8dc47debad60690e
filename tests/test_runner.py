"""The one runner: every lens writes the shared run log, keeps its old files, and its numbers equal the
old per-lens pipelines' on the same (mock) model."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.contract.lens import Lens
from chronoprobe.contract.lens_run import default_out, lens_tool
from chronoprobe.contract.runner import produce
from chronoprobe.contract.tool import RunSettings, Tool, ToolContext
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.conflicts.lens import ConflictsConfig, ConflictsLens
from chronoprobe.lenses.outdated.audit import AuditConfig
from chronoprobe.lenses.outdated.lens import OutdatedLens
from chronoprobe.lenses.recency.lens import RecencyLens, RecencyRunConfig
from chronoprobe.models.base import DecodingParams
from chronoprobe.models.registry import BackendOptions, load_backend
from chronoprobe.records.runlog import Run
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock

ASSETS = Path(__file__).resolve().parent / "assets"
SRC = Path(__file__).resolve().parents[1] / "src" / "chronoprobe"


def answers(prompt: MockPrompt, params: DecodingParams) -> str:
    asked = prompt.request
    if "Italy" in asked:
        return "Sergio Mattarella"
    if "Question: " in asked:
        return "A-Year" if "Context: " in asked else "Never"
    return "Paris"


@pytest.fixture
def mock_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    register_mock("runner", answers)
    yield "mock:runner"
    unregister_mock("runner")


def _cached(spec: str, cache: CallCache) -> CachedModel:
    backend = load_backend(spec, BackendOptions())
    backend.info.name = "runner"
    return CachedModel(backend, cache)


def execute(lens: type[Lens[Any]], config: BaseModel, out: Path, **settings: Any) -> Run:
    """A run of ``lens`` with ``config`` through the one runner, published at ``out``."""
    run: Run = produce(lens_tool(lens).of(config, out), RunSettings(**settings))
    return run


def _log(folder: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((folder / "run.json").read_text(encoding="utf-8"))


@pytest.mark.e2e
def test_outdated_through_the_runner_equals_the_old_pipeline(tmp_path: Path, mock_spec: str) -> None:
    from chronoprobe.lenses.outdated.audit import facts_without_gold, load_gold, run_audit
    from chronoprobe.lenses.outdated.summary import summarize_model

    config = AuditConfig(models=(mock_spec,), limit=4)
    cache = CallCache(tmp_path / "calls.sqlite")
    facts, gold = load_gold(config)  # the old CLI's steps, one by one
    old = summarize_model(
        run_audit(config, _cached(mock_spec, cache), facts, gold),
        with_as_of=False,
        no_gold=facts_without_gold(facts, gold),
    )
    result = execute(OutdatedLens, config, tmp_path / "run", cache=tmp_path / "calls.sqlite")
    new = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))["models"][mock_spec]
    new.pop("name")
    assert (
        "estimate" in new.pop("knowledge_date")["per_category"]["all"]
    )  # 0.2's addition; every older number as before
    assert new.pop("claimed_cutoff")["asked"] == 3  # what it says its cutoff is: a block of its own
    assert new == json.loads(json.dumps(old))
    log = _log(tmp_path / "run")
    assert log["lens"] == "outdated" and log["kind"] == "outdated run" and log["format"] == "chronoprobe-run/1"
    assert log["config"]["limit"] == 4 and log["summary"]["models"] == [mock_spec]
    assert log["summary"]["headline"][mock_spec]["soft_constraint_pct.up-to-date"] == pytest.approx(100 / 4)
    assert log["provenance"]["snapshot"]["name"] == gold.name and log["provenance"]["extra"]["facts"] == 4
    items = (tmp_path / "run" / "items.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(items) == len(result.rows) == 12
    assert items == (tmp_path / "run" / "responses.jsonl").read_text(encoding="utf-8").splitlines()  # old name kept
    assert {"report.md", "recency.png", "verdicts.png", ".chronoprobe-run"} <= {
        p.name for p in (tmp_path / "run").iterdir()
    }
    assert log["files"]["plots"] == ["knowledge_date.png", "recency.png", "staleness.png", "verdicts.png"]


@pytest.mark.e2e
def test_recency_through_the_runner_equals_the_old_pipeline(tmp_path: Path, mock_spec: str) -> None:
    from chronoprobe.datasets.recencyqa import load_recencyqa, stratified_sample
    from chronoprobe.lenses.recency.evaluate import evaluate
    from chronoprobe.lenses.recency.rows import RecencyRow
    from chronoprobe.lenses.recency.summary import summarise

    config = RecencyRunConfig(
        models=(mock_spec,), data=str(ASSETS / "recency_sample.json"), sample=6, strategy=("zero-shot", "few-shot")
    )
    pool = load_recencyqa(config.data)
    questions = stratified_sample(pool, 6, 0)
    old_rows = evaluate(questions, _cached(mock_spec, CallCache(tmp_path / "calls.sqlite")), config, pool=pool)
    old = json.loads(json.dumps(summarise([RecencyRow(**r) for r in old_rows], config.tolerance)))
    execute(RecencyLens, config, tmp_path / "run", cache=tmp_path / "calls.sqlite")
    new = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    new.pop("provenance")
    new.pop("router")  # the trained router beside the model: the lens's addition (tests/router)
    for run in new["runs"]:
        run.pop("confusion_png")
    assert new == old
    items = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert items == json.loads(json.dumps(old_rows))  # the typed rows are the old rows, field for field
    log = _log(tmp_path / "run")
    assert log["lens"] == "recency" and any(m["n"] == old["runs"][0]["n"] for m in log["summary"]["metrics"])
    assert log["provenance"]["extra"]["questions"] == 6


@pytest.mark.e2e
@pytest.mark.parametrize("methodology", ["dynamicqa", "mulan"])
def test_conflicts_through_the_runner_equals_its_steps(tmp_path: Path, mock_spec: str, methodology: str) -> None:
    from chronoprobe.judges import load_judge
    from chronoprobe.lenses.conflicts import run as steps
    from chronoprobe.lenses.conflicts.prompts import PromptWording

    options = {
        "dataset": "dynamicqa",
        "methodology": methodology,
        "data": ASSETS / "dynamicqa_small",
        "balanced_limit": 3,
    }
    if methodology == "mulan":
        options |= {"dataset": "mulan", "aliases_file": ASSETS / "mulan_aliases.jsonl", **_mulan_files(tmp_path)}
    config = ConflictsConfig(judge="exact", models=(mock_spec,), **options)
    cache = CallCache(tmp_path / "calls.sqlite")
    judge = load_judge("exact", cache=cache) if methodology == "dynamicqa" else None
    model = _cached(mock_spec, cache)
    inputs, classes = steps.load_inputs(config)  # the pipeline's steps, one by one
    rows = steps.run_model(config, model, judge, inputs, PromptWording(), None)
    summary = steps.summarise(config, [model], rows, classes)
    execute(ConflictsLens, config, tmp_path / "new", cache=tmp_path / "calls.sqlite")
    new = json.loads((tmp_path / "new" / "summary.json").read_text(encoding="utf-8"))
    assert new["summary"] == json.loads(json.dumps(summary)) and new["classes"] == list(classes)
    written = (tmp_path / "new" / "items.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in written] == [r.model_dump(mode="json") for r in rows]
    assert _log(tmp_path / "new")["provenance"]["extra"]["methodology"] == methodology


MULAN_TEMPLATES = {  # the wording of the shipped MuLan queries for three relations
    "P36": [
        "The capital city of [X] is [Y].",
        "[X]'s capital city is [Y].",
        "[X], whose the capital city is [Y].",
        "[X] is governed from the capital city of [Y].",
        "[X] with capital city in [Y].",
    ],
    "P47": [
        "[X] shares border with [Y].",
        "[X] shares a common border with [Y].",
        "[X] borders with [Y].",
        "[X] is on the border of [Y].",
        "[X] is neighboring [Y].",
    ],
    "P54": [
        "[X] plays with [Y].",
        "[X] is a sport team member of [Y].",
        "[X] is part of the sports roster for [Y].",
        "[X] competes in sports for [Y].",
        "[X] is a team member representing [Y].",
    ],
}


def _mulan_files(tmp_path: Path) -> dict[str, Path]:
    lines = (ASSETS / "mulan_queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(x for x in lines if x.strip() and json.loads(x)["relation"] in MULAN_TEMPLATES) + "\n")
    templates = tmp_path / "clean.json"
    templates.write_text(json.dumps({r: {"templates": t} for r, t in MULAN_TEMPLATES.items()}), encoding="utf-8")
    return {"data": queries, "templates": templates}


def test_default_out_is_one_new_folder_per_run(tmp_path: Path) -> None:
    lens = OutdatedLens(AuditConfig())
    now = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    first = default_out(lens, ["qwen=hf:Qwen/Qwen2.5-0.5B-Instruct"], tmp_path, now=now)
    assert first == tmp_path / "outdated" / "qwen-20260102T030405Z"
    first.mkdir(parents=True)
    assert (
        default_out(lens, ["qwen=hf:Qwen/Qwen2.5-0.5B-Instruct"], tmp_path, now=now).name == "qwen-20260102T030405Z-2"
    )
    assert default_out(lens, None, tmp_path, now=now).name == "smollm2-20260102T030405Z"
    conflicts = ConflictsLens(ConflictsConfig(dataset="mulan"))  # type: ignore[call-arg]  # a validator fills methodology from dataset
    assert default_out(conflicts, ["gguf:/m/x.gguf", "smollm2"], tmp_path, now=now).name == (
        "x+smollm2-mulan-mulan-20260102T030405Z"
    )


def test_provenance_is_built_in_one_place() -> None:
    builders = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if re.search(r"\bProvenance\(", path.read_text(encoding="utf-8"))
    )
    assert builders == ["provenance.py"]


def test_bad_data_fails_before_any_model_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chronoprobe.errors import ChronoprobeError

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a model was loaded before the data was checked")

    monkeypatch.setattr("chronoprobe.contract.runner.load_backend", refuse)
    missing = tmp_path / "missing.json"
    lenses: list[tuple[type[Lens[Any]], BaseModel]] = [
        (RecencyLens, RecencyRunConfig(data=str(missing))),
        (ConflictsLens, ConflictsConfig(dataset="dynamicqa", data=missing)),  # type: ignore[call-arg]  # a validator fills methodology from dataset
        (OutdatedLens, AuditConfig(facts=missing)),
    ]
    for lens, config in lenses:
        with pytest.raises(ChronoprobeError):
            execute(lens, config, tmp_path / lens.name)
        assert not (tmp_path / lens.name).exists()


@pytest.mark.e2e
def test_cli_runs_without_out_keep_their_history(
    tmp_path: Path, mock_spec: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from chronoprobe.cli.main import main

    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        monkeypatch.setattr(
            sys, "argv", ["chronoprobe", "outdated", "run", "--model", f"short={mock_spec}", "--limit", "2"]
        )
        code: object = 0
        try:
            main()
        except SystemExit as stopped:
            code = stopped.code
        assert code in (0, None), capsys.readouterr().err
    runs = sorted((tmp_path / "results" / "outdated").iterdir())
    assert len(runs) == 2 and all(re.fullmatch(r"short-\d{8}T\d{6}Z(-2)?", p.name) for p in runs)
    assert all((p / "run.json").is_file() and (p / "summary.json").is_file() for p in runs)


class _NothingConfig(BaseModel):
    """A command without options."""


class _Nothing(Tool[int]):
    """A command that answers 7 and writes nothing."""

    name = "nothing"
    command = "nothing"
    config_type = _NothingConfig

    def run(self, context: ToolContext) -> int:
        return 7 if context.engine.local else 0


def test_produce_takes_run_settings_and_0_2_0s_keywords_until_0_4_0(tmp_path: Path) -> None:
    tool = _Nothing(_NothingConfig())
    assert produce(tool) == produce(tool, RunSettings(engine="local", cache=tmp_path / "c.sqlite")) == 7
    with pytest.warns(
        DeprecationWarning, match=r"produce\(\)'s keywords cache, engine are deprecated and removed in 0\.4\.0"
    ):
        assert produce(tool, cache=tmp_path / "c.sqlite", engine="local") == 7
    with pytest.raises(ConfigError, match=r"^settings: give settings or cache, not both$"):
        produce(tool, RunSettings(), cache=tmp_path / "c.sqlite")
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) caches"):
        produce(tool, caches=tmp_path)
