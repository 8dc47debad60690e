"""``chronoprobe export``: chronoprobe's questions as task folders for other harnesses (docs/harnesses.md)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from chronoprobe.cli.options import SnapshotOpt, check_as_of
from chronoprobe.cli.progress_display import console
from chronoprobe.cli.runs import claim_output_dir

app = typer.Typer(help="Write chronoprobe's questions as tasks for other evaluation harnesses.", no_args_is_help=True)


@app.command("lm-eval")
def lm_eval(
    out: Annotated[Path, typer.Option(help="Where to write the task folder (YAML, JSONL dataset, utils.py).")],
    snapshot: SnapshotOpt = None,
    facts: Annotated[Path | None, typer.Option(help="Fact catalogue JSON (default: the shipped one).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N facts.")] = None,
    aliases: Annotated[
        bool, typer.Option("--aliases/--no-aliases", help="Also match Wikidata aliases (off reproduces the paper).")
    ] = False,
    as_of: Annotated[
        str | None,
        typer.Option(help="Judge against what was current on this date (YYYY-MM-DD).", callback=check_as_of),
    ] = None,
) -> None:
    """The outdated question as an lm-evaluation-harness task (chronoprobe_outdated)."""
    from chronoprobe.integrations.lm_eval_export import TASK_NAME, export_task

    claim_output_dir(out)
    when = dt.date.fromisoformat(as_of) if as_of is not None else None  # checked by check_as_of
    count = export_task(out, snapshot=snapshot, facts=facts, limit=limit, use_aliases=aliases, as_of=when)
    console.print(f"{count} prompts written to {out}; run them with", highlight=False)
    console.print(
        f"  lm_eval --model hf --model_args pretrained=<model folder> --tasks {TASK_NAME} --include_path {out} "
        "--apply_chat_template --log_samples --output_path <folder>",
        highlight=False,
        soft_wrap=True,
    )
