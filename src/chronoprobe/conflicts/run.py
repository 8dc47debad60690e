"""One conflicts run: a dataset through a methodology, for one or more models.

Outputs in ``out``: ``items.jsonl`` (per-item rows of every model), ``summary.json``
(per model per class, with provenance), ``report.md`` (tables mirroring the
paper's) and, for the DynamicQA methodology, ``cp.png``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe import publish
from chronoprobe.cache import CachedModel
from chronoprobe.conflicts import completion as comp
from chronoprobe.conflicts import persuasion as pers
from chronoprobe.conflicts import report
from chronoprobe.conflicts.prompts import PromptWording
from chronoprobe.conflicts.sources import dynamicqa_default, shared_path
from chronoprobe.conflicts.templates import QuestionMatcher, load_converted_templates
from chronoprobe.datasets import dynamicqa as dq
from chronoprobe.datasets import mulan as ml
from chronoprobe.errors import ConfigError
from chronoprobe.io import write_json_atomic, write_jsonl_atomic, write_text_atomic
from chronoprobe.judges import JudgeChoice
from chronoprobe.metrics import mulan as mm
from chronoprobe.provenance import Provenance

Dataset = Literal["dynamicqa", "mulan"]


class RunConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    dataset: Dataset
    methodology: Dataset
    data: Path | None = None
    aliases: Path | None = None
    templates: Path | None = None
    limit: int | None = Field(None, ge=1)
    out: Path
    persuasion: pers.PersuasionConfig = pers.PersuasionConfig()
    completion: comp.CompletionConfig = comp.CompletionConfig()
    prompt_file: Path | None = None


DQ_CLASSES = ("static", "temporal", "disputed")
DQ_COMPLETION_CLASSES = ("static", "temporal")


def load_persuasion_facts(config: RunConfig) -> tuple[list[dq.ContextFact], tuple[str, ...]]:
    if config.dataset == "dynamicqa":
        facts = dq.load_dynamicqa(config.data or dynamicqa_default())
        return dq.take_balanced(facts, config.limit), DQ_CLASSES
    if config.data is None:
        raise ConfigError("--data", "MuLan through DynamicQA's methodology needs a contexts file from `chronoprobe conflicts contexts`")
    from chronoprobe.conflicts.contexts import load_context_file

    facts = load_context_file(config.data)
    return dq.take_balanced(facts, config.limit), ml.MULAN_CLASSES


def load_completion_queries(config: RunConfig) -> tuple[list[comp.CompletionQuery], tuple[str, ...]]:
    if config.dataset == "mulan":
        queries = ml.load_queries(config.data or ml.QUERIES_HUB_ID)
        queries = ml.take_balanced_facts(queries, config.limit)
        templates = ml.load_templates(config.templates or shared_path("mulan/templates/clean.json", "--templates"))
        aliases = ml.load_aliases(config.aliases or shared_path("temporal_conflicts/aliases_MULAN.json", "--aliases"))
        return comp.mulan_completion_queries(queries, templates, aliases), ml.MULAN_CLASSES
    facts = dq.load_dynamicqa(config.data or dynamicqa_default(), classes=DQ_COMPLETION_CLASSES)
    facts = dq.take_balanced(facts, config.limit)
    converted = load_converted_templates(
        config.templates or shared_path("temporal_conflicts/dynamicqa_converted_templates.csv", "--templates")
    )
    return comp.dynamicqa_completion_queries(facts, QuestionMatcher(converted)), DQ_COMPLETION_CLASSES


def load_inputs(config: RunConfig) -> tuple[list[Any], tuple[str, ...]]:
    """The run's facts (DynamicQA methodology) or completion queries (MuLan methodology), and classes.
    Called before any model is loaded, so bad data fails fast."""
    if config.methodology == "dynamicqa":
        return load_persuasion_facts(config)
    return load_completion_queries(config)


def run(
    config: RunConfig,
    models: Sequence[CachedModel],
    judge: JudgeChoice | None,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None = None,
    inputs: tuple[list[Any], tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """Run, write every output atomically at the end, return the summary."""
    facts_or_queries, classes = inputs or load_inputs(config)
    wording = PromptWording.from_file(config.prompt_file)
    title = f"{_name(config.dataset)} through {_name(config.methodology)}'s methodology"
    extra: dict[str, Any] = {"dataset": config.dataset, "methodology": config.methodology,
                             "data": str(config.data) if config.data else "default", "limit": config.limit}
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    if config.methodology == "dynamicqa":
        if judge is None:
            raise ConfigError("--judge", "the DynamicQA methodology needs an equivalence judge")
        facts = facts_or_queries
        distribution_sources = {m.info.spec: pers.check_capabilities(m, config.persuasion) for m in models}
        extra["distribution"] = distribution_sources
        extra["judge"] = judge.judge.describe()
        for model in models:
            tick = progress_factory(f"{model.info.spec}", 3 * len(facts)) if progress_factory else None
            model_rows = pers.run_persuasion(model, facts, judge.judge, config.persuasion, wording, tick)
            rows.extend(model_rows)
            summary[model.info.spec] = pers.summarise_persuasion(
                model_rows, classes, no_context_accuracy_classes=[c for c in classes if c != "disputed"]
            )
        decoding = config.persuasion.decoding().model_dump(mode="json")
        seeds = [config.persuasion.seed]
        body = report.persuasion_markdown(summary, classes, title)
    else:
        queries = facts_or_queries
        updates_all: list[dict[str, Any]] = []
        for model in models:
            tick = progress_factory(f"{model.info.spec}", len(queries)) if progress_factory else None
            completion_rows = comp.run_completion(model, queries, config.completion, wording, tick)
            updates = comp.run_updates(model, queries, completion_rows, config.completion, wording)
            rows.extend({"kind": "completion", **r} for r in completion_rows)
            updates_all.extend(updates)
            rows.extend({"kind": "update", **u} for u in updates)
            summary[model.info.spec] = comp.summarise_completion(completion_rows, updates, classes, config.completion)
        decoding = config.completion.decoding().model_dump(mode="json")
        seeds = [config.completion.seed]
        extra["fidelity"] = config.completion.fidelity
        extra["f1_truncation"] = mm.f1_truncation(config.completion.fidelity)
        body = report.completion_markdown(summary, classes, title, config.completion.fidelity)
    provenance = Provenance(
        models=[m.info for m in models], decoding=decoding, seeds=seeds,
        judge=judge.record if judge is not None and config.methodology == "dynamicqa" else None, extra=extra,
    ).model_dump(mode="json")
    body += report.model_sweep_markdown(summary, classes, provenance, config.methodology)
    result = {"classes": list(classes), "summary": summary, "provenance": provenance}
    with publish.staged(config.out, "conflicts run") as out:
        write_jsonl_atomic(out / "items.jsonl", rows)
        write_json_atomic(out / "summary.json", result)
        if config.methodology == "dynamicqa":
            report.cp_bar_plot(summary, classes, out / "cp.png")
            body += "\n![Coherent Persuasion per class](cp.png)\n"
        write_text_atomic(out / "report.md", report.full_report(body, provenance))
    return result


def _name(dataset: str) -> str:
    return {"dynamicqa": "DynamicQA", "mulan": "MuLan"}[dataset]
