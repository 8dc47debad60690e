"""End to end on the real embedded model (SmolLM2-135M), on tiny inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from through_lens import run_conflicts

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.datasets import mulan as ml
from chronoprobe.lenses.conflicts import completion as comp
from chronoprobe.lenses.conflicts import persuasion as pers
from chronoprobe.lenses.conflicts.contexts import (
    ContextsConfig,
    build_contexts,
    load_context_file,
)
from chronoprobe.lenses.conflicts.prompts import PromptWording
from chronoprobe.metrics import conflicts as m
from chronoprobe.metrics import mulan as mm

ASSETS = Path(__file__).resolve().parents[1] / "assets"


@pytest.fixture()
def cached(smollm2, tmp_path: Path) -> CachedModel:  # type: ignore[no-untyped-def]
    return CachedModel(smollm2, CallCache(tmp_path / "calls.sqlite"))


@pytest.mark.slow
def test_dynamicqa_methodology_end_to_end(cached: CachedModel, tmp_path: Path):
    persuasion = pers.PersuasionConfig(n_samples=3, max_new_tokens=8)
    result = run_conflicts(
        [cached],
        tmp_path / "out",
        dataset="dynamicqa",
        methodology="dynamicqa",
        data=ASSETS / "dynamicqa_small",
        balanced_limit=1,
        persuasion=persuasion,
    )
    rows = [json.loads(line) for line in (tmp_path / "out" / "items.jsonl").read_text().splitlines()]
    assert [r["item_id"] for r in rows] == ["dynamicqa/static/1/true", "dynamicqa/static/1/cf"]
    cf = rows[1]
    assert len(cf["answers_context"]) == 3 and len(cf["clusters_context"]) == 3
    # Recompute CP and SE for the counterfactual item from the cached samples.
    params = persuasion.decoding()
    wording = PromptWording()
    from chronoprobe.datasets.dynamicqa import expand, load_dynamicqa
    from chronoprobe.lenses.conflicts.prompts import qa_prompt

    fact = load_dynamicqa(ASSETS / "dynamicqa_small")[0]
    item = expand(fact)[1]
    calls_before = cached.calls_made
    gen_ctx, gen_base = cached.generate(
        [qa_prompt(wording, item.question, item.context), qa_prompt(wording, fact.question)], params
    )
    assert cached.calls_made == calls_before  # served from the cache
    cp = m.coherent_persuasion_from_samples(
        [s.mean_distribution for s in gen_ctx.samples],
        cf["clusters_context"],
        [s.mean_distribution for s in gen_base.samples],
        cf["clusters_no_context"],
    )
    assert cf["cp"] == pytest.approx(cp)
    assert cf["se_context"] == pytest.approx(
        m.semantic_entropy([s.mean_logprob for s in gen_ctx.samples], cf["clusters_context"])
    )
    assert all(np.isclose(s.mean_distribution.sum(), 1.0, atol=1e-3) for s in gen_ctx.samples)
    summary = json.loads((result.path / "summary.json").read_text())["summary"]["smollm2"]["static"]
    assert summary["cp"] == pytest.approx((rows[0]["cp"] + cf["cp"]) / 2)  # all items, as the paper
    assert summary["cp_counterfactual"] == pytest.approx(cf["cp"])
    assert summary["accuracy_context"] == pytest.approx((rows[0]["correct_context"] + cf["correct_context"]) / 2)
    assert result.provenance.judge == "exact"
    assert (tmp_path / "out" / "cp.png").stat().st_size > 1000
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Coherent Persuasion" in report and "| smollm2 w/context |" in report


@pytest.mark.slow
def test_mulan_methodology_with_updates(cached: CachedModel, shared_data: Path):
    queries = [q for q in ml.load_queries(ASSETS / "mulan_queries.jsonl") if q.relation == "P36"]
    templates = ml.load_templates(shared_data / "mulan" / "templates" / "clean.json")
    converted = comp.mulan_completion_queries(queries, templates, {})
    config = comp.CompletionConfig(max_new_tokens=6, min_confidence=0.0)
    wording = PromptWording()
    rows = comp.run_completion(cached, converted, config, wording)
    assert len(rows) == 10
    for r in rows:
        assert r.f1 == pytest.approx(mm.f1_with_aliases(r.prediction, r.golds, truncate="tokens"))
        assert r.confidence is not None and 0.0 <= r.confidence <= 1.0
    updates = comp.run_updates(cached, converted, rows, config, wording)
    memorised = comp.select_for_update(rows, config)
    assert len(updates) == len(memorised)
    for u in updates:
        assert u.new_object == {"Q142_P36": "Berlin", "Q183_P36": "Paris"}[u.fact_id]
        assert u.success == mm.update_succeeded(u.prediction, u.new_object)
        assert u.new_object in u.altered_fact
    summary = comp.summarise_completion(rows, updates, ["immutable-1"], config)["immutable-1"]
    assert summary["memorised"] == len(memorised)  # one class: balancing keeps every memorised fact
    scored = [r for r in rows if r.prediction.strip()]  # empty predictions are left out of F1
    assert summary["f1"] == pytest.approx(100 * sum(r.f1 for r in scored) / len(scored))
    assert summary["empty_predictions"] == len(rows) - len(scored)
    # --fidelity original: character truncation and the original's confidence rule on the same generations.
    original = comp.run_completion(cached, converted, config.model_copy(update={"fidelity": "original"}), wording)
    for r in original:
        assert r.f1 == pytest.approx(mm.f1_with_aliases(r.prediction, r.golds, truncate="characters"))


@pytest.mark.slow
def test_cross_dataset_runs(cached: CachedModel, tmp_path: Path, shared_data: Path):
    # MuLan through DynamicQA's lens, from a contexts file.
    facts = load_context_file(ASSETS / "mulan_contexts.jsonl")
    assert [f.fact_class for f in facts] == ["immutable-1", "immutable-N", "mutable"]
    out = tmp_path / "mulan-dq"
    result = run_conflicts(
        [cached],
        out,
        dataset="mulan",
        methodology="dynamicqa",
        data=ASSETS / "mulan_contexts.jsonl",
        balanced_limit=1,
        persuasion=pers.PersuasionConfig(n_samples=2, max_new_tokens=6),
    )
    assert json.loads((result.path / "summary.json").read_text())["classes"] == [
        "immutable-1",
        "immutable-N",
        "mutable",
    ]
    assert json.loads((result.path / "summary.json").read_text())["summary"]["smollm2"]["immutable-1"]["facts"] == 1
    # DynamicQA through MuLan's lens: static and temporal only, five statements per fact.
    out2 = tmp_path / "dq-mulan"
    result2 = run_conflicts(
        [cached],
        out2,
        dataset="dynamicqa",
        methodology="mulan",
        data=ASSETS / "dynamicqa_small",
        balanced_limit=2,
        templates=shared_data / "temporal_conflicts" / "dynamicqa_converted_templates.csv",
        completion=comp.CompletionConfig(max_new_tokens=6),
    )
    assert json.loads((result2.path / "summary.json").read_text())["classes"] == ["static", "temporal"]
    rows = [json.loads(line) for line in (out2 / "items.jsonl").read_text().splitlines()]
    assert sum(r["kind"] == "completion" for r in rows) == 10
    assert "Update success rate" in (out2 / "report.md").read_text()


@pytest.mark.slow
def test_contexts_pipeline_filters_masks_and_swaps(cached: CachedModel, shared_data: Path):
    queries = [q for q in ml.load_queries(ASSETS / "mulan_queries.jsonl") if q.relation in {"P36", "P19"}]
    templates = ml.load_templates(shared_data / "mulan" / "templates" / "clean.json")
    from chronoprobe.judges.embedding import Embedder

    embedder = Embedder()

    # A real entailment function standing in for an NLI model: fully entailed iff the passage
    # contains the fact sentence's object.
    def entail(pairs):  # type: ignore[no-untyped-def]
        return [1.0 if s.rstrip(".").split()[-1].lower() in p.lower() else 0.0 for p, s in pairs]

    rows, dropped = build_contexts(
        queries, templates, {}, cached, entail, embedder.embed, ContextsConfig(max_new_tokens=40), PromptWording()
    )
    assert len(rows) + sum(dropped.values()) == 4
    for row in rows:
        assert "[ENTITY]" in row.context and row.obj.lower() not in row.context.lower()
        assert row.replace_name != row.obj and mm.shares_no_word(row.replace_name, row.obj)
        assert row.entailment == 1.0
    subsampled = build_contexts(
        queries,
        templates,
        {},
        cached,
        entail,
        embedder.embed,
        ContextsConfig(max_new_tokens=40, per_class=1),
        PromptWording(),
    )[0]
    assert len(subsampled) <= 1


@pytest.mark.e2e
def test_cli_errors_are_one_line(tmp_path: Path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "chronoprobe.cli.main",
            "conflicts",
            "run",
            "dynamicqa",
            "--data",
            str(tmp_path / "none"),
            "--judge",
            "exact",
            "--cache",
            str(tmp_path / "c.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "--data" in proc.stderr and "no such file or folder" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "chronoprobe.cli.main", "conflicts", "run", "wikidata"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "is not one of dynamicqa, mulan" in proc.stderr
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "chronoprobe.cli.main",
            "conflicts",
            "run",
            "mulan",
            "--fidelity",
            "paper",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "--fidelity" in proc.stderr and "is not one of corrected, original" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
