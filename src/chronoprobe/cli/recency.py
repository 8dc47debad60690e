"""``chronoprobe recency``: does the model know how fresh an answer must be? (RecencyQA)"""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from chronoprobe.cli.lens_command import lens_app, lens_command
from chronoprobe.cli.model_options import DEFAULT_MODEL_OPTIONS, ModelOptions, with_model_options
from chronoprobe.cli.options import ModelOpt, check_share
from chronoprobe.cli.progress_display import console, progress_bar, task_progress
from chronoprobe.cli.runs import config_errors, load_models, open_cache
from chronoprobe.errors import ConfigError
from chronoprobe.recency.gate import DEFAULT_SAMPLES as DEFAULT_GATE_SAMPLES
from chronoprobe.recency.gate import DEFAULT_TEMPERATURE as DEFAULT_GATE_TEMPERATURE
from chronoprobe.recency.lens import DATA_ENV, LEGACY_NOTE, RecencyLens, default_data, legacy_data  # noqa: F401  (kept importable from here)

if TYPE_CHECKING:
    from chronoprobe.cache import CachedModel
    from chronoprobe.recency.gate import GateDecision
    from chronoprobe.recency.gate_check import GateQuality

RENAMED = {"--context": "--context-mode"}
"""Options renamed for one meaning per flag (``--context`` is the gate's text), the old spelling kept for a release."""

app = lens_app(
    RecencyLens,
    help_text="Does the model know how fresh an answer must be? Recency classes of RecencyQA: run (or eval), label, gate.",
    deprecated=RENAMED,
)
app.command("eval", help="The same as `recency run` (its first name, kept).")(lens_command(RecencyLens, RENAMED))


LABELLED = "a dataset written by `chronoprobe recency label`"
"""What ``recency label --out`` may replace (the refusal names it)."""


def _is_label_report(path: Path) -> bool:
    import json

    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and {"report", "provenance"} <= set(record)


def _labelled_here(out: Path) -> bool:
    """A dataset this command wrote: its report file sits beside it."""
    return _is_label_report(out.with_name(out.stem + ".report.json"))


@app.command("label")
@with_model_options("engine")
def label(
    questions: Annotated[
        Path, typer.Argument(help='JSONL file, one {"question": ...} per line (q_id, source, hop_type optional).')
    ],
    out: Annotated[
        Path,
        typer.Option(
            help="Where to write the dataset, in RecencyQA JSON format (its report beside it). An earlier dataset "
            "this command wrote is replaced; any other file is refused, never overwritten."
        ),
    ] = Path("recency_dataset.json"),
    labeller: Annotated[
        str, typer.Option(help="Model spec that samples labels and writes and verifies contexts.")
    ] = "smollm2",
    voter: Annotated[
        list[str] | None,
        typer.Option(help="Stationarity voter model spec (repeatable, up to 3; default: the labeller)."),
    ] = None,
    samples: Annotated[int, typer.Option(min=1, help="Samples drawn per question for its label (paper: 13).")] = 13,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Sampling temperature of the label samples (paper: 0.7, top_p 0.9).")
    ] = 0.7,
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
    seed: Annotated[int, typer.Option(min=0, help="Decoding seed of the samples.")] = 0,
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
    from chronoprobe.datasets.recencyqa import write_recencyqa
    from chronoprobe.io import write_json_atomic
    from chronoprobe.provenance import build_provenance
    from chronoprobe.recency.label import LabelConfig, label_dataset, read_questions

    with config_errors({"max_context_rounds": "--context-rounds"}):
        config = LabelConfig(
            samples=samples,
            temperature=temperature,
            candidates=candidates,
            verify_samples=verify_samples,
            max_context_rounds=context_rounds,
            require_verified=require_verified,
            seed=seed,
            retry_temperatures=(0.3, 0.0) if retries else (),
            label_max_new_tokens=label_max_new_tokens,
            vote_max_new_tokens=vote_max_new_tokens,
            context_max_new_tokens=context_max_new_tokens,
            label_prompt=label_prompt,
            verify_prompt=verify_prompt,
            stationarity_prompt=stationarity_prompt,
            context_prompt=context_prompt,
        )
    for kind in ("label", "label_with_context", "stationarity", "context_generation"):
        config.template(kind)  # bad prompt files fail before any model loads
    voters_specs = list(voter or [])
    if len(voters_specs) > 3:
        raise ConfigError("--voter", f"at most three voters, got {len(voters_specs)}")
    rows = read_questions(questions)
    from chronoprobe.publish import check_not_input, check_output_file, staged_files

    report_path = out.with_name(out.stem + ".report.json")
    check_output_file(out, "--out", ours=_labelled_here, what=LABELLED)  # before any model loads
    check_output_file(report_path, "--out", ours=_is_label_report, what=f"the report of {out.name}")
    inputs = {
        "QUESTIONS": questions,
        "--label-prompt": label_prompt,
        "--verify-prompt": verify_prompt,
        "--stationarity-prompt": stationarity_prompt,
        "--context-prompt": context_prompt,
        "--cache": backend.cache,
    }
    check_not_input([out, report_path], inputs)
    started = time.perf_counter()
    call_cache = open_cache(backend.cache)
    specs = list(dict.fromkeys([labeller, *voters_specs]))
    loaded = dict(zip(specs, load_models(specs, backend.backend(), call_cache), strict=True))
    voters = [loaded[v] for v in voters_specs] or [loaded[labeller]]
    with progress_bar() as bar:
        items, report = label_dataset(rows, loaded[labeller], voters, config, progress=task_progress(bar))
    provenance = build_provenance(
        list(loaded.values()),
        decoding=config.model_dump(mode="json"),
        seeds=[seed],
        extra={
            "questions_file": str(questions),
            "labeller": loaded[labeller].info.spec,
            "voters": [v.info.spec for v in voters],
        },
        started=started,
        call_cache=call_cache.path,
    )
    with staged_files(out, ours=_labelled_here, what=LABELLED) as staging:
        write_recencyqa(staging / out.name, items)
        write_json_atomic(
            staging / report_path.name,
            {"report": report.model_dump(mode="json"), "provenance": provenance.model_dump(mode="json")},
        )
    console.print(
        f"{report.questions} questions: {report.kept} kept ({report.stationary} stationary, "
        f"{report.non_stationary} non-stationary), {len(report.discarded_rule4)} discarded by rule 4, "
        f"{len(report.unlabelled)} unlabelled, {len(report.dropped_unverified)} dropped unverified, "
        f"{len(report.dropped_no_context)} without any context"
    )
    console.print(
        f"contexts: {report.context_targets_verified}/{report.context_targets} labels verified "
        f"({report.candidates_verified}/{report.candidates_generated} candidates, {report.context_rounds_used} round(s)); "
        f"label samples unparseable: {report.samples_unparseable_first_pass} first pass, "
        f"{report.samples_unparseable_final} after {report.samples_redrawn} redraws"
    )
    console.print(f"dataset: {out}  report: {report_path}")


def _recency_class(value: str) -> str:
    from chronoprobe.datasets.recency_taxonomy import parse_label

    if parse_label(value) is None:
        raise typer.BadParameter(f"{value!r} is not a recency class (e.g. A-Few-Months, A-Year)")
    return value


def _one_model(models: list[str] | None, why: str) -> list[str] | None:
    if models and len(models) > 1:
        raise ConfigError("--model", why)
    return models or None


ThresholdOpt = Annotated[
    str,
    typer.Option(
        help="Retrieve when the answer may change within this recency class or sooner.", callback=_recency_class
    ),
]
GateSamplesOpt = Annotated[
    int, typer.Option(min=1, help="Samples drawn per question (1 = one greedy answer; more gives a distribution).")
]
GateTemperatureOpt = Annotated[float, typer.Option(min=0.0, help="Sampling temperature when samples > 1.")]
MinShareOpt = Annotated[
    float,
    typer.Option(callback=check_share, help="Retrieve when at least this share of samples is within the threshold."),
]
QuestionsOpt = Annotated[
    Path | None,
    typer.Option(
        "--questions",
        help='Text file, one question per line, or JSONL with a "question" field: gate them all with one model load.',
    ),
]


def _asked(question: str | None, questions: Path | None) -> list[str]:
    """The questions to gate: the one given, or those of ``--questions``."""
    from chronoprobe.recency.gate import read_gate_questions

    if (question is None) == (questions is None):
        both = "give either one question or --questions FILE, not both"
        raise ConfigError(
            "QUESTION / --questions", both if question is not None else "give a question or --questions FILE"
        )
    if question is not None and not question.strip():
        raise ConfigError("QUESTION", "is empty")
    return read_gate_questions(questions) if questions is not None else [question or ""]


@app.command("gate")
@with_model_options("engine")
def gate(
    question: Annotated[str | None, typer.Argument(help="The question to route (or use --questions FILE).")] = None,
    questions: QuestionsOpt = None,
    model: ModelOpt = None,
    threshold: ThresholdOpt = "A-Year",
    samples: GateSamplesOpt = DEFAULT_GATE_SAMPLES,
    temperature: GateTemperatureOpt = DEFAULT_GATE_TEMPERATURE,
    min_share: MinShareOpt = 0.5,
    context: Annotated[str | None, typer.Option(help="Situation in which the question is asked.")] = None,
    seed: Annotated[int, typer.Option(min=0, help="Decoding seed (when samples > 1).")] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the decision as JSON (one compact record per line with --questions).")
    ] = False,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Say whether QUESTION needs retrieval (its answer may change within the threshold), and why.

    The decision goes to stdout (so `> file` captures it); progress and notices go to stderr.
    """
    from chronoprobe.recency.gate import recency_gate_many

    asked = _asked(question, questions)
    specs = _one_model(model, "the gate uses one model")
    cached = load_models(specs, backend.backend(), open_cache(backend.cache))[0]
    ask = functools.partial(  # warn=False: the gate's quality is said on the command's own lines
        recency_gate_many, asked, cached, threshold, samples, context=context, temperature=temperature
    )
    if len(asked) == 1:  # one question: no progress bar, so stderr stays empty
        decisions = ask(min_share=min_share, seed=seed, warn=False)
    else:
        with progress_bar() as bar:
            advance = task_progress(bar)("recency gate", len(asked))
            decisions = ask(min_share=min_share, seed=seed, warn=False, progress=advance)
    measured = _gate_quality(cached, threshold, samples, temperature, seed, min_share)
    many = questions is not None
    for decision in decisions:
        _show_decision(decision, measured, cached.info.label, as_json=as_json, many=many)
    _say_gate_quality(
        measured, cached.info.spec, context, Console(highlight=False, soft_wrap=True) if not (as_json or many) else None
    )


def _show_decision(
    decision: GateDecision, measured: GateQuality | None, model: str, *, as_json: bool, many: bool
) -> None:
    """One decision on stdout: JSON, a tab-separated line (with --questions), or the verdict and why."""
    if as_json:
        record = decision.model_dump(mode="json")
        record["gate_quality"] = measured.model_dump(mode="json") if measured is not None else None
        typer.echo(json.dumps(record, ensure_ascii=False, indent=None if many else 2))
        return
    predicted = decision.predicted_class.label if decision.predicted_class is not None else "unknown"
    if many:  # plain tab-separated lines, easy to cut/grep
        typer.echo("\t".join(["RETRIEVE" if decision.retrieve else "NO RETRIEVAL", predicted, decision.question]))
        return
    out = Console(highlight=False, soft_wrap=True)  # stdout: the decision is the command's output
    verdict = "[bold red]RETRIEVE[/]" if decision.retrieve else "[bold green]NO RETRIEVAL[/]"
    out.print(f"{verdict}  predicted class: {predicted}  (threshold {decision.threshold.label}, {escape(model)})")
    out.print(f"why: {escape(decision.reason)}")
    if decision.distribution:
        shown = ", ".join(f"{k} {v:.0%}" for k, v in sorted(decision.distribution.items(), key=lambda kv: -kv[1]))
        unparseable = f"; {decision.unparseable} unparseable" if decision.unparseable else ""
        out.print(f"distribution over {decision.samples - decision.unparseable} parsed samples: {shown}{unparseable}")


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
        int, typer.Option(min=1, help="Samples drawn per question, as `recency gate --samples` will ask.")
    ] = DEFAULT_GATE_SAMPLES,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Sampling temperature when samples > 1, as `recency gate --temperature`.")
    ] = DEFAULT_GATE_TEMPERATURE,
    seed: Annotated[int, typer.Option(min=0, help="Decoding seed, as `recency gate --seed`.")] = 0,
    threshold: Annotated[
        str,
        typer.Option(
            help="Score the decisions at this recency class (any threshold reads the same measurement).",
            callback=_recency_class,
        ),
    ] = "A-Year",
    min_share: Annotated[
        float,
        typer.Option(callback=check_share, help="Score the decisions at this share of samples, as `recency gate`."),
    ] = 0.5,
    data: Annotated[
        Path | None,
        typer.Option(
            help="Where the data comes from: a RecencyQA JSON file, or hf:<owner>/<repo> (default: the copy shipped "
            "with chronoprobe)."
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N held-out questions (a random subset), for a quick look.")
    ] = None,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Measure how well a model routes with `recency gate`, on a held-out RecencyQA split, and keep the result.

    The gate reads the kept measurement on every later call (docs/recency.md, "How far to trust the gate").
    """
    from chronoprobe.datasets.recency_taxonomy import RecencyClass
    from chronoprobe.datasets.recencyqa import describe_source, load_recencyqa
    from chronoprobe.recency.gate import GateSettings
    from chronoprobe.recency.gate_check import Found, heldout_split, measure, quality, save

    specs = _one_model(model, "measure one model at a time")
    source = data or default_data()
    pool = load_recencyqa(source)
    count = len(heldout_split(pool)[:limit])
    settings = GateSettings(samples=samples, temperature=temperature, seed=seed)
    cached = load_models(specs, backend.backend(), open_cache(backend.cache))[0]
    with progress_bar() as bar:
        advance = task_progress(bar)("gate check", count)
        check = measure(cached, pool, settings, dataset=describe_source(source), limit=limit, progress=advance)
    path = save(check)
    measured = quality(Found(check=check, path=path, exact=True), RecencyClass.parse(threshold), min_share)
    typer.echo(measured.line())
    typer.echo(f"{cached.info.spec} is {measured.verdict()}")
    console.print(f"kept in {path}; `recency gate --model {cached.info.spec}` reads it", highlight=False)
