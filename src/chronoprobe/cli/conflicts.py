"""``chronoprobe conflicts``: does context override the model's memory? (DynamicQA + MuLan)"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Annotated

import typer

from chronoprobe.cli.common import (
    DEFAULT_MODEL_OPTIONS,
    ModelOpt,
    ModelOptions,
    announce,
    claim_run_dir,
    config_errors,
    console,
    progress_ticks,
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
    chosen = dict(locals())  # every option, as the tool's config names it
    from chronoprobe.conflicts.tools import ContextsTool
    from chronoprobe.runner import produce

    del chosen["backend"]
    say = functools.partial(console.print, highlight=False)  # the tool's lines carry rich markup
    tool = ContextsTool.from_options(**chosen)
    result = produce(
        tool,
        options=backend.backend(),
        cache=backend.cache,
        progress_display=progress_ticks,
        announce=announce,
        notice=say,
    )
    for line in tool.present(result):
        say(line)
