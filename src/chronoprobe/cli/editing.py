"""``chronoprobe editing``: can the outdated facts be fixed? (DyKnow's editing and RAG experiments)

``dataset`` builds (or reads) DyKnow's ``editing_dataset.json``; ``score`` re-scores generations
in DyKnow's editing result layout. Kept free of torch imports so both start instantly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chronoprobe.cli.common import (
    DEFAULT_MODEL_OPTIONS,
    ModelOpt,
    ModelOptions,
    claim_run_dir,
    console,
    run_in_terminal,
    with_model_options,
)
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import DEFAULT_MODEL

if TYPE_CHECKING:
    from chronoprobe.editing.records import ModelResults

app = typer.Typer(
    help="Can it be fixed? Build DyKnow's editing dataset from an audit and score edited models.",
    no_args_is_help=True,
)

SELECT_CHOICES = ("outdated", "not-up-to-date")
LABEL_CHOICES = ("ours", "original")


def _choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in choices:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}")
        return value

    return check


def _print_counts(records: list[object], source: str, select: str | None = None, skipped: int = 0) -> None:
    """The facts per editing group, and the one sentence that says how they were chosen."""
    from chronoprobe.editing.dataset import count_lines

    for line in count_lines(records, source, select, skipped):  # type: ignore[arg-type]  # the callers pass EditRecords
        console.print(line, highlight=False)


def _print_fact_notes(count: int, model: str, listed_in: str) -> None:
    """The per-fact notes as one line: there can be a hundred of them; ``listed_in`` holds the list."""
    from chronoprobe.editing.dataset import fact_notes_line

    line = fact_notes_line(count, model, listed_in)
    if line is not None:
        console.print(line, highlight=False)


@app.command("dataset")
def dataset(
    from_run: Annotated[
        Path | None, typer.Option("--from", help="An `outdated run` folder (run.json + items.jsonl) to build from.")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="The model of the run to build for (needed when it has several).")
    ] = None,
    select: Annotated[
        str,
        typer.Option(
            help="outdated: the facts to edit (no up-to-date answer, one outdated at least, none ambiguous: "
            "DyKnow's rule, as the audit report counts them); not-up-to-date: every fact with no up-to-date answer.",
            callback=_choice(SELECT_CHOICES),
        ),
    ] = "outdated",
    out: Annotated[
        Path | None,
        typer.Option(
            help="Where to write the dataset (default editing_dataset.json; with --from). An earlier dataset this "
            "command wrote is replaced; any other file is refused, never overwritten."
        ),
    ] = None,
    read: Annotated[
        Path | None, typer.Option("--dataset", help="Read an editing_dataset.json (DyKnow's or ours) and summarise it.")
    ] = None,
) -> None:
    """Build DyKnow's editing_dataset.json from an outdated audit, or summarise one (--dataset)."""
    chosen = dict(locals())  # every option, as the tool's config names it
    from chronoprobe.editing.tools import DatasetTool
    from chronoprobe.runner import produce

    say = functools.partial(console.print, highlight=False)  # the tool's lines carry rich markup
    tool = DatasetTool.from_options(**chosen)
    for line in tool.present(produce(tool, notice=say)):
        say(line)


@app.command("score")
def score(
    generations: Annotated[
        Path,
        typer.Option(
            help="DyKnow's root (models_editing/results and RAG/) or its results folder: "
            "<METHOD>/<single_edits|batch_editing>/<model>/<category>_answers.json."
        ),
    ],
    dataset: Annotated[
        Path, typer.Option(help="The editing_dataset.json the answers were made for, or a folder with one per model.")
    ],
    out: Annotated[Path, typer.Option(help="Folder for scores.json and report.md.")],
    labels: Annotated[
        str,
        typer.Option(
            help="ours: re-classify every answer; original: DyKnow's labels from <category>_analysis.json.",
            callback=_choice(LABEL_CHOICES),
        ),
    ] = "ours",
    model: Annotated[
        list[str] | None, typer.Option("--model", help="Only this model folder (repeatable; default: all).")
    ] = None,
) -> None:
    """Efficacy, paraphrase success, their harmonic mean (Table 3) and the soft constraint (Table 7)."""
    chosen = dict(locals())  # every option, as the tool's config names it
    from chronoprobe.editing.tools import ScoreTool
    from chronoprobe.runner import produce

    tool = ScoreTool.from_options(**chosen)
    for line in tool.present(produce(tool)):
        console.print(line, highlight=False)


def _split(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _fractions(values: list[str] | None) -> tuple[float, ...]:
    fractions = []
    for part in _split(values):
        try:
            fraction = float(part)
        except ValueError:
            raise ConfigError("--scaling", f"{part!r} is not a number (give fractions like 0.25,0.5,0.75,1)") from None
        if not 0.0 < fraction <= 1.0:
            raise ConfigError("--scaling", f"{part} is not in (0, 1]")
        fractions.append(fraction)
    return tuple(fractions)


MODE_CHOICES = ("single", "batch")


def _config(**options: Any) -> Any:
    """The run's EditingConfig; a value it refuses becomes one error line naming the option."""
    from pydantic import ValidationError

    from chronoprobe.editing.config import EditingConfig

    try:
        return EditingConfig(**options)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"--{field.replace('_', '-')}" if field else "editing run", message) from None


FromRunOpt = Annotated[
    Path | None, typer.Option("--from", help="An `outdated run` folder: edit the facts this model got wrong.")
]
EditDatasetOpt = Annotated[Path | None, typer.Option(help="Or an editing_dataset.json (DyKnow's or ours) to edit.")]
MethodOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--method",
        help="Comma-separated (or repeated): rome, memit, serac, ike, ike-null, rag-gold, rag-retrieved, "
        "rag-noisy (default: all).",
    ),
]
ModeOpt = Annotated[
    str | None,
    typer.Option(
        help="single (one edit after another) or batch (all at once); default per method as DyKnow ran it "
        "(ROME single, MEMIT and SERAC batch).",
        callback=lambda v: None if v is None else _choice(MODE_CHOICES)(v),
    ),
]
ScalingOpt = Annotated[
    list[str] | None,
    typer.Option(help="Also edit these fractions of the facts together, e.g. 0.25,0.5,0.75,1 (Figure 3)."),
]
RunSelectOpt = Annotated[
    str,
    typer.Option(
        help="With --from: outdated (the facts to edit: DyKnow's rule, as the audit report counts them), "
        "not-up-to-date (every fact with no up-to-date answer), or auto (outdated; not-up-to-date when fewer "
        "than 10 facts are outdated, the default before 0.2.0).",
        callback=_choice(("auto", *SELECT_CHOICES)),
    ),
]
LimitOpt = Annotated[
    int | None,
    typer.Option(min=1, help="Only N facts, spread over Politicians, Teams and Positions (file order within each)."),
]
LocalityOpt = Annotated[
    bool, typer.Option("--locality/--no-locality", help="Re-run the whole audit on each edited model.")
]
FluencyOpt = Annotated[
    bool, typer.Option("--fluency/--no-fluency", help="Generate 100 tokens per edit prompt for n-gram entropy.")
]
HparamsOpt = Annotated[
    Path | None, typer.Option(help="YAML/JSON overriding ROME/MEMIT hyperparameters (EasyEdit's key names).")
]
StatsCorpusOpt = Annotated[
    Path | None,
    typer.Option(help="Text corpus for MEMIT's statistics: .txt (one document per line) or .jsonl ({'text': ...})."),
]
StatsDocumentsOpt = Annotated[int | None, typer.Option(min=1, help="Use at most N documents of the statistics corpus.")]
SaveEditedOpt = Annotated[
    Path | None, typer.Option(help="Write each weight-edited model here; otherwise edited weights stay in memory.")
]
PromptsOpt = Annotated[
    Path | None, typer.Option(help="JSON file with the IKE / RAG / SERAC prompt templates to use instead of ours.")
]
SeracThresholdOpt = Annotated[
    float | None, typer.Option(min=0.0, max=1.0, help="SERAC scope threshold (cosine similarity, default 0.77).")
]
SeracScopeOpt = Annotated[
    str, typer.Option(help="SERAC* scope classifier: embedding, embedding:<model> or nli:<hf id>.")
]
SeracCounterfactualOpt = Annotated[
    str,
    typer.Option(
        help="Who answers SERAC*'s in-scope questions: base-with-context (the model itself, edit in context) "
        "or another model spec."
    ),
]
EditSeedOpt = Annotated[int, typer.Option(help="Seed for ROME/MEMIT's context templates.")]
MaxNewTokensOpt = Annotated[int, typer.Option(min=1, help="Tokens to generate per answer.")]
RunOutOpt = Annotated[
    Path | None, typer.Option(help="Report folder (default: a new results/editing/<model>-<timestamp>).")
]


@app.command("run")
@with_model_options("device_map", "quantize", "sampler")
def run(
    model: ModelOpt = None,
    from_run: FromRunOpt = None,
    dataset: EditDatasetOpt = None,
    method: MethodOpt = None,
    mode: ModeOpt = None,
    scaling: ScalingOpt = None,
    select: RunSelectOpt = "outdated",
    limit: LimitOpt = None,
    locality: LocalityOpt = True,
    fluency: FluencyOpt = True,
    hparams: HparamsOpt = None,
    stats_corpus: StatsCorpusOpt = None,
    stats_documents: StatsDocumentsOpt = None,
    save_edited: SaveEditedOpt = None,
    prompts: PromptsOpt = None,
    serac_threshold: SeracThresholdOpt = None,
    serac_scope: SeracScopeOpt = "embedding",
    serac_counterfactual: SeracCounterfactualOpt = "base-with-context",
    seed: EditSeedOpt = 0,
    max_new_tokens: MaxNewTokensOpt = 20,
    out: RunOutOpt = None,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Edit each fact the model got wrong (or give it the fact in context), re-ask, judge, and report."""
    from chronoprobe.editing.lens import EditingLens, validate_methods
    from chronoprobe.runner import default_out

    if (from_run is None) == (dataset is None):
        raise ConfigError("--from/--dataset", "give the facts to edit: an outdated run folder or a dataset file")
    methods = validate_methods(_split(method)) if method else None
    config = _config(
        models=tuple(model or (DEFAULT_MODEL,)),
        from_run=from_run,
        dataset=dataset,
        select=select,
        limit=limit,
        mode=mode,
        scaling=_fractions(scaling),
        locality=locality,
        fluency=fluency,
        hparams=hparams,
        stats_corpus=stats_corpus,
        stats_documents=stats_documents,
        save_edited=save_edited,
        prompts_file=prompts,
        serac_threshold=serac_threshold,
        serac_scope=serac_scope,
        serac_counterfactual=serac_counterfactual,
        seed=seed,
        max_new_tokens=max_new_tokens,
        **({"methods": methods} if methods else {}),
    )
    _check_engine(backend.engine, config)
    lens = EditingLens(config)
    out = out or default_out(lens)
    claim_run_dir(lens, out, backend.cache)
    if save_edited is not None:
        from chronoprobe.publish import check_output_folder

        check_output_folder(save_edited, "--save-edited")
    _load_notes(lens)
    result = run_in_terminal(lens, out, backend)
    from chronoprobe.editing.records import read_detail

    _print_scores(read_detail(result.summary.detail)["models"])
    console.print(f"report: {out / 'report.md'}")


def _check_engine(engine: str, config: Any) -> None:
    """Weight edits change the model in this process: Ray may run prompt methods only."""
    if engine == "local":
        return
    from chronoprobe.editing.config import PROMPT_METHODS, WEIGHT_METHODS

    weights = sorted(WEIGHT_METHODS & set(config.methods))
    if weights:
        raise ConfigError(
            f"--engine {engine}",
            f"{', '.join(weights)} edit the weights in this process, so they run on --engine local only; "
            f"with Ray pick prompt methods (--method {','.join(PROMPT_METHODS)})",
        )


def _load_notes(lens: Any) -> None:
    """Read the facts to edit and print their notes and counts (the runner prints the plan line after them)."""
    lens.load()
    for spec, chosen in lens.sets.items():
        for note in chosen.notes:
            console.print(f"[yellow]note[/] ({spec}): {note}", highlight=False)
        _print_fact_notes(len(chosen.fact_notes), f" ({spec})", "report.md")
        _print_counts(list(chosen.records), f"{chosen.source} for {spec}", chosen.select, len(chosen.skipped))


def _print_scores(per_model: dict[str, ModelResults]) -> None:
    """Each model's headline line per method: harmonic mean and soft constraint over every fact."""
    from chronoprobe.metrics.uncertainty import as_estimate

    for spec, summary in per_model.items():
        for entry in summary["results"]:
            if entry["fraction"] != 1.0:
                continue
            overall = entry["scores"]["All"]
            hm = as_estimate(overall["harmonic_mean"])
            soft = as_estimate(overall["soft_constraint"])
            assert hm is not None and soft is not None
            console.print(
                f"[bold]{spec}[/] {entry['column'] if entry['method'] != 'unedited' else 'unedited'} "
                f"({entry['facts']} facts): HM {hm.format_pct()}  soft constraint {soft.format_pct()}",
                highlight=False,
            )
