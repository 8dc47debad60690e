"""``chronoprobe results DIR...``: one tidy table across result folders and lenses.

No model and no torch import: reading the folders is instant.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import Console

from chronoprobe.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

Format = Literal["table", "csv", "json", "parquet"]
_SUFFIXES: dict[str, Format] = {".csv": "csv", ".json": "json", ".parquet": "parquet", ".pq": "parquet"}
_err = Console(stderr=True)


def pick_format(fmt: str | None, out: Path | None) -> Format:
    """``--format`` if given, else the ``--out`` suffix, else a table on the terminal."""
    if fmt is not None:
        chosen = fmt.strip().lower()
        if chosen not in ("table", "csv", "json", "parquet"):
            raise ConfigError("--format", f"unknown format {fmt!r}; use csv, json or parquet (or table)")
        if chosen == "table" and out is not None:
            raise ConfigError("--format", "table is for the terminal; give csv, json or parquet with --out")
        if chosen == "parquet" and out is None:
            raise ConfigError("--format", "parquet is binary; give --out FILE.parquet")
        return chosen  # type: ignore[return-value]
    if out is None:
        return "table"
    if out.suffix.lower() in _SUFFIXES:
        return _SUFFIXES[out.suffix.lower()]
    raise ConfigError(
        "--out", f"cannot tell the format from {out.name!r}; end it in .csv, .json or .parquet, or give --format"
    )


def check_out_file(out: Path) -> None:
    """A path we may write a table to: not a folder, not a file inside a result folder."""
    from chronoprobe.reports.tidy import MARKER, SUMMARY

    if out.is_dir():
        raise ConfigError("--out", f"{out} is a folder; give a file name")
    parent = out.parent
    if (parent / MARKER).is_file() or (parent / SUMMARY).is_file():
        raise ConfigError("--out", f"{parent} is a result folder; write the table somewhere else")
    if parent.exists() and not parent.is_dir():
        raise ConfigError("--out", f"{parent} is not a folder")


def encode(frame: pd.DataFrame, fmt: Format) -> bytes:
    if fmt == "csv":
        return frame.to_csv(index=False).encode("utf-8")
    if fmt == "json":
        return (frame.to_json(orient="records", indent=2, force_ascii=False) + "\n").encode("utf-8")
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _number(value: object, digits: int = 4) -> str:
    import pandas as pd

    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def print_table(frame: pd.DataFrame, console: Console) -> None:
    from rich.table import Table

    table = Table(show_lines=False, header_style="bold")
    for column in frame.columns:
        table.add_column(str(column), justify="right" if column in ("value", "n", "ci_low", "ci_high") else "left")
    for record in frame.itertuples(index=False):
        table.add_row(*(_number(v) for v in record))
    console.print(table)
    console.print(f"{len(frame)} rows; intervals are 95% (Wilson for rates, bootstrap for means)", style="dim")


def results(
    dirs: Annotated[
        list[Path], typer.Argument(help="Result folders, or folders holding them (searched two levels down).")
    ],
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="csv, json or parquet (default: from --out's suffix; a table without --out)."),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the table to this file instead of the terminal.")] = None,
) -> None:
    """One tidy table (run, model, lens, dataset, class, metric, value, n, ci_low, ci_high) across runs and lenses."""
    from chronoprobe.io import write_bytes_atomic
    from chronoprobe.reports.tidy import results_frame

    chosen = pick_format(fmt, out)
    if out is not None:
        check_out_file(out)
    frame, warnings = results_frame(dirs)
    for warning in warnings:
        _err.print(f"[yellow]warning[/]: {warning}", highlight=False, soft_wrap=True)
    if out is not None:
        write_bytes_atomic(out, encode(frame, chosen))
        _err.print(f"{len(frame)} rows written to {out}", highlight=False)
    elif chosen == "table":
        print_table(frame, Console())
    else:
        typer.echo(encode(frame, chosen).decode("utf-8"), nl=False)
