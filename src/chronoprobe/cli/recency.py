"""``chronoprobe recency``: does the model know how fresh an answer must be? (RecencyQA)"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

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


app.command("gate-check")(tool_command(GateCheckTool))
