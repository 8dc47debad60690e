"""``chronoprobe recency``: does the model know how fresh an answer must be? (RecencyQA)"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from chronoprobe.cli.lens_command import lens_app, lens_command
from chronoprobe.cli.model_options import DEFAULT_MODEL_OPTIONS, ModelOptions, with_model_options
from chronoprobe.cli.options import ModelOpt, check_share
from chronoprobe.cli.progress_display import console, progress_bar, task_progress
from chronoprobe.cli.runs import load_models, open_cache
from chronoprobe.cli.tool_command import tool_command
from chronoprobe.errors import ConfigError
from chronoprobe.recency.gate import DEFAULT_SAMPLES as DEFAULT_GATE_SAMPLES
from chronoprobe.recency.gate import DEFAULT_TEMPERATURE as DEFAULT_GATE_TEMPERATURE
from chronoprobe.recency.lens import DATA_ENV, LEGACY_NOTE, RecencyLens, default_data, legacy_data  # noqa: F401  (kept importable from here)
from chronoprobe.recency.tools import GateCheckTool, LabelTool

if TYPE_CHECKING:
    from chronoprobe.models.base import BackendInfo
    from chronoprobe.recency.gate import GateDecision
    from chronoprobe.recency.gate_check import GateQuality

app = lens_app(RecencyLens)
app.command("eval", help="The same as `recency run` (its first name, kept).")(lens_command(RecencyLens))


app.command("label")(tool_command(LabelTool))


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


@app.command("gate")
@with_model_options("engine")
def gate(
    question: Annotated[
        str | None, typer.Argument(metavar="QUESTION", help="The question to route (or use --questions FILE).")
    ] = None,
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
    from chronoprobe.recency.gate_view import asked_questions, measured_quality

    asked = asked_questions(question, questions)
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
    measured = measured_quality(cached.info, threshold, samples, temperature, seed, min_share)
    _show(decisions, measured, cached.info, context, as_json=as_json, many=questions is not None)


def _show(
    decisions: list[GateDecision],
    measured: GateQuality | None,
    info: BackendInfo,
    context: str | None,
    *,
    as_json: bool,
    many: bool,
) -> None:
    """The decisions on stdout (the command's output), then the model's measured quality: on stdout under a
    single decision, else on stderr, with any warning on stderr."""
    from chronoprobe.recency.gate_view import decision_lines, quality_lines

    out = Console(highlight=False, soft_wrap=True)  # stdout
    for decision in decisions:
        shown = decision_lines(decision, measured, info.label, as_json=as_json, many=many)
        for line in shown.lines:
            if shown.markup:
                out.print(line)
            else:
                typer.echo(line)
    quality, warnings = quality_lines(measured, info.spec, context)
    if quality is not None:
        (console if as_json or many else out).print(quality, highlight=False, soft_wrap=True)
    for warning in warnings:
        console.print(warning, highlight=False, soft_wrap=True)


app.command("gate-check")(tool_command(GateCheckTool))
