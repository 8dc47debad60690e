"""One conflicts run: a dataset through a methodology, for one or more models (the conflicts lens's steps).

The files :func:`write_files` puts into the runner's staging folder: ``items.jsonl`` (per-item rows of every model), ``summary.json``
(per model per class, with provenance), ``report.md`` (tables mirroring the
paper's) and, for the DynamicQA methodology, ``cp.png``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.cache import CachedModel
from chronoprobe.datasets import dynamicqa as dq
from chronoprobe.datasets import mulan as ml
from chronoprobe.errors import ConfigError
from chronoprobe.io import write_json_atomic, write_jsonl_atomic, write_text_atomic
from chronoprobe.judges import JudgeChoice
from chronoprobe.lenses.conflicts import completion as comp
from chronoprobe.lenses.conflicts import persuasion as pers
from chronoprobe.lenses.conflicts import report
from chronoprobe.lenses.conflicts.contexts import load_context_file
from chronoprobe.lenses.conflicts.prompts import PromptWording
from chronoprobe.lenses.conflicts.rows import CompletionRow, ConflictsRow, PersuasionRow, UpdateRow, typed_row
from chronoprobe.lenses.conflicts.sources import Input, shared_path
from chronoprobe.lenses.conflicts.sources import check_inputs as check_files
from chronoprobe.lenses.conflicts.templates import QuestionMatcher, load_converted_templates
from chronoprobe.metrics import mulan as mm
from chronoprobe.metrics.uncertainty import as_estimate, newcombe
from chronoprobe.provenance import Provenance
from chronoprobe.records.fields import INTERNAL, Cli

Dataset = Literal["dynamicqa", "mulan"]
RowT = TypeVar("RowT", bound=ConflictsRow)


class RunConfig(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    dataset: Annotated[Dataset, Cli(argument="DATASET")]
    """dynamicqa (shipped) or mulan (needs its files: chronoprobe docs conflicts)."""
    methodology: Dataset
    """dynamicqa (CP, SE, accuracy) or mulan (F1, update success); default: the dataset's own."""
    data: Path | None = None
    """Where the data comes from: a DynamicQA folder of CSVs, a MuLan queries JSONL, or a contexts JSONL (default:
    DynamicQA's copy shipped with chronoprobe; MuLan's queries from the hub, coastalcph/fm_queries)."""
    aliases_file: Path | None = None
    """MuLan aliases (JSON map QID -> aliases, or fm_aliases JSONL)."""
    templates: Path | None = None
    """MuLan clean.json templates, or DynamicQA's converted templates CSV."""
    balanced_limit: int | None = Field(None, ge=1)
    """At most N facts in total, not per class, spread evenly over the classes (50 over three classes: 16 or 17 each)."""
    persuasion: Annotated[pers.PersuasionConfig, INTERNAL] = pers.PersuasionConfig()
    completion: Annotated[comp.CompletionConfig, INTERNAL] = comp.CompletionConfig()
    wording: Path | None = None
    """JSON file replacing our prompt wording (keys qa, qa_context, completion, update, passage)."""


DQ_CLASSES = ("static", "temporal", "disputed")
DQ_COMPLETION_CLASSES = ("static", "temporal")


def load_persuasion_facts(config: RunConfig) -> tuple[list[dq.ContextFact], tuple[str, ...]]:
    if config.dataset == "dynamicqa":
        facts = dq.load_dynamicqa(config.data or dq.default_source())
        return dq.take_balanced(facts, config.balanced_limit), DQ_CLASSES
    if config.data is None:
        raise ConfigError(
            "--data",
            "MuLan through DynamicQA's methodology needs a contexts file from `chronoprobe conflicts contexts`",
        )

    facts = load_context_file(config.data)
    return dq.take_balanced(facts, config.balanced_limit), ml.MULAN_CLASSES


def load_completion_queries(config: RunConfig) -> tuple[list[comp.CompletionQuery], tuple[str, ...]]:
    if config.dataset == "mulan":
        # the local files first: a missing one is named before the hub is tried
        templates = ml.load_templates(config.templates or shared_path(MULAN_TEMPLATES, "--templates"))
        aliases = ml.load_aliases(config.aliases_file or shared_path(MULAN_ALIASES, "--aliases-file"))
        queries = ml.take_balanced_facts(ml.load_queries(config.data or ml.QUERIES_HUB_ID), config.balanced_limit)
        return comp.mulan_completion_queries(queries, templates, aliases), ml.MULAN_CLASSES
    facts = dq.load_dynamicqa(config.data or dq.default_source(), classes=DQ_COMPLETION_CLASSES)
    facts = dq.take_balanced(facts, config.balanced_limit)
    converted = load_converted_templates(config.templates or shared_path(CONVERTED_TEMPLATES, "--templates"))
    return comp.dynamicqa_completion_queries(facts, QuestionMatcher(converted)), DQ_COMPLETION_CLASSES


MULAN_TEMPLATES = "mulan/templates/clean.json"
MULAN_ALIASES = "temporal_conflicts/aliases_MULAN.json"
CONVERTED_TEMPLATES = "temporal_conflicts/dynamicqa_converted_templates.csv"


def _hub_available() -> bool:

    return find_spec("datasets") is not None


def mulan_inputs(data: Path | None, templates: Path | None, aliases: Path | None) -> list[Input]:
    """MuLan's three files: queries (``--data``, else the hub), templates and aliases (else the shared folder)."""
    found = []
    if data is not None or not _hub_available():
        found.append(
            Input(
                "--data",
                data,
                what="MuLan's queries file (JSONL, chronoprobe docs conflicts; not shipped: no licence); "
                f"without it they come from the hub ({ml.QUERIES_HUB_ID}), which needs network and "
                "pip install 'chronoprobe[hub]'",
            )
        )
    found.append(Input("--templates", templates, MULAN_TEMPLATES))
    found.append(Input("--aliases-file", aliases, MULAN_ALIASES))
    return found


def inputs_of(config: RunConfig) -> list[Input]:
    """Every file this run reads, with the option that gives it and where it comes from without one."""
    found: list[Input] = []
    if config.dataset == "mulan" and config.methodology == "dynamicqa":
        found.append(
            Input(
                "--data",
                config.data,
                what="a contexts file from `chronoprobe conflicts contexts` (MuLan through "
                "DynamicQA's methodology needs one)",
            )
        )
    elif config.dataset == "mulan":
        found += mulan_inputs(config.data, config.templates, config.aliases_file)
    else:
        if config.data is not None:
            found.append(Input("--data", config.data))
        if config.methodology == "mulan":
            found.append(Input("--templates", config.templates, CONVERTED_TEMPLATES))
    if config.wording is not None:
        found.append(Input("--wording", config.wording))
    return found


def check_inputs(config: RunConfig) -> None:
    """All missing inputs in one error, before any work (:func:`~chronoprobe.lenses.conflicts.sources.check_inputs`)."""
    check_files(
        inputs_of(config),
        f"conflicts run {config.dataset}"
        + (f" --methodology {config.methodology}" if config.methodology != config.dataset else ""),
    )


def load_inputs(config: RunConfig) -> tuple[list[Any], tuple[str, ...]]:
    """The run's facts (DynamicQA methodology) or completion queries (MuLan methodology), and classes.
    Called before any model is loaded, so bad data fails fast; every missing file is named first, at once."""
    check_inputs(config)
    if config.methodology == "dynamicqa":
        return load_persuasion_facts(config)
    return load_completion_queries(config)


def check_models(config: RunConfig, models: Sequence[CachedModel], judge: JudgeChoice | None) -> dict[str, str]:
    """Before any call: the judge is there and each model offers what the methodology needs.
    Returns, for the DynamicQA methodology, where each model's CP distributions come from."""
    if config.methodology != "dynamicqa":
        return {}
    if judge is None:
        raise ConfigError("--judge", "the DynamicQA methodology needs an equivalence judge")
    return {m.info.label: pers.check_capabilities(m, config.persuasion) for m in models}


def run_model(
    config: RunConfig,
    model: CachedModel,
    judge: JudgeChoice | None,
    facts_or_queries: list[Any],
    wording: PromptWording,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None = None,
) -> list[ConflictsRow]:
    """One model's rows: persuasion rows (DynamicQA methodology) or completion and update rows (MuLan's)."""
    if config.methodology == "dynamicqa":
        assert judge is not None
        tick = progress_factory(model.info.label, 3 * len(facts_or_queries)) if progress_factory else None
        return [*pers.run_persuasion(model, facts_or_queries, judge.judge, config.persuasion, wording, tick)]
    tick = progress_factory(model.info.label, len(facts_or_queries)) if progress_factory else None
    completion_rows = comp.run_completion(model, facts_or_queries, config.completion, wording, tick)
    updates = comp.run_updates(model, facts_or_queries, completion_rows, config.completion, wording)
    return [*completion_rows, *updates]


def summarise(
    config: RunConfig, models: Sequence[CachedModel], rows: Sequence[ConflictsRow], classes: Sequence[str]
) -> dict[str, Any]:
    """Per model spec, per class: the methodology's metrics."""
    summary: dict[str, Any] = {}
    for model in models:
        mine = [typed_row(r) for r in rows if r.model == model.info.label]
        if config.methodology == "dynamicqa":
            summary[model.info.label] = pers.summarise_persuasion(
                _only(mine, PersuasionRow),
                classes,
                no_context_accuracy_classes=[c for c in classes if c != "disputed"],
            )
        else:
            summary[model.info.label] = comp.summarise_completion(
                _only(mine, CompletionRow), _only(mine, UpdateRow), classes, config.completion
            )
    return summary


def _only(rows: Sequence[ConflictsRow], kind: type[RowT]) -> list[RowT]:
    return [r for r in rows if isinstance(r, kind)]


SWEEP_GAP = {"dynamicqa": "cp", "mulan": "update_success"}
"""The number whose gap between a changing and a stable class the study's size sweep follows."""


def sweep_gaps(
    config: RunConfig, rows: Sequence[ConflictsRow], summary: dict[str, Any], classes: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Per model spec: the sweep's gap, temporal (or mutable) minus static (or immutable-1), for CP
    under DynamicQA's methodology and update success under MuLan's, with n and a 95% interval:
    a bootstrap over each class's items for CP, Newcombe's interval for update success."""
    changing = next((c for c in ("temporal", "mutable") if c in classes), None)
    stable = next((c for c in ("static", "immutable-1") if c in classes), None)
    if changing is None or stable is None:
        return {}
    key = SWEEP_GAP[config.methodology]
    gaps: dict[str, dict[str, Any]] = {}
    for spec, per_class in summary.items():
        high, low = per_class[changing].get(key), per_class[stable].get(key)
        point = None if high is None or low is None else high - low
        if config.methodology == "dynamicqa":
            mine = _only([typed_row(r) for r in rows if r.model == spec], PersuasionRow)
            estimate = pers.cp_difference(mine, changing, stable, point)
        else:
            first, second = (as_estimate((per_class[c].get("estimates") or {}).get(key)) for c in (changing, stable))
            if first is None or second is None:
                continue
            estimate = newcombe(first, second, point=point)
        gaps[spec] = {"metric": key, "classes": [changing, stable], **estimate.to_json()}
    return gaps


def recipe(
    config: RunConfig, models: Sequence[CachedModel], judge: JudgeChoice | None
) -> tuple[dict[str, Any], list[int], str | None, dict[str, Any]]:
    """Decoding, seeds, judge record and extra provenance of a run."""
    extra: dict[str, Any] = {
        "dataset": config.dataset,
        "methodology": config.methodology,
        "data": _data_label(config),
        "limit": config.balanced_limit,
    }
    if config.methodology == "dynamicqa":
        assert judge is not None
        extra["distribution"] = check_models(config, models, judge)
        extra["judge"] = judge.judge.describe()
        return config.persuasion.decoding().model_dump(mode="json"), [config.persuasion.seed], judge.record, extra
    extra["fidelity"] = config.completion.fidelity
    extra["f1_truncation"] = mm.f1_truncation(config.completion.fidelity)
    return config.completion.decoding().model_dump(mode="json"), [config.completion.seed], None, extra


def _data_label(config: RunConfig) -> str:
    if config.data is not None:
        return str(config.data)
    if config.dataset == "dynamicqa":
        return dq.describe_source(dq.default_source())
    return ml.QUERIES_HUB_ID


def write_files(
    folder: Path, config: RunConfig, rows: Sequence[ConflictsRow], result: dict[str, Any], provenance: Provenance
) -> None:
    """items.jsonl, summary.json (``result``), report.md (and cp.png) of a run into ``folder`` (publishing is the
    caller's)."""
    summary, classes = result["summary"], result["classes"]
    persuasion = _only([typed_row(r) for r in rows], PersuasionRow)
    title = f"{_name(config.dataset)} through {_name(config.methodology)}'s methodology"
    if config.methodology == "dynamicqa":
        body = report.persuasion_markdown(summary, classes, title, persuasion)
    else:
        body = report.completion_markdown(summary, classes, title, config.completion.fidelity)
    body += report.model_sweep_markdown(summary, classes, provenance, config.methodology, result.get("gaps"))
    write_jsonl_atomic(folder / "items.jsonl", (r.model_dump(mode="json") for r in rows))
    write_json_atomic(folder / "summary.json", result)
    if config.methodology == "dynamicqa":
        report.cp_bar_plot(summary, classes, folder / "cp.png")
        body += "\n![Coherent Persuasion per class](cp.png)\n"
    write_text_atomic(folder / "report.md", report.full_report(body, provenance))


def _name(dataset: str) -> str:
    return {"dynamicqa": "DynamicQA", "mulan": "MuLan"}[dataset]
