"""The commands across every lens, as tools: ``chronoprobe check``, ``chronoprobe results`` and ``chronoprobe card``.

Each is declared as a lens's tools are (:mod:`chronoprobe.contract.tool`): a config whose field docstrings are
the help text, the command generated from it and ``chronoprobe.produce("results", ...)`` taking the same
values. What they do is :mod:`chronoprobe.checkup.run`'s and :mod:`chronoprobe.reports`'; the tools only
take the options.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict
from rich.markup import escape

from chronoprobe.checkup.config import CheckToolConfig
from chronoprobe.checkup.junit import JUNIT, is_our_junit
from chronoprobe.checkup.plan import plan_line, total_line
from chronoprobe.checkup.report import CHECK_KIND
from chronoprobe.checkup.run import CheckResult, default_check_out, plan, prepare, run_prepared
from chronoprobe.contract.tool import Answer, Tool, ToolContext
from chronoprobe.errors import ConfigError
from chronoprobe.paths import default_call_cache
from chronoprobe.records.fields import Cli
from chronoprobe.records.publish import OpenFolder, Output, check_not_input, check_output_file, check_outside
from chronoprobe.records.runlog import Run
from chronoprobe.reports.card import write_card
from chronoprobe.reports.tidy_formats import TidyView, check_table_file, encode, pick_format, write_table
from chronoprobe.reports.tidy_table import find_runs, tidy_rows, to_frame

if TYPE_CHECKING:
    import pandas as pd

    from chronoprobe.reports.tidy_formats import Format
    from chronoprobe.reports.tidy_table import Found

__all__ = ["CardTool", "CardToolConfig", "CheckTool", "CheckToolConfig", "ResultsTool", "ResultsToolConfig"]


class CheckTool(Tool["CheckResult"]):
    """Ask a model every question at once: each lens at the budget's size, one folder, a paragraph per model."""

    # The check writes its folder as it goes and resumes it (chronoprobe.checkup.run), each lens's run folder
    # inside it through the one runner; every user error (a model spec, --junit, a bad threshold, a size, the
    # folder) is refused before any model loads. Exit 1 when a threshold fails. (The docstring above is the
    # command's --help.)

    name = "check"
    command = "check"
    config_type = CheckToolConfig
    present_wraps = True
    model_options = True
    takes_handles = True
    config: CheckToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._folder: Path | None = None

    @property
    def folder(self) -> Path:
        """The check folder: ``--out``, else a new ``results/check/<model>-<timestamp>`` (chosen once)."""
        if self._folder is None:
            self._folder = self.config.out or default_check_out(self.config.models)
        return self._folder

    def check_inputs(self) -> None:
        config = self.config
        if config.live and config.snapshot is not None:
            raise ConfigError(
                "--live/--snapshot", "give one: --live judges against today's answers, --snapshot a pinned set"
            )
        if config.junit is not None:
            check_output_file(config.junit, "--junit", ours=is_our_junit, what=JUNIT)
            check_outside(self.folder, [("--junit", config.junit)])

    def output(self) -> Output:
        return Output("--out", self.folder, OpenFolder(CHECK_KIND))

    def run(self, context: ToolContext) -> CheckResult:
        if self.config.junit is not None:  # written last, by a rename: never over the call cache the lenses fill
            check_not_input(self.config.junit, [("--cache", context.cache_path or default_call_cache())], "--junit")
        prepared = prepare(self.config, self.folder, context, self.handles)  # thresholds, sizes: no model loaded
        for line in plan(prepared):
            context.notice(escape(plan_line(line)))
        context.notice(escape(total_line(prepared.plans)))
        result = run_prepared(prepared, say=lambda line: context.notice(escape(line)))
        if self.config.junit is not None:
            result.write_junit(self.config.junit)
        return result

    def present(self, result: CheckResult) -> list[str]:
        """The paragraph per model, each threshold's verdict, the JUnit file and where the check is."""
        junit = [] if self.config.junit is None else [f"JUnit: {self.config.junit}"]
        return [*result.lines(), *junit, f"check: {self.folder / 'check.md'}  card: {self.folder / 'card.html'}"]

    def exit_status(self, result: CheckResult) -> int:
        return 0 if result.passed else 1


class ResultsToolConfig(BaseModel):
    """``chronoprobe results``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    dirs: Annotated[tuple[Path, ...], Cli(argument="DIR")]
    """Result folders, or folders holding them (searched three levels down: results/check/<check>/<lens> too)."""
    format: str | None = None
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
    config: ResultsToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self.format: Format = "table"
        """The format chosen: ``--format``, else ``--out``'s suffix, else a table on the terminal."""
        self._found: Found | None = None

    def check_inputs(self) -> None:
        self.format = pick_format(self.config.format, self.config.out)
        if self.config.out is not None:
            check_table_file(self.config.out)

    def load(self) -> None:
        self._found = found = find_runs(self.config.dirs)
        if self.config.out is not None:
            check_not_input(self.config.out, [("RUN_DIR", run.path) for run in found.runs])

    def run(self, context: ToolContext) -> pd.DataFrame:
        assert self._found is not None, "load() first"
        frame = to_frame(tidy_rows(self._found.runs))
        for warning in self._found.warnings:
            context.notice(f"[yellow]warning[/]: {warning}")
        if self.config.out is not None:
            write_table(frame, self.config.out, self.format)
        return frame

    def answer(self, result: pd.DataFrame) -> list[Answer]:
        """The table on the terminal (one table, or grouped to fit its width), or its csv or json text."""
        if self.config.out is not None:
            return []
        if self.format == "table":  # the frame's rows, in its order: numbers shown in their unit, as on the card
            assert self._found is not None, "load() first"
            return [TidyView(result, [row.metric for row in tidy_rows(self._found.runs)])]
        return [encode(result, self.format).decode("utf-8").removesuffix("\n")]

    def present(self, result: pd.DataFrame) -> list[str]:
        return [] if self.config.out is None else [f"{len(result)} rows written to {self.config.out}"]


class CardToolConfig(BaseModel):
    """``chronoprobe card``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    dirs: Annotated[tuple[Path, ...], Cli(argument="DIR")]
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
    config: CardToolConfig

    def run(self, context: ToolContext) -> list[Run]:
        config = self.config
        return write_card(
            config.dirs, config.out, config.title, warn=lambda line: context.notice(f"[yellow]warning[/]: {line}")
        )

    def present(self, result: list[Run]) -> list[str]:
        lenses = ", ".join(sorted({run.lens for run in result}))
        return [f"card with {len(result)} run(s) ({lenses}) written to {self.config.out}"]
