"""The commands across every lens, as tools: ``chronoprobe results`` and ``chronoprobe card``.

Each is declared as a lens's tools are (:mod:`chronoprobe.tool`): a config whose field docstrings are
the help text, the command generated from it and ``chronoprobe.produce("results", ...)`` taking the same
values. What they do is :mod:`chronoprobe.reports`'; the tools only take the options.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict

from chronoprobe.runlog import Run
from chronoprobe.tool import Answer, Tool, ToolContext

if TYPE_CHECKING:
    import pandas as pd

    from chronoprobe.reports.tidy import Found
    from chronoprobe.reports.tidy_output import Format

__all__ = ["CardTool", "CardToolConfig", "ResultsTool", "ResultsToolConfig"]


class ResultsToolConfig(BaseModel):
    """``chronoprobe results``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    dirs: tuple[Path, ...]
    """Result folders, or folders holding them (searched three levels down: results/check/<check>/<lens> too)."""
    fmt: str | None = None
    """csv, json or parquet (default: from --out's suffix; a table without --out)."""
    out: Path | None = None
    """Where to write the table instead of the terminal (a file). An earlier table there is replaced; any other
    file is refused, never overwritten."""


class ResultsTool(Tool["pd.DataFrame"]):
    """One tidy table (run, model, lens, dataset, class, metric, value, n, ci_low, ci_high) across runs and lenses."""

    # No model and no torch import: reading the folders is instant. The result is the table as a pandas
    # DataFrame; the command shows it (a table, csv or json text) on stdout, or writes it to --out.

    name = "results"
    command = "results"
    config_type = ResultsToolConfig
    input_options: ClassVar[dict[str, str]] = {"dirs": "DIR", "fmt": "--format"}
    arguments = ("dirs",)
    config: ResultsToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self.format: Format = "table"
        """The format chosen: ``--format``, else ``--out``'s suffix, else a table on the terminal."""
        self._found: Found | None = None

    def check_inputs(self) -> None:
        from chronoprobe.reports.tidy_output import check_table_file, pick_format

        self.format = pick_format(self.config.fmt, self.config.out)
        if self.config.out is not None:
            check_table_file(self.config.out)

    def load(self) -> None:
        from chronoprobe.publish import check_not_input
        from chronoprobe.reports.tidy import find_runs

        self._found = found = find_runs(self.config.dirs)
        if self.config.out is not None:
            check_not_input(self.config.out, [("RUN_DIR", run.path) for run in found.runs])

    def run(self, context: ToolContext) -> pd.DataFrame:
        from chronoprobe.reports.tidy import tidy_rows, to_frame
        from chronoprobe.reports.tidy_output import write_table

        assert self._found is not None, "load() first"
        frame = to_frame(tidy_rows(self._found.runs))
        for warning in self._found.warnings:
            context.notice(f"[yellow]warning[/]: {warning}")
        if self.config.out is not None:
            write_table(frame, self.config.out, self.format)
        return frame

    def answer(self, result: pd.DataFrame) -> list[Answer]:
        """The table on the terminal (one table, or grouped to fit its width), or its csv or json text."""
        from chronoprobe.reports.tidy_output import TidyView, encode

        if self.config.out is not None:
            return []
        if self.format == "table":
            return [TidyView(result)]
        return [encode(result, self.format).decode("utf-8").removesuffix("\n")]

    def present(self, result: pd.DataFrame) -> list[str]:
        return [] if self.config.out is None else [f"{len(result)} rows written to {self.config.out}"]


class CardToolConfig(BaseModel):
    """``chronoprobe card``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    dirs: tuple[Path, ...]
    """Result folders, or folders holding them (searched three levels down: results/check/<check>/<lens> too)."""
    out: Path = Path("card.html")
    """Where to write the card (an HTML file). An earlier card there is replaced; any other file is refused,
    never overwritten."""
    title: str = "chronoprobe report card"
    """Page title."""


class CardTool(Tool[list[Run]]):
    """Write one offline HTML page: per lens the headline numbers with intervals, models side by side, plots, provenance."""

    name = "card"
    command = "card"
    config_type = CardToolConfig
    input_options: ClassVar[dict[str, str]] = {"dirs": "DIR"}
    arguments = ("dirs",)
    output_fields = frozenset({"out"})
    config: CardToolConfig

    def run(self, context: ToolContext) -> list[Run]:
        from chronoprobe.reports.card import write_card

        config = self.config
        return write_card(
            config.dirs, config.out, config.title, warn=lambda line: context.notice(f"[yellow]warning[/]: {line}")
        )

    def present(self, result: list[Run]) -> list[str]:
        lenses = ", ".join(sorted({run.lens for run in result}))
        return [f"card with {len(result)} run(s) ({lenses}) written to {self.config.out}"]
