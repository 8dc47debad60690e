"""``chronoprobe results DIR...``: one tidy table across result folders and lenses.

No model and no torch import: reading the folders is instant. The formats and the terminal view are
:mod:`chronoprobe.reports.tidy_output`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

_err = Console(stderr=True)


def results(
    dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="DIR",
            help="Result folders, or folders holding them (searched three levels down: results/check/<check>/<lens> too).",
        ),
    ],
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="csv, json or parquet (default: from --out's suffix; a table without --out)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Where to write the table instead of the terminal (a file). An earlier table there is replaced; "
            "any other file is refused, never overwritten."
        ),
    ] = None,
) -> None:
    """One tidy table (run, model, lens, dataset, class, metric, value, n, ci_low, ci_high) across runs and lenses."""
    from chronoprobe.publish import check_not_input
    from chronoprobe.reports.tidy import find_runs, tidy_rows, to_frame
    from chronoprobe.reports.tidy_output import check_table_file, encode, pick_format, print_table, write_table

    chosen = pick_format(fmt, out)
    if out is not None:
        check_table_file(out)
    found = find_runs(dirs)
    if out is not None:
        check_not_input(out, [("RUN_DIR", run.path) for run in found.runs])
    frame = to_frame(tidy_rows(found.runs))
    for warning in found.warnings:
        _err.print(f"[yellow]warning[/]: {warning}", highlight=False, soft_wrap=True)
    if out is not None:
        write_table(frame, out, chosen)
        _err.print(f"{len(frame)} rows written to {out}", highlight=False)
    elif chosen == "table":
        print_table(frame, Console())
    else:
        typer.echo(encode(frame, chosen).decode("utf-8"), nl=False)
