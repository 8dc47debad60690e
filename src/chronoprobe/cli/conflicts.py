"""``chronoprobe conflicts``: does context override the model's memory? (DynamicQA + MuLan)"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from chronoprobe.cli.common import (
    DEFAULT_MODEL_OPTIONS,
    ModelOpt,
    ModelOptions,
    claim_run_dir,
    config_errors,
    console,
    load_models,
    open_cache,
    progress_bar,
    run_in_terminal,
    with_model_options,
)
from chronoprobe.conflicts.records import ClassNumbers, read_detail
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import DEFAULT_MODEL

app = typer.Typer(
    help="Does context override the model's memory? DynamicQA and MuLan, each through either methodology.",
    no_args_is_help=True,
)

DataOpt = Annotated[
    Path | None,
    typer.Option(
        help="Local data: DynamicQA folder of CSVs, MuLan queries JSONL, or a contexts JSONL (default: DynamicQA's copy shipped with chronoprobe; MuLan's queries from the hub, coastalcph/fm_queries)."
    ),
]
JudgeOpt = Annotated[
    str, typer.Option(help="Equivalence judge: embedding\\[:<model>] (offline default), nli\\[:<hf id>], exact.")
]
JudgeFallbackOpt = Annotated[
    bool,
    typer.Option("--judge-fallback", help="If the NLI judge cannot be loaded, use the embedding judge (recorded)."),
]


def _judge_device(device: str) -> str:
    from chronoprobe.conflicts.lens import judge_device

    return judge_device(device)


@app.command("run")
@with_model_options()
def run(
    dataset: Annotated[
        str | None, typer.Argument(help="dynamicqa (shipped) or mulan (needs its files: docs/conflicts.md).")
    ] = None,
    methodology: Annotated[
        str | None,
        typer.Option(help="dynamicqa (CP, SE, accuracy) or mulan (F1, update success); default: the dataset's own."),
    ] = None,
    model: ModelOpt = None,
    limit: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="At most N facts in total, not per class, spread evenly over the classes "
            "(50 over three classes: 16 or 17 each).",
        ),
    ] = None,
    data: DataOpt = None,
    aliases: Annotated[
        Path | None, typer.Option(help="MuLan aliases (JSON map QID -> aliases, or fm_aliases JSONL).")
    ] = None,
    templates: Annotated[
        Path | None, typer.Option(help="MuLan clean.json templates, or DynamicQA's converted templates CSV.")
    ] = None,
    judge: JudgeOpt = "embedding",
    judge_fallback: JudgeFallbackOpt = False,
    samples: Annotated[int, typer.Option(min=1, help="Samples per input (DynamicQA methodology).")] = 10,
    temperature: Annotated[
        float | None,
        typer.Option(
            min=0.0, help="Sampling temperature (default: 0.5 for DynamicQA's methodology, 0 = greedy for MuLan's)."
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Decoding seed (default: 10 for DynamicQA's methodology, 0 for MuLan's, where it also picks the memorised facts).",
        ),
    ] = None,
    min_confidence: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="MuLan methodology: first-token confidence a memorised fact needs.")
    ] = 0.5,
    fidelity: Annotated[
        str,
        typer.Option(
            help="MuLan methodology scoring: corrected (our fixes) or original (F1 truncation, first-token confidence and update success exactly as the original code; docs/conflicts.md)."
        ),
    ] = "corrected",
    topk_approximation: Annotated[
        bool,
        typer.Option(
            "--topk-approximation", help="Accept a backend's top-k approximation of the distributions CP needs."
        ),
    ] = False,
    prompt_file: Annotated[
        Path | None,
        typer.Option(help="JSON file replacing our prompt wording (keys qa, qa_context, completion, update, passage)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Output folder (default: a new results/conflicts/<model>-<dataset>-<methodology>-<timestamp>)."
        ),
    ] = None,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Run a dataset through a methodology and write items.jsonl, summary.json, report.md (and cp.png)."""
    from chronoprobe.conflicts.completion import CompletionConfig
    from chronoprobe.conflicts.lens import ConflictsConfig, ConflictsLens
    from chronoprobe.conflicts.persuasion import PersuasionConfig
    from chronoprobe.runner import default_out

    if dataset is None:
        raise ConfigError(
            "DATASET", "missing; give one of dynamicqa, mulan (e.g. `chronoprobe conflicts run dynamicqa`)"
        )
    if dataset not in {"dynamicqa", "mulan"}:
        raise ConfigError("DATASET", f"{dataset!r} is not one of dynamicqa, mulan")
    method = methodology or dataset
    if method not in {"dynamicqa", "mulan"}:
        raise ConfigError("--methodology", f"{method!r} is not dynamicqa or mulan")
    if fidelity not in {"corrected", "original"}:
        raise ConfigError("--fidelity", f"{fidelity!r} is not corrected or original")
    decoding: dict[str, float | int] = {
        key: value for key, value in (("temperature", temperature), ("seed", seed)) if value is not None
    }  # unset: the methodology's own
    with config_errors({"n_samples": "--samples"}):
        config = ConflictsConfig(
            models=tuple(model or (DEFAULT_MODEL,)),
            dataset=dataset,
            methodology=method,
            data=data,
            aliases=aliases,
            templates=templates,
            limit=limit,
            persuasion=PersuasionConfig(n_samples=samples, topk_approximation=topk_approximation, **decoding),
            completion=CompletionConfig(fidelity=fidelity, min_confidence=min_confidence, **decoding),
            prompt_file=prompt_file,
            judge=judge,
            judge_fallback=judge_fallback,
            judge_device=backend.device,
        )
    lens = ConflictsLens(config)
    out = out or default_out(lens)
    claim_run_dir(lens, out, backend.cache)  # checked and locked before any model loads
    lens.load()  # bad data and prompt files fail before any model loads
    started = time.perf_counter()
    result = run_in_terminal(lens, out, backend)
    if lens.judge is not None and lens.judge.fallback_reason:
        console.print(f"[yellow]judge fallback[/]: {lens.judge.record}", highlight=False)
    console.print(f"wrote {out}/report.md, summary.json, items.jsonl in {time.perf_counter() - started:.0f} s")
    for spec, per_class in read_detail(result.summary.detail)["summary"].items():
        line = ", ".join(f"{c}: " + _headline(v, method) for c, v in per_class.items())
        console.print(f"{spec}: {line}", highlight=False)


def _headline(values: ClassNumbers, method: str) -> str:
    """Headline numbers with their 95% interval and n (when the summary has them)."""
    estimates = values.get("estimates") or {}

    def ci(key: str, digits: int) -> str:
        from chronoprobe.metrics.uncertainty import ci_cell

        return f" {ci_cell(estimates[key], digits)}" if estimates.get(key) else ""

    if method == "dynamicqa":
        cp = values.get("cp")
        return f"CP {cp:.3f}{ci('cp', 3)}" if cp is not None else "CP –"
    f1, success = values.get("f1"), values.get("update_success")
    text = f"F1 {f1:.1f}{ci('f1', 1)}" if f1 is not None else "F1 –"
    return text + (f", update {success:.2f}{ci('update_success', 2)}" if success is not None else "")


CONTEXTS = "a contexts file written by `chronoprobe conflicts contexts`"
"""What ``conflicts contexts --out`` may replace (the refusal names it)."""


def _is_provenance(path: Path) -> bool:
    import json

    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and {"command", "packages", "models"} <= set(record)


def _contexts_here(out: Path) -> bool:
    """A contexts file this command wrote: its provenance file sits beside it."""
    return _is_provenance(out.with_suffix(".provenance.json"))


@app.command("contexts")
@with_model_options("engine", "sampler")
def contexts(
    model: ModelOpt = None,
    data: Annotated[
        Path | None, typer.Option(help="MuLan queries JSONL (default: the hub id coastalcph/fm_queries).")
    ] = None,
    aliases: Annotated[Path | None, typer.Option(help="MuLan aliases (JSON map or fm_aliases JSONL).")] = None,
    templates: Annotated[Path | None, typer.Option(help="MuLan clean.json templates.")] = None,
    nli: Annotated[
        str, typer.Option(help="NLI model (hub id or folder) for the entailment filter.")
    ] = "microsoft/deberta-large-mnli",
    no_nli_filter: Annotated[
        bool, typer.Option("--no-nli-filter", help="Keep every passage that mentions the object (recorded).")
    ] = False,
    min_entailment: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Keep passages whose entailment probability is at least this.")
    ] = 0.95,
    per_class: Annotated[int, typer.Option(min=1, help="Facts sampled per class.")] = 2500,
    seed: Annotated[int, typer.Option(min=0, help="Seed for the per-class sample.")] = 0,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Passage length limit in tokens.")] = 120,
    limit: Annotated[
        int | None, typer.Option(min=1, help="At most N facts in total (not per class), spread over the classes.")
    ] = None,
    prompt_file: Annotated[
        Path | None, typer.Option(help="JSON file replacing our prompt wording (key passage).")
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            help="Output JSONL (a provenance JSON is written next to it). An earlier contexts file this command "
            "wrote is replaced; any other file is refused, never overwritten."
        ),
    ] = Path("results/conflicts/mulan_contexts.jsonl"),
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Write Wikipedia-style contexts for MuLan facts (generate, NLI-filter, swap the object, subsample)."""
    from chronoprobe.conflicts.contexts import ContextsConfig, build_contexts
    from chronoprobe.conflicts.prompts import PromptWording
    from chronoprobe.conflicts.run import MULAN_ALIASES, MULAN_TEMPLATES, mulan_inputs
    from chronoprobe.conflicts.sources import Input, check_inputs, shared_path
    from chronoprobe.datasets import mulan as ml
    from chronoprobe.io import write_json_atomic, write_jsonl_atomic
    from chronoprobe.judges.embedding import Embedder
    from chronoprobe.provenance import build_provenance
    from chronoprobe.publish import check_not_input, check_output_file, staged_files

    extra = [Input("--prompt-file", prompt_file)] if prompt_file is not None else []
    check_inputs([*mulan_inputs(data, templates, aliases), *extra], "conflicts contexts")  # every missing file at once
    record = out.with_suffix(".provenance.json")
    check_output_file(out, "--out", ours=_contexts_here, what=CONTEXTS)  # before any model loads
    check_output_file(record, "--out", ours=_is_provenance, what=f"the provenance of {out.name}")
    inputs = {"--data": data, "--aliases": aliases, "--templates": templates, "--prompt-file": prompt_file}
    check_not_input(
        [out, record], {**inputs, "--nli": Path(nli) if Path(nli).exists() else None, "--cache": backend.cache}
    )
    wording = PromptWording.from_file(prompt_file)  # a bad prompt file fails before any model loads
    store = open_cache(backend.cache)
    with config_errors():
        config = ContextsConfig(
            min_entailment=None if no_nli_filter else min_entailment,
            per_class=per_class,
            seed=seed,
            max_new_tokens=max_new_tokens,
        )
    all_queries = ml.load_queries(data or ml.QUERIES_HUB_ID)
    queries = ml.take_balanced_facts(all_queries, limit)
    templates_map = ml.load_templates(templates or shared_path(MULAN_TEMPLATES, "--templates"))
    alias_map = ml.load_aliases(aliases or shared_path(MULAN_ALIASES, "--aliases"))
    judge_device = _judge_device(backend.device)
    entail = None
    nli_record = "none (--no-nli-filter)"
    if not no_nli_filter:
        from chronoprobe.judges.nli import NLIModel

        with console.status(f"loading NLI model {nli}"):
            nli_model = NLIModel(nli, cache=store, device=judge_device)
        entail = nli_model.entailment
        nli_record = f"nli:{nli_model.model_id}@{nli_model.revision} entailment >= {min_entailment}"
    embedder = Embedder(cache=store, device=judge_device)
    generators = load_models(model, backend.backend(), store)
    if len(generators) != 1:
        raise ConfigError("--model", "contexts takes exactly one generator model")
    generator = generators[0]
    with progress_bar() as bar:
        task = bar.add_task("passages", total=len({q.fact_id for q in queries}))
        rows, dropped = build_contexts(
            queries,
            templates_map,
            alias_map,
            generator,
            entail,
            embedder.embed,
            config,
            wording,
            lambda n: bar.advance(task, n),
            pool=all_queries,
        )
    provenance = build_provenance(
        [generator],
        decoding={"max_new_tokens": config.max_new_tokens, "temperature": 0.0},
        seeds=[seed],
        judge=nli_record,
        extra={"embedding": embedder.model_id, "dropped": dropped, "kept": len(rows), "per_class": per_class},
    ).model_dump(mode="json")
    with staged_files(out, ours=_contexts_here, what=CONTEXTS) as staging:
        write_jsonl_atomic(staging / out.name, [r.model_dump(mode="json") for r in rows])
        write_json_atomic(staging / record.name, provenance)
    console.print(f"wrote {len(rows)} contexts to {out} (dropped: {dropped})", highlight=False)
