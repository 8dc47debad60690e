"""``chronoprobe compare A B [C ...]``: run folders of the same lens and items compared paired, as a tool.

What it compares is :mod:`chronoprobe.reports.compare`'s; its outputs :mod:`chronoprobe.reports.compare_output`'s.
The tool only takes the options: it loads no model and writes nothing unless ``--out`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict
from rich.markup import escape

from chronoprobe.contract.tool import Answer, Tool, ToolContext
from chronoprobe.records.fields import SWITCH, Cli
from chronoprobe.records.publish import check_not_input
from chronoprobe.reports.compare import compare_runs, to_frame
from chronoprobe.reports.compare_output import check_compare_file, summary_view, table_view, write_compare_table
from chronoprobe.reports.tidy_formats import encode, pick_format
from chronoprobe.reports.tidy_table import find_runs

if TYPE_CHECKING:
    from chronoprobe.records.runlog import Run
    from chronoprobe.reports.compare import CompareRow, Comparison
    from chronoprobe.reports.tidy_formats import Format

__all__ = ["CompareResult", "CompareTool", "CompareToolConfig"]


class CompareToolConfig(BaseModel):
    """``chronoprobe compare``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    dirs: Annotated[tuple[Path, ...], Cli(argument="DIR")]
    """Run folders or check folders (or folders holding them) of the same items, in order: each later one (B) is
    compared with each earlier one (A), lens by lens. One folder of a run with two models compares those."""
    format: str | None = None
    """csv, json or parquet (default: from --out's suffix; a table without --out)."""
    out: Path | None = None
    """Where to write the table instead of the terminal (a file). An earlier table there is replaced; any other
    file is refused, never overwritten."""
    wide: Annotated[bool, SWITCH] = False
    """Draw the whole table at its own width (each pair's, raw metric names included), however wide the terminal;
    by default the table fits the terminal, and many pairs are summarised."""
    allow_different_items: Annotated[bool, SWITCH] = False
    """Compare runs whose items come from different snapshots, catalogues or datasets, on the items they share
    (refused otherwise)."""


@dataclass
class CompareResult:
    """Every comparison the folders gave, and the folders skipped on the way."""

    comparisons: list[Comparison]
    warnings: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[CompareRow]:
        return [row for comparison in self.comparisons for row in comparison.rows]

    def lines(self) -> list[str]:
        """Every comparison's sentences, in order."""
        return [line for comparison in self.comparisons for line in comparison.lines()]


class CompareTool(Tool[CompareResult]):
    """Compare runs of the same items paired: B − A per headline metric and class, with its 95% interval and test."""

    # No model and no torch import. Per fact verdicts by the exact McNemar test and Newcombe's paired interval,
    # means and clustered items by a seeded paired bootstrap (docs/statistics.md).

    name = "compare"
    command = "compare"
    config_type = CompareToolConfig
    config: CompareToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self.format: Format = "table"
        self._runs: list[Run] = []
        self._warnings: list[str] = []

    def check_inputs(self) -> None:

        self.format = pick_format(self.config.format, self.config.out)
        if self.config.out is not None:
            check_compare_file(self.config.out)

    def load(self) -> None:

        found = find_runs(self.config.dirs)
        self._runs, self._warnings = found.runs, found.warnings
        if self.config.out is not None:
            check_not_input(self.config.out, [("DIR", run.path) for run in found.runs])

    def run(self, context: ToolContext) -> CompareResult:

        for warning in self._warnings:
            context.notice(f"[yellow]warning[/]: {warning}")
        comparisons = compare_runs(self._runs, allow_different_items=self.config.allow_different_items)
        result = CompareResult(comparisons, self._warnings)
        if self.config.out is not None:
            write_compare_table(result.rows, self.config.out, self.format)
        return result

    def answer(self, result: CompareResult) -> list[Answer]:
        """Each comparison's table with its sentences, or the rows as csv or json text."""

        if self.config.out is not None:
            return []
        if self.format == "table":
            if not self.config.wide and len(result.comparisons) > len({c.lens for c in result.comparisons}):
                return [summary_view(result.comparisons)]  # more than one pair of a lens: a wall of tables
            return [table_view(comparison, wide=self.config.wide) for comparison in result.comparisons]
        return [encode(to_frame(result.rows), self.format).decode("utf-8").removesuffix("\n")]

    def present(self, result: CompareResult) -> list[str]:
        """The sentences, where the table that carries them is not on the terminal; then where the file is."""

        said = [] if self.format == "table" and self.config.out is None else [escape(s) for s in result.lines()]
        if self.config.out is not None:
            said.append(f"{len(result.rows)} rows written to {self.config.out}")
        return said
