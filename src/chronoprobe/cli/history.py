"""``chronoprobe history DIR...``: a model's audits across gold snapshots, and what the world's changes did."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from chronoprobe.cli.deprecated import with_deprecated
from chronoprobe.cli.progress_display import console
from chronoprobe.cli.runs import claim_output_dir


@with_deprecated({"--model": "--only-model"})
def history(
    dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="DIR",
            help="Check folders, `outdated run` folders, or folders holding them (searched three levels down).",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            help="Where to write history.md, history.json and history.png: a folder (default: a new "
            "results/history/<model>-<timestamp>)."
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--only-model", help="Only these models: their names or specs in the runs (repeatable)."),
    ] = None,
) -> None:
    """Up-to-date, outdated and irrelevant shares by snapshot date, and the gold changes that turned answers outdated."""
    from chronoprobe.outdated.history import HISTORY_KIND, change_lines, history_view, read_history, write_history
    from chronoprobe.publish import staged
    from chronoprobe.runner import default_folder

    found = read_history(dirs, model or ())
    folder = out or default_folder(
        Path("results") / HISTORY_KIND, "", list(dict.fromkeys(p.name for p in found.points))
    )
    claim_output_dir(folder, kind=HISTORY_KIND, inputs=[("DIR", d) for d in dirs])
    for warning in found.warnings:
        console.print(f"[yellow]warning[/]: {warning}", highlight=False, soft_wrap=True)
    Console().print(history_view(found).rich())
    for line in change_lines(found):
        console.print(line, highlight=False)
    with staged(folder, HISTORY_KIND) as staging:
        write_history(staging, found)
    console.print(f"history: {folder / 'history.md'}", highlight=False)
