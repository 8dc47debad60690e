"""``chronoprobe outdated``: is the model outdated? (DyKnow)"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from chronoprobe.cli.common import (
    DEFAULT_MODEL_OPTIONS,
    CutoffOpt,
    DeployedAtOpt,
    ModelOpt,
    ModelOptions,
    SnapshotOpt,
    check_as_of,
    check_endpoint,
    claim_run_dir,
    config_errors,
    console,
    progress_bar,
    run_in_terminal,
    with_model_options,
)
from chronoprobe.cli.outdated_score import score
from chronoprobe.errors import ConfigError
from chronoprobe.io import read_text
from chronoprobe.models.registry import DEFAULT_MODEL
from chronoprobe.outdated.knowledge_report import knowledge_console_lines
from chronoprobe.outdated.records import read_run_detail

app = typer.Typer(
    help="Is the model outdated? Ask time-sensitive facts, judge answers against Wikidata.", no_args_is_help=True
)


def _parse_date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ConfigError("--as-of", f"{value!r} is not a date (use YYYY-MM-DD)") from None


def _read_instruction(path: Path) -> str:
    text = read_text(path, f"instruction file {path}").strip()
    if "{sentence}" not in text:
        raise ConfigError(f"instruction file {path}", "must contain the placeholder {sentence}")
    return text


@app.command("run")
@with_model_options("sampler")
def run(
    model: ModelOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Report folder (replaced if it holds an earlier report; default: a new results/outdated/<model>-<timestamp>)."
        ),
    ] = None,
    snapshot: SnapshotOpt = None,
    live: Annotated[
        bool, typer.Option("--live", help="Query the Wikidata Query Service now (and save the answers as a snapshot).")
    ] = False,
    endpoint: Annotated[
        str, typer.Option(help="SPARQL endpoint for --live.", callback=check_endpoint)
    ] = "https://query.wikidata.org/sparql",
    facts: Annotated[
        Path | None,
        typer.Option(help="Fact catalogue JSON, or an original grc_generated.json (its own prompts and answers)."),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            help="Also judge answers against what was current on this date (YYYY-MM-DD), e.g. the model's release.",
            callback=check_as_of,
        ),
    ] = None,
    aliases: Annotated[
        bool, typer.Option("--aliases/--no-aliases", help="Also match Wikidata aliases (off reproduces the paper).")
    ] = False,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N facts.")] = None,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Tokens to generate per answer.")] = 20,
    instruction_file: Annotated[
        Path | None,
        typer.Option(help="Chat instruction to use instead of ours; must contain {sentence} (the paraphrase)."),
    ] = None,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
    cutoff: CutoffOpt = None,
    deployed_at: DeployedAtOpt = None,
) -> None:
    """Ask every fact's three paraphrases, judge each answer, and write a report folder."""
    from chronoprobe.outdated.audit import AuditConfig
    from chronoprobe.outdated.knowledge_date import parse_cutoffs, parse_deployed_at
    from chronoprobe.outdated.lens import OutdatedLens
    from chronoprobe.runner import default_out

    with config_errors({"facts_file": "--facts"}):
        config = AuditConfig(
            models=tuple(model or (DEFAULT_MODEL,)),
            facts_file=facts,
            snapshot=snapshot,
            live=live,
            endpoint=endpoint,
            as_of=_parse_date(as_of),
            use_aliases=aliases,
            max_new_tokens=max_new_tokens,
            limit=limit,
            **({"instruction": _read_instruction(instruction_file)} if instruction_file else {}),
            cutoffs=parse_cutoffs(cutoff or [], _model_names(model or [DEFAULT_MODEL])),
            deployed_at=parse_deployed_at(deployed_at),
        )
    lens = OutdatedLens(config)
    out = out or default_out(lens)
    claim_run_dir(
        lens, out, backend.cache, ("--instruction-file", instruction_file)
    )  # checked and locked before any model loads
    if live:
        with progress_bar(transient=True) as bar:
            task = bar.add_task("querying Wikidata", total=None)
            lens.load(fetch_progress=lambda k: bar.advance(task, k))
        assert lens.gold is not None
        console.print(f"live answers saved as snapshot {lens.gold.name}", highlight=False)
    else:
        lens.load()
    assert lens.gold is not None
    facts_list, no_gold = lens.facts, lens.no_gold
    if no_gold:
        console.print(
            f"[yellow]no gold[/] answer for {len(no_gold)} fact(s) in {lens.gold.name}: left out of every rate"
        )
    result = run_in_terminal(lens, out, backend)
    per_model = read_run_detail(result.summary.detail)["models"]
    calls = result.provenance.model_calls_made or {}
    from chronoprobe.metrics.uncertainty import as_estimate

    for spec, summary in per_model.items():
        overall = summary["per_category"]["all"]["soft_constraint_pct"]
        ci = summary["per_category"]["all"]["estimates"]["soft_constraint_pct"]
        shares = "  ".join(
            f"{v} {overall[v]:.1f}% {as_estimate(ci[v]).interval(1)}"  # type: ignore[union-attr]  # the outdated summary holds an estimate per verdict
            for v in ("up-to-date", "outdated", "irrelevant", "ambiguous")
        )
        console.print(
            f"[bold]{spec}[/]: {shares} (soft constraint, 95% Wilson intervals; "
            f"{len(facts_list) - len(no_gold)} facts judged, {len(no_gold)} without gold; {calls[spec]} new model calls)"
        )
        for line in knowledge_console_lines(spec, summary.get("knowledge_date")):
            console.print(line, highlight=False)
    console.print(f"report: {out / 'report.md'}")


def _model_names(models: list[str]) -> list[tuple[str, str]]:
    """What --cutoff may call each model: its display name and its spec."""
    from chronoprobe.models.registry import parse_model

    return [(request.display_name, request.spec.raw) for request in map(parse_model, models)]


app.command("score")(score)  # the re-scoring command lives in its own module
