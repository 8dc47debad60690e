"""``chronoprobe recency``: does the model know how fresh an answer must be? (RecencyQA)"""

from __future__ import annotations

import functools
import json
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from chronoprobe.cli.common import (
    DEFAULT_MODEL_OPTIONS,
    ModelOpt,
    ModelOptions,
    announce,
    check_share,
    claim_run_dir,
    config_errors,
    console,
    load_models,
    open_cache,
    progress_bar,
    progress_ticks,
    run_in_terminal,
    task_progress,
    with_model_options,
)
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import DEFAULT_MODEL
from chronoprobe.recency.gate import DEFAULT_SAMPLES as DEFAULT_GATE_SAMPLES
from chronoprobe.recency.gate import DEFAULT_TEMPERATURE as DEFAULT_GATE_TEMPERATURE
from chronoprobe.recency.lens import DATA_ENV, LEGACY_NOTE, default_data, legacy_data  # noqa: F401  (kept importable from here)
from chronoprobe.recency.records import read_detail

if TYPE_CHECKING:
    from chronoprobe.cache import CachedModel
    from chronoprobe.recency.gate_check import GateQuality

app = typer.Typer(
    help="Does the model know how fresh an answer must be? Recency classes of RecencyQA: evaluate, label, gate.",
    no_args_is_help=True,
)


@app.command("eval")
@with_model_options()
def eval_(
    model: ModelOpt = None,
    strategy: Annotated[
        list[str] | None, typer.Option(help="zero-shot, few-shot or cot (repeatable; 'all' for the three).")
    ] = None,
    context: Annotated[str, typer.Option(help="with, without or both (both gives the Table 6 Δ%).")] = "both",
    sample: Annotated[
        int | None, typer.Option(min=1, help="Stratified sample of N questions (stationarity × majority label).")
    ] = None,
    sample_seed: Annotated[int, typer.Option(min=0, help="Seed of the stratified sample.")] = 0,
    data: Annotated[
        str | None,
        typer.Option(
            help="RecencyQA JSON file (or .json.gz), or hf:<owner>/<repo> for the hub (default: the copy shipped with chronoprobe, or $CHRONOPROBE_SHARED_DATA/recencyqa)."
        ),
    ] = None,
    temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature (paper: 0.5; 0 = greedy).")] = 0.5,
    seed: Annotated[int, typer.Option(min=0, help="Decoding seed (also picks few-shot demonstrations).")] = 0,
    max_new_tokens: Annotated[
        int | None, typer.Option(min=1, help="Tokens per answer (default: 16 zero-shot, 12 few-shot, 160 CoT).")
    ] = None,
    prompt_file: Annotated[
        list[Path] | None,
        typer.Option(
            help="Prompt file replacing ours (repeatable); one with {context} is the with-context prompt. The original RecencyQA files work."
        ),
    ] = None,
    answer_prefix: Annotated[
        str, typer.Option(help="Force the answer to start with this text, e.g. 'Label:' (helps tiny models).")
    ] = "",
    out: Annotated[
        Path | None, typer.Option(help="Result folder (default: a new results/recency/<model>-<timestamp>).")
    ] = None,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Classify each question's recency class, with and without its context; write metrics, tables and plots."""
    from chronoprobe.recency.evaluate import STRATEGIES
    from chronoprobe.recency.lens import RecencyLens, RecencyRunConfig
    from chronoprobe.runner import default_out

    strategies = list(strategy or ["zero-shot"])
    if "all" in strategies:
        strategies = list(STRATEGIES)
    for name in strategies:
        if name not in STRATEGIES:
            raise ConfigError("--strategy", f"{name!r} is not one of zero-shot, few-shot, cot, all")
    if context not in {"with", "without", "both"}:
        raise ConfigError("--context", f"{context!r} is not one of with, without, both")
    with config_errors({"prompt_files": "--prompt-file"}):
        config = RecencyRunConfig(
            models=tuple(model or (DEFAULT_MODEL,)),
            strategies=tuple(dict.fromkeys(strategies)),
            context=context,
            temperature=temperature,
            seed=seed,
            max_new_tokens=max_new_tokens,
            prompt_files=tuple(prompt_file or ()),
            answer_prefix=answer_prefix,
            data=data,
            sample=sample,
            sample_seed=sample_seed,
        )
    lens = RecencyLens(config)
    if data is None and legacy_data():
        console.print(f"[yellow]note[/]: {escape(LEGACY_NOTE)}", highlight=False, soft_wrap=True)
    with warnings.catch_warnings():  # the note above says it once
        warnings.simplefilter("ignore", DeprecationWarning)
        lens.load()  # bad prompt files and data fail before any model loads
    for note in lens.notes:
        console.print(f"[yellow]note[/]: {escape(note)}", highlight=False, soft_wrap=True)
    out = out or default_out(lens)
    claim_run_dir(lens, out, backend.cache)  # checked and locked before any model loads
    started = time.perf_counter()
    result = run_in_terminal(lens, out, backend)
    from chronoprobe.metrics.uncertainty import cell

    for run in read_detail(result.summary.detail)["runs"]:
        est = run["estimates"]
        console.print(
            f"[bold]{run['model']}[/] {run['strategy']}, {run['context_mode']} context: n={run['n']} "
            f"acc {cell(est['accuracy'])}  tol. acc {cell(est['tolerant_accuracy'])}  F1 {cell(est['macro_f1'])}  "
            f"tol. F1 {cell(est['tolerant_f1'])}  unparseable {run['unparseable']} "
            f"({cell(est['unparseable_rate'], 1, 100.0, '%')}) (95% intervals)"
        )
    console.print(f"report: {out / 'report.md'}  ({time.perf_counter() - started:.0f} s)")


@app.command("label")
@with_model_options("engine")
def label(
    questions: Annotated[
        Path, typer.Argument(help='JSONL file, one {"question": ...} per line (q_id, source, hop_type optional).')
    ],
    out: Annotated[
        Path,
        typer.Option(
            help="Dataset to write, in RecencyQA JSON format (its report beside it). An earlier dataset this "
            "command wrote is replaced; any other file is refused, never overwritten."
        ),
    ] = Path("recency_dataset.json"),
    labeller: Annotated[
        str, typer.Option(help="Model spec that samples labels and writes and verifies contexts.")
    ] = DEFAULT_MODEL,
    voter: Annotated[
        list[str] | None,
        typer.Option(help="Stationarity voter model spec (repeatable, up to 3; default: the labeller)."),
    ] = None,
    samples: Annotated[int, typer.Option(min=1, help="Label samples per question (paper: 13).")] = 13,
    temperature: Annotated[float, typer.Option(min=0.0, help="Labelling temperature (paper: 0.7, top_p 0.9).")] = 0.7,
    candidates: Annotated[int, typer.Option(min=1, help="Context candidates per (question, label) and round.")] = 3,
    verify_samples: Annotated[
        int, typer.Option(min=1, help="Relabellings that must all agree to verify a context (paper: 13).")
    ] = 13,
    context_rounds: Annotated[
        int, typer.Option(min=1, help="Context generation rounds per (question, label) before giving up.")
    ] = 3,
    require_verified: Annotated[
        bool,
        typer.Option("--require-verified", help="Drop questions with an unverified label context (paper behaviour)."),
    ] = False,
    retries: Annotated[
        bool,
        typer.Option("--retries/--no-retries", help="Redraw unparseable label samples at temperature 0.3, then 0."),
    ] = True,
    label_max_new_tokens: Annotated[int, typer.Option(min=1, help="Tokens per label sample.")] = 32,
    vote_max_new_tokens: Annotated[int, typer.Option(min=1, help="Tokens per stationarity vote.")] = 32,
    context_max_new_tokens: Annotated[int, typer.Option(min=1, help="Tokens per generated context.")] = 60,
    seed: Annotated[int, typer.Option(min=0, help="Sampling seed.")] = 0,
    label_prompt: Annotated[
        Path | None, typer.Option(help="Labelling prompt file (e.g. the original recency_labeling_prompt.txt).")
    ] = None,
    verify_prompt: Annotated[
        Path | None, typer.Option(help="Relabelling-with-context prompt file ({question}, {context}).")
    ] = None,
    stationarity_prompt: Annotated[
        Path | None, typer.Option(help="Stationarity prompt file ({question}, {label}).")
    ] = None,
    context_prompt: Annotated[
        Path | None, typer.Option(help="Context generation prompt file ({question}, {label}).")
    ] = None,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Label new questions the RecencyQA way: 13 samples, stationarity votes + rules, verified contexts."""
    chosen = dict(locals())  # every option, as the tool's config names it
    from chronoprobe.recency.tools import LabelTool
    from chronoprobe.runner import produce

    del chosen["backend"]
    say = functools.partial(console.print, highlight=False)  # the tool's lines carry rich markup
    tool = LabelTool.from_options(**chosen)
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


@app.command("gate")
@with_model_options("engine")
def gate(
    question: Annotated[str | None, typer.Argument(help="The question to route (or use --questions FILE).")] = None,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            help='Text file, one question per line, or JSONL with a "question" field: gate them all with one model load.',
        ),
    ] = None,
    model: ModelOpt = None,
    threshold: Annotated[
        str, typer.Option(help="Retrieve when the answer may change within this class or sooner.")
    ] = "A-Year",
    samples: Annotated[
        int, typer.Option(min=1, help="Label samples per question (1 = one greedy answer; more gives a distribution).")
    ] = DEFAULT_GATE_SAMPLES,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Temperature when samples > 1.")
    ] = DEFAULT_GATE_TEMPERATURE,
    min_share: Annotated[
        float,
        typer.Option(
            callback=check_share, help="Retrieve when at least this share of samples is within the threshold."
        ),
    ] = 0.5,
    context: Annotated[str | None, typer.Option(help="Situation in which the question is asked.")] = None,
    seed: Annotated[int, typer.Option(min=0, help="Sampling seed.")] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the decision as JSON (one compact record per line with --questions).")
    ] = False,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Say whether QUESTION needs retrieval (its answer may change within the threshold), and why.

    The decision goes to stdout (so `> file` captures it); progress and notices go to stderr.
    """
    from chronoprobe.datasets.recency_taxonomy import parse_label
    from chronoprobe.recency.gate import read_gate_questions, recency_gate_many

    if parse_label(threshold) is None:
        raise ConfigError("--threshold", f"{threshold!r} is not a recency class (e.g. A-Few-Months, A-Year)")
    if (question is None) == (questions is None):
        raise ConfigError(
            "QUESTION / --questions",
            "give either one question or --questions FILE, not both"
            if question is not None
            else "give a question or --questions FILE",
        )
    if samples < 1:
        raise ConfigError("--samples", f"needs at least one sample, got {samples}")
    if not 0 < min_share <= 1:
        raise ConfigError("--min-share", f"must be a share in (0, 1], got {min_share}")
    if question is not None and not question.strip():
        raise ConfigError("QUESTION", "is empty")
    asked = read_gate_questions(questions) if questions is not None else [question or ""]
    specs = model or None
    if specs and len(specs) > 1:
        raise ConfigError("--model", "the gate uses one model")
    call_cache = open_cache(backend.cache)
    cached = load_models(specs, backend.backend(), call_cache)[0]
    gate_options = {
        "context": context,
        "temperature": temperature,
        "min_share": min_share,
        "seed": seed,
        "warn": False,  # said below, on the command's own lines
    }
    if len(asked) == 1:  # one question: no progress bar, so stderr stays empty
        decisions = recency_gate_many(asked, cached, threshold, samples, **gate_options)  # type: ignore[arg-type]  # one dict of mixed-type keywords
    else:
        with progress_bar() as bar:
            advance = task_progress(bar)("recency gate", len(asked))
            decisions = recency_gate_many(asked, cached, threshold, samples, progress=advance, **gate_options)  # type: ignore[arg-type]  # one dict of mixed-type keywords
    measured = _gate_quality(cached, threshold, samples, temperature, seed, min_share)
    out = Console(highlight=False, soft_wrap=True)  # stdout: the decision is the command's output
    for decision in decisions:
        if as_json:
            record = decision.model_dump(mode="json")
            record["gate_quality"] = measured.model_dump(mode="json") if measured is not None else None
            typer.echo(json.dumps(record, ensure_ascii=False, indent=None if questions is not None else 2))
            continue
        verdict = "[bold red]RETRIEVE[/]" if decision.retrieve else "[bold green]NO RETRIEVAL[/]"
        predicted = decision.predicted_class.label if decision.predicted_class is not None else "unknown"
        if questions is not None:  # plain tab-separated lines, easy to cut/grep
            typer.echo("\t".join(["RETRIEVE" if decision.retrieve else "NO RETRIEVAL", predicted, decision.question]))
            continue
        out.print(
            f"{verdict}  predicted class: {predicted}  (threshold {decision.threshold.label}, {escape(cached.info.label)})"
        )
        out.print(f"why: {escape(decision.reason)}")
        if decision.distribution:
            shown = ", ".join(f"{k} {v:.0%}" for k, v in sorted(decision.distribution.items(), key=lambda kv: -kv[1]))
            out.print(
                f"distribution over {decision.samples - decision.unparseable} parsed samples: {shown}"
                + (f"; {decision.unparseable} unparseable" if decision.unparseable else "")
            )
    _say_gate_quality(measured, cached.info.spec, context, out if not (as_json or questions is not None) else None)


def _gate_quality(
    cached: CachedModel, threshold: str, samples: int, temperature: float, seed: int, min_share: float
) -> GateQuality | None:
    from chronoprobe.datasets.recency_taxonomy import RecencyClass
    from chronoprobe.recency.gate import GateSettings
    from chronoprobe.recency.gate_check import gate_quality

    settings = GateSettings(samples=samples, temperature=temperature, seed=seed)
    return gate_quality(cached.info, settings, RecencyClass.parse(threshold), min_share)


def _say_gate_quality(measured: GateQuality | None, spec: str, context: str | None, out: Console | None) -> None:
    """How well this model routes: on stdout under a single decision, else on stderr; a warning when it is weak."""
    from chronoprobe.recency.gate_check import not_measured

    if measured is None:
        console.print(f"[yellow]warning[/]: {escape(not_measured(spec))}", highlight=False, soft_wrap=True)
        return
    line = measured.line() + (" (measured without --context)" if context is not None else "")
    if out is not None:
        out.print(escape(line))
    else:
        console.print(escape(line), highlight=False, soft_wrap=True)
    if not measured.useful:
        console.print(
            f"[yellow]warning[/]: {escape(spec)} is {escape(measured.verdict())}", highlight=False, soft_wrap=True
        )


@app.command("gate-check")
@with_model_options("engine")
def gate_check(
    model: ModelOpt = None,
    samples: Annotated[
        int, typer.Option(min=1, help="Label samples per question, as `recency gate --samples` will ask.")
    ] = DEFAULT_GATE_SAMPLES,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Temperature when samples > 1, as `recency gate --temperature`.")
    ] = DEFAULT_GATE_TEMPERATURE,
    seed: Annotated[int, typer.Option(min=0, help="Sampling seed, as `recency gate --seed`.")] = 0,
    threshold: Annotated[
        str, typer.Option(help="Score the decisions at this threshold (any threshold reads the same measurement).")
    ] = "A-Year",
    min_share: Annotated[
        float, typer.Option(callback=check_share, help="Score the decisions at this share, as `recency gate`.")
    ] = 0.5,
    data: Annotated[
        str | None,
        typer.Option(help="RecencyQA JSON file (default: the copy shipped with chronoprobe)."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N held-out questions (a random subset), for a quick look.")
    ] = None,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Measure how well a model routes with `recency gate`, on a held-out RecencyQA split, and keep the result.

    The gate reads the kept measurement on every later call (docs/recency.md, "How far to trust the gate").
    """
    chosen = dict(locals())  # every option, as the tool's config names it
    from chronoprobe.recency.tools import GateCheckTool
    from chronoprobe.runner import produce

    del chosen["backend"]
    tool = GateCheckTool.from_options(**chosen)
    result = produce(
        tool, options=backend.backend(), cache=backend.cache, progress_display=progress_ticks, announce=announce
    )
    typer.echo(result.quality.line())  # stdout: the measurement is the command's output
    typer.echo(f"{result.check.spec} is {result.quality.verdict()}")
    for line in tool.present(result):
        console.print(line, highlight=False)
