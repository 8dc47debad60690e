"""The tidy table's outputs: its file formats, the rule for replacing a table file, and its terminal view.

``chronoprobe results`` is these over :func:`chronoprobe.reports.tidy_table.results_frame`; a Python user
gets the same CSV, JSON or Parquet bytes (:func:`encode`, :func:`write_table`) and the same terminal
table (:func:`print_table`, or :class:`TidyView` to draw it on a console of their own).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rich.console import Group
from rich.table import Table
from rich.text import Text

from chronoprobe.errors import ConfigError
from chronoprobe.records.publish import check_output_file, staged_files
from chronoprobe.records.runlog import Metric
from chronoprobe.reports.metric_format import FLAT, bounds, no_variation, unit_note, value_text
from chronoprobe.reports.tidy_table import COLUMNS

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
__all__ = [
    "INTERVALS",
    "TABLE",
    "Format",
    "TidyView",
    "check_table_file",
    "encode",
    "is_tidy_table",
    "pick_format",
    "print_grouped",
    "print_table",
    "table_width",
    "write_table",
]

Format = Literal["table", "csv", "json", "parquet"]
_SUFFIXES: dict[str, Format] = {".csv": "csv", ".json": "json", ".parquet": "parquet", ".pq": "parquet"}


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
        return chosen  # type: ignore[return-value]  # checked against the format names just above
    if out is None:
        return "table"
    if out.suffix.lower() in _SUFFIXES:
        return _SUFFIXES[out.suffix.lower()]
    raise ConfigError(
        "--out", f"cannot tell the format from {out.name!r}; end it in .csv, .json or .parquet, or give --format"
    )


TABLE = "a table written by `chronoprobe results`"
"""What ``results --out`` may replace (the refusal names it)."""


def is_table_of(path: Path, columns: tuple[str, ...]) -> bool:
    """A CSV, JSON or Parquet table with exactly ``columns``: one a command of ours wrote (``results``, ``compare``).

    The mark is the columns themselves: a CSV's header line, a Parquet file's schema, a JSON table's first
    record. A JSON list with no record carries none, so an empty ``[]`` (a user's file as much as an empty table
    of ours) is never taken for ours and never replaced."""
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            import pandas as pd  # deferred: pandas

            return tuple(pd.read_parquet(path).columns) == columns
        with path.open("rb") as handle:
            head = handle.read(1 << 16).decode("utf-8", errors="replace")
        if head.split("\n", 1)[0].strip() == ",".join(columns):
            return True
        rows = json.loads(path.read_text(encoding="utf-8"))
    except Exception:  # unreadable, or not a table at all: not ours
        return False
    return isinstance(rows, list) and bool(rows) and isinstance(rows[0], dict) and tuple(rows[0]) == columns


def is_tidy_table(path: Path) -> bool:
    """A file ``results`` wrote: a CSV, JSON or Parquet table with exactly the tidy columns."""
    return is_table_of(path, COLUMNS)


def check_table_file(out: Path) -> None:
    """A path we may write a table to: not a folder, not someone else's file, not inside a result folder."""

    check_output_file(out, "--out", ours=is_tidy_table, what=TABLE)


def encode(frame: pd.DataFrame, fmt: Format) -> bytes:
    """The table as a csv, json or parquet file's bytes."""
    if fmt == "csv":
        return frame.to_csv(index=False).encode("utf-8")
    if fmt == "json":
        return (frame.to_json(orient="records", indent=2, force_ascii=False) + "\n").encode("utf-8")
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _number(value: object, digits: int = 4) -> str:
    import pandas as pd  # deferred: pandas

    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


_RIGHT = ("value", "n", "ci_low", "ci_high")
INTERVALS = "intervals are 95% (Wilson for rates, bootstrap for means)"
UNITS = "rates in percent, those marked (0–1) on 0-1 as their paper prints them, dates as YYYY-MM"


def _shown(metric: Metric) -> dict[str, str]:
    """A record's cells as the card shows them: its value and interval's ends in its unit, its name marked."""
    ends = (FLAT, "–") if no_variation(metric) else bounds(metric) or ("–", "–")
    return {
        "metric": metric.name + unit_note(metric),
        "value": value_text(metric),
        "ci_low": ends[0],
        "ci_high": ends[1],
    }


def _cells(frame: pd.DataFrame, metrics: Sequence[Metric] | None = None) -> list[list[str]]:
    """Every row's cells; with the rows' ``metrics`` (in the frame's order) numbers are shown in their unit."""
    columns = [str(c) for c in frame.columns]
    cells = [[_number(v) for v in record] for record in frame.itertuples(index=False)]
    if metrics is None:
        return cells
    if len(metrics) != len(cells):
        raise ValueError(f"{len(metrics)} metric records for a table of {len(cells)} rows")
    for row, metric in zip(cells, metrics, strict=True):
        for column, text in _shown(metric).items():
            if column in columns:
                row[columns.index(column)] = text
    return cells


def table_width(frame: pd.DataFrame, cells: list[list[str]]) -> int:
    """Columns the one table needs with every cell whole (rich's heavy box: a border and a space either side)."""
    widths = [len(str(c)) for c in frame.columns]
    for row in cells:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    return sum(w + 3 for w in widths) + 1


@dataclass(frozen=True)
class TidyView:
    """The tidy table as the terminal shows it, a rich renderable: one table with every value whole where the
    width allows it, else :func:`print_grouped`'s long format. Print it uncropped
    (``console.print(TidyView(frame), crop=False)``): a run folder's heading is one line however long.

    Given the rows' ``metrics`` (:func:`~chronoprobe.reports.tidy_table.tidy_rows`, in the frame's order),
    values and intervals show in their unit as check.md and the card show them (``12.3%``, ``2021-07``,
    ``2.51 years``); without them, as the plain numbers the file formats hold."""

    frame: pd.DataFrame
    metrics: Sequence[Metric] | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        cells = _cells(self.frame, self.metrics)
        closing = f"{INTERVALS}; {UNITS}" if self.metrics is not None else INTERVALS
        if table_width(self.frame, cells) > options.max_width:
            yield from _grouped(self.frame, cells, options.max_width, closing)
        else:
            yield from _one_table(self.frame, cells, console, closing)


def print_table(frame: pd.DataFrame, console: Console, metrics: Sequence[Metric] | None = None) -> None:
    """One table with every value whole where the terminal is wide enough, else :func:`print_grouped`."""
    console.print(TidyView(frame, metrics), crop=False)


def _one_table(frame: pd.DataFrame, cells: list[list[str]], console: Console, about: str) -> Iterator[RenderableType]:

    table = Table(show_lines=False, header_style="bold")
    for column in frame.columns:
        table.add_column(str(column), justify="right" if column in _RIGHT else "left")
    for row in cells:
        table.add_row(*row)
    yield table
    closing = console.render_str(f"{len(frame)} rows; {about}")
    closing.stylize_before("dim")  # under the highlighting, as console.print(..., style="dim") draws it
    yield closing


def _interval(low: str, high: str) -> str:
    return "–" if (low, high) == ("–", "–") else f"[{low}, {high}]"


def _whole(text: Text) -> Text:
    """``text`` on one line however long (a terminal wraps it; no cell of it is cut)."""
    text.no_wrap, text.overflow = True, "ignore"
    return text


def print_grouped(frame: pd.DataFrame, console: Console, metrics: Sequence[Metric] | None = None) -> None:
    """The compact long format for a narrow terminal: a heading per run and model, then class, metric, value.

    The heading names the run folder in full (and the lens and dataset, the same for all its
    rows), so no cell is cut and two runs of one lens stay apart; ``--format csv`` keeps the one
    table with every value.
    """

    about = f"{INTERVALS}; {UNITS}" if metrics is not None else INTERVALS
    console.print(Group(*_grouped(frame, _cells(frame, metrics), console.width, about)), crop=False)


def _grouped(frame: pd.DataFrame, cells: list[list[str]], width: int, about: str) -> Iterator[RenderableType]:
    column = {str(c): i for i, c in enumerate(frame.columns)}
    keys = list(zip(frame["run"], frame["model"], strict=True))
    groups = list(dict.fromkeys(keys))
    runs = list(dict.fromkeys(frame["run"]))
    for run, model in groups:
        part = [i for i, key in enumerate(keys) if key == (run, model)]
        lens, dataset = frame["lens"].iloc[part[0]], frame["dataset"].iloc[part[0]]
        about_run = lens if dataset == lens else f"{lens}, {dataset}"
        yield Text()
        yield _whole(Text.from_markup(f"[bold]run {runs.index(run) + 1}[/]: {run}"))
        yield _whole(Text(f"  model {model} · {about_run}"))
        table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="dim", show_edge=False)
        table.add_column("  class", overflow="fold")
        table.add_column("metric", overflow="fold", no_wrap=True)  # a name stays whole; the value folds first
        table.add_column("value [95% interval]", overflow="fold")
        table.add_column("n", justify="right")
        for i in part:
            row = cells[i]
            value = row[column["value"]]
            interval = _interval(row[column["ci_low"]], row[column["ci_high"]])
            table.add_row(
                f"  {row[column['class']]}",
                row[column["metric"]],
                value if interval == "–" else f"{value} {interval}",
                row[column["n"]],
            )
        yield table
    yield Text()
    yield Text(
        f"{len(frame)} rows in {len(runs)} run(s), grouped by run and model to fit {width} columns; "
        f"{about}. `--format csv` prints the one table with every value in full.",
        style="dim",
    )


def write_table(frame: pd.DataFrame, out: Path, fmt: Format) -> None:
    """``frame`` as a ``fmt`` file at ``out``, published whole; only an earlier table there is replaced."""

    data = encode(frame, fmt)
    with staged_files(out, ours=is_tidy_table, what=TABLE) as staging:
        (staging / out.name).write_bytes(data)
