"""An editing run at the right size: --limit spread over the groups, a plan line before the work,
the per-fact notes rolled up into one line, and Table 8 as the harmonic mean (mock models, no weights)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from chronoprobe.api import run
from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.cli.main import main
from chronoprobe.engines import ModelSource
from chronoprobe.lenses.editing.config import EditingConfig
from chronoprobe.lenses.editing.lens import EditingLens
from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.models.registry import BackendOptions, parse_model
from chronoprobe.testing import register_mock, unregister_mock
from chronoprobe.testing.mock import mock_from_spec

NOBODY = "mock:constant=nobody in particular"


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An outdated run over the whole catalogue by a model that never names anyone: 130 facts not up-to-date."""
    folder = tmp_path_factory.mktemp("audit")
    run("outdated", NOBODY, out=folder / "run", cache=folder / "calls.sqlite")
    return folder / "run"


def _lens(audit: Path, **options: Any) -> EditingLens:
    config = EditingConfig(models=(NOBODY,), from_=audit, select="auto", locality=False, fluency=False, **options)
    lens = EditingLens(config)
    lens.load()
    return lens


@pytest.mark.e2e
def test_limit_spreads_over_the_groups_and_the_notes_agree_with_it(audit: Path) -> None:
    chosen = _lens(audit, balanced_limit=6, method=("rag-gold",)).sets[NOBODY]
    assert [r.group for r in chosen.records].count("Politicians") == 2
    assert [r.group for r in chosen.records].count("Teams") == 2
    assert [r.group for r in chosen.records].count("Positions") == 2
    assert chosen.notes == [
        "only 0 fact(s) are outdated (fewer than 10), so every fact that is not up-to-date qualifies: 130 facts",
        "--balanced-limit 6: 6 of the 130 facts are edited, spread over the groups (Politicians 2, Teams 2, Positions 2)",
    ]
    kept = {r.fact_id for r in chosen.records}
    assert chosen.fact_notes and set(chosen.fact_notes) <= kept  # notes about facts left out are dropped
    assert all(note.startswith(f"{fact}: ") for fact, note in chosen.fact_notes.items())


@pytest.mark.e2e
def test_the_plan_counts_the_calls_the_run_makes_and_learns_the_speed(audit: Path, tmp_path: Path) -> None:
    from chronoprobe.estimate import ROUGH_SPREAD
    from chronoprobe.lenses.editing.plan import ROUGH_SECONDS

    cache = tmp_path / "calls.sqlite"
    lens = _lens(audit, balanced_limit=4, method=("rag-gold", "ike-null"), scaling=(0.5,))
    [before] = lens.plan(cache)
    assert not cache.exists()  # planning reads a cache, never creates one
    # 4 facts x 3 scored questions: the unedited model, then each method on all 4 facts and on 2 (scaling 50%)
    assert (before.facts, before.calls, before.edits) == (4, 12 + 2 * 12 + 2 * 6, {})
    assert before.defaults == ["2.0 s per call"] and not before.timed
    rough = before.calls * ROUGH_SECONDS["call"]
    assert (before.time.low, before.time.high) == pytest.approx((rough * ROUGH_SPREAD[0], rough * ROUGH_SPREAD[1]))
    totals: list[int] = []

    def progress(description: str, total: int) -> Any:
        totals.append(total)
        return lambda done: None

    result = run("editing", NOBODY, out=tmp_path / "run", cache=cache, progress=progress, **_options(lens))
    assert totals == [before.calls]  # the bar and the plan count the same prompts
    assert (result.provenance.model_calls_made or {})[NOBODY] <= before.calls
    [after] = lens.plan(cache)
    assert after.timed and not after.defaults  # every step was timed by the run
    assert after.time.high < before.time.low / 100  # the mock answers at once


def _options(lens: EditingLens) -> dict[str, Any]:
    config = lens.config
    return {
        "from_": config.from_,
        "select": config.select,
        "balanced_limit": config.balanced_limit,
        "method": config.method,
        "scaling": config.scaling,
        "locality": False,
        "fluency": False,
    }


def test_weight_methods_are_planned_with_a_rough_default_per_edit(audit: Path) -> None:
    """No model loads for the plan: ROME's cost is the rough per-edit default until the cache has timed an edit."""
    from chronoprobe.estimate import ROUGH_SPREAD
    from chronoprobe.lenses.editing.plan import ROUGH_SECONDS

    config = EditingConfig(
        models=("smollm2",), from_=audit, select="auto", locality=False, fluency=False, balanced_limit=3
    )
    lens = EditingLens(config.model_copy(update={"method": ("rome",)}))
    lens.sets["smollm2"] = _lens(audit, balanced_limit=3, method=("rag-gold",)).sets[
        NOBODY
    ]  # the same facts, without reading the run again
    lens.audit, lens.loaded = None, True
    [plan] = lens.plan(None)
    assert plan.edits == {"rome": 3} and plan.defaults == ["2.0 s per call", "60 s per ROME edit"]
    rough = plan.calls * ROUGH_SECONDS["call"] + 3 * ROUGH_SECONDS["rome"]
    assert plan.time.high == pytest.approx(rough * ROUGH_SPREAD[1])


def test_the_cache_times_fresh_calls_per_spec_without_keeping_a_key(tmp_path: Path) -> None:
    from chronoprobe.cache import speed_subject

    spec = "openai:m@http://user:SECRET-KEY@127.0.0.1:9/v1"  # only its name matters here: a mock answers
    cache = CallCache(tmp_path / "c.sqlite")
    backend = mock_from_spec("echo")
    model = CachedModel(backend, cache, source=ModelSource(request=parse_model(spec), options=BackendOptions()))
    prompts = [Prompt(text=f"q{i}") for i in range(5)]
    model.generate(prompts, DecodingParams())
    model.generate(prompts, DecodingParams())  # all cached: nothing more is timed
    timing = cache.timing(speed_subject(spec))
    assert timing is not None and timing.count == 5
    assert cache.timing(speed_subject("openai:m@http://127.0.0.1:9/v1")) == timing  # keyed by the redacted spec
    assert cache.count() == 5  # the timing is not a cached call
    cache.close()
    dump = "\n".join(sqlite3.connect(tmp_path / "c.sqlite").iterdump())
    assert "SECRET-KEY" not in dump


def _edit_prompt_reader(prompt: str, params: object) -> str:
    """Names the current holder only when asked the edit prompt itself: efficacy 1, paraphrase 0."""
    if "The person currently serving as CEO of Amazon is" in prompt:
        return "Andy Jassy"
    return "I do not know."


def test_table_8_shows_the_harmonic_mean_and_keeps_the_soft_constraint(tmp_path: Path) -> None:
    from chronoprobe.knowledge.catalogue import load_catalogue
    from chronoprobe.knowledge.snapshot import load_snapshot
    from chronoprobe.lenses.editing.dataset import _record, write_dataset

    fact = next(f for f in load_catalogue() if f.fact_id == "companies_byRevenue/Amazon")
    record = _record(fact, load_snapshot(None).answers[fact.fact_id].counted().statements, [])
    dataset = tmp_path / "editing_dataset.json"
    write_dataset(dataset, [record])  # type: ignore[list-item]
    register_mock("edit-prompt-reader", _edit_prompt_reader, chat_template=True)
    try:
        run(
            "editing",
            "mock:edit-prompt-reader",
            dataset=dataset,
            method=("rag-gold", "rag-noisy"),
            locality=False,
            fluency=False,
            out=tmp_path / "run",
            cache=tmp_path / "calls.sqlite",
        )
    finally:
        unregister_mock("edit-prompt-reader")
    report = (tmp_path / "run" / "report.md").read_text()
    section = report.split("### Noisy retrieval (Table 8 shape): harmonic mean")[1].split("\n### ")[0]
    harmonic, soft = section.split("The soft constraint of the same answers")
    assert "the harmonic mean matches all 6" in harmonic
    assert "| RAG noisy | – | – | 0.0 [–] | 0.0 [–] |" in harmonic  # E 1, P 0: HM 0 (one fact, one position)
    assert "| RAG noisy | – | – | 100.0 [20.7, 100.0] | 100.0 [20.7, 100.0] |" in soft  # any question: 1


@pytest.mark.e2e
def test_the_cli_prints_one_plan_line_and_one_line_for_the_per_fact_notes(
    audit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["editing", "run", "--model", NOBODY, "--from", str(audit), "--select", "auto", "--method", "rag-gold"]
    args += ["--no-locality", "--no-fluency", "--out", str(tmp_path / "run"), "--cache", str(tmp_path / "c.sqlite")]
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *args])
    code: object = 0
    try:
        main()
    except SystemExit as stopped:
        code = stopped.code
    err = capsys.readouterr().err
    assert code in (0, None), err
    text = " ".join(err.split())
    assert text.count("plan:") == 1 and text.index("plan:") < text.index("report:")
    assert (
        f"plan: 1 method(s) (rag-gold); {NOBODY}: 130 facts, 780 model calls; about 9 min – 1 h 44 min (a rough "
        "range: the call cache has not timed this model on this machine yet, so it stands on 2.0 s per call); "
        "answers already in the call cache are not asked again; for a first look try --balanced-limit 10 --method "
        "ike-null,rag-gold"
    ) in text
    assert text.count("edit subject") == 1 and "report.md lists them" in text
    assert "is not in the edit prompt" not in text
    report = (tmp_path / "run" / "report.md").read_text()
    assert report.count("is not in the edit prompt") > 50  # the full list


@pytest.mark.e2e
def test_prompt_methods_alone_do_not_re_ask_the_audit(audit: Path, tmp_path: Path) -> None:
    """Locality is measured for ROME, MEMIT and SERAC*; without them the unedited audit is not asked again."""
    config = EditingConfig(
        models=(NOBODY,), from_=audit, select="auto", balanced_limit=3, fluency=False, method=("rag-gold",)
    )
    lens = EditingLens(config)
    lens.load()
    [plan] = lens.plan(None)
    assert plan.calls == 3 * 3 * 2  # the unedited model and rag-gold, 3 questions per fact
    with_serac = EditingLens(config.model_copy(update={"method": ("rag-gold", "serac")}))
    with_serac.load()
    [checked] = with_serac.plan(None)
    assert checked.calls == 3 * 3 * 3 + 130 * 3 + (130 - 3) * 3  # the whole audit before, the 127 others after
    options: dict[str, Any] = {
        "from_": audit,
        "select": "auto",
        "balanced_limit": 3,
        "fluency": False,
        "method": ("rag-gold",),
    }
    result = run("editing", NOBODY, out=tmp_path / "run", cache=tmp_path / "c.sqlite", **options)
    assert not [row for row in result.rows if row.role == "locality"]


def test_a_model_timed_only_by_other_lenses_is_estimated_from_those_calls(audit: Path) -> None:
    lens = _lens(audit, balanced_limit=3, method=("rag-gold",))
    [plan] = lens.plan(audit.parent / "calls.sqlite")  # the outdated audit timed this mock's calls there
    assert plan.defaults == [] and not plan.timed and plan.time.basis == "similar"
