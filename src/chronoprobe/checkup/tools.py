"""The commands across every lens, as tools: ``chronoprobe check``, ``chronoprobe results`` and ``chronoprobe card``.

Each is declared as a lens's tools are (:mod:`chronoprobe.contract.tool`): a config whose field docstrings are
the help text, the command generated from it and ``chronoprobe.produce("results", ...)`` taking the same
values. What they do is :mod:`chronoprobe.checkup.run`'s and :mod:`chronoprobe.reports`'; the tools only
take the options.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from pydantic import BaseModel, ConfigDict
from rich.markup import escape

from chronoprobe.contract.lens import Budget, ProgressFactory
from chronoprobe.contract.runlog import Run
from chronoprobe.contract.tool import Answer, Tool, ToolContext
from chronoprobe.knowledge.snapshot import SnapshotRef
from chronoprobe.models.registry import ModelRequest
from chronoprobe.values import HttpUrl

if TYPE_CHECKING:
    import pandas as pd

    from chronoprobe.checkup.run import CheckResult
    from chronoprobe.reports.tidy_formats import Format
    from chronoprobe.reports.tidy_table import Found

__all__ = ["CardTool", "CardToolConfig", "CheckTool", "CheckToolConfig", "ResultsTool", "ResultsToolConfig"]


class CheckToolConfig(BaseModel):
    """``chronoprobe check``: every option, as the command takes it (the shared model options beside them)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    model: tuple[str, ...] = ()
    """The model specs to check (default: the embedded SmolLM2)."""
    budget: Budget = "quick"
    """quick (SmolLM2 on 2 CPU cores: 4 min at load 2, 7 min at load 5), standard (44 min at load 5), full (the
    papers' runs; hours). docs/check.md gives each one's sizes and times."""
    out: Path | None = None
    """Where to write the check folder (default: a new results/check/<model>-<timestamp>). The same folder again
    resumes: lenses that finished with the same settings are kept."""
    lens: tuple[str, ...] = ()
    """Only this lens (repeatable; the lenses it needs run too). Default: every lens."""
    live: bool = False
    """Judge against today's answers (queries --endpoint; saves a snapshot)."""
    snapshot: SnapshotRef | None = None
    """Snapshot name or file to judge against (default: shipped 2023-12-18)."""
    endpoint: HttpUrl | None = None
    """SPARQL endpoint for --live (default: the Wikidata Query Service)."""
    deployed_at: str | None = None
    """Forecast staleness for a model shipped on this date (YYYY-MM or YYYY-MM-DD): the share of what it knows
    that is stale then, 6 and 12 months later."""
    require: tuple[str, ...] = ()
    """A threshold, 'LENS.METRIC[.CLASS] OP VALUE' with the metric as `chronoprobe results` names it (class all
    unless named), e.g. 'outdated.soft_constraint_pct.up-to-date >= 40' (repeatable). It fails only when the
    whole 95% interval misses it (--strict: the point value). Exit 1 if one fails."""
    strict: bool = False
    """Compare thresholds with point values."""
    junit: Path | None = None
    """Write a JUnit XML file: one test case per threshold and per lens."""
    baseline: Path | None = None
    """An earlier check folder to compare this one with, paired on the same items (the same model or another):
    the paragraph says what changed, and --require 'LENS.METRIC[.CLASS].delta OP VALUE' gates the change."""
    precision: float | None = None
    """Size each lens for a 95% interval of this half-width in points on its headline rate, from the items it has
    (capped at all of them; the plan line says so)."""
    allow_different_items: bool = False
    """Compare with a --baseline asked other items (another budget, snapshot or sample), on the items they share
    (refused otherwise)."""


class CheckTool(Tool["CheckResult"]):
    """Ask a model every question at once: each lens at the budget's size, one folder, a paragraph per model."""

    # The check writes its own folder (resumable, chronoprobe.checkup.run), so the runner claims nothing;
    # every user error (a model spec, --junit, a bad threshold, a size, the folder) is refused before any
    # model loads. Exit 1 when a threshold fails. (The docstring above is the command's --help.)

    name = "check"
    command = "check"
    config_type = CheckToolConfig
    input_options: ClassVar[dict[str, str]] = {
        "live": "--live",
        "strict": "--strict",
        "allow_different_items": "--allow-different-items",
    }
    output_fields = frozenset({"out", "junit"})
    text_paths = frozenset({"snapshot"})
    takes_model = True
    model_options = True
    config: CheckToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._models: tuple[ModelRequest, ...] = ()
        self.folder = Path()
        """The check folder: ``--out``, else a new ``results/check/<model>-<timestamp>``."""

    def check_inputs(self) -> None:
        from chronoprobe.checkup.junit import JUNIT, is_our_junit
        from chronoprobe.checkup.run import default_check_out
        from chronoprobe.contract.publish import check_output_file, check_outside
        from chronoprobe.models.registry import DEFAULT_MODEL, parse_model

        config = self.config
        self._models = tuple(parse_model(m) for m in config.model or (DEFAULT_MODEL,))
        self.folder = config.out or default_check_out(self._models)
        if config.junit is not None:
            check_output_file(config.junit, "--junit", ours=is_our_junit, what=JUNIT)
            check_outside(self.folder, [("--junit", config.junit)])

    def run(self, context: ToolContext) -> CheckResult:
        from chronoprobe.checkup.plan import plan_line, total_line
        from chronoprobe.checkup.run import CheckRequest, plan, prepare, run_prepared
        from chronoprobe.contract.publish import check_not_input
        from chronoprobe.paths import default_call_cache

        config = self.config
        if config.junit is not None:  # written last, by a rename: never over the call cache the lenses fill
            check_not_input(config.junit, [("--cache", context.cache_path or default_call_cache())], "--junit")
        request = CheckRequest(
            models=self._models,
            budget=config.budget,
            out=config.out,
            lenses=config.lens,
            live=config.live,
            snapshot=config.snapshot,
            endpoint=config.endpoint,
            deployed_at=config.deployed_at,
            require=config.require,
            strict=config.strict,
            cache=context.cache_path,
            options=context.options,
            engine=context.engine,
            baseline=config.baseline,
            precision=config.precision,
            allow_different_items=config.allow_different_items,
        )
        prepared = prepare(request, self.folder)  # bad thresholds, sizes or folders: exit 2, no model loaded
        for line in plan(prepared):
            context.notice(escape(plan_line(line)))
        context.notice(escape(total_line(prepared.plans)))
        # each lens opens the progress display while its models run; without one, the caller's factory
        display = cast(Callable[[], AbstractContextManager[ProgressFactory]], context.progress)
        result = run_prepared(
            prepared,
            say=lambda line: context.notice(escape(line)),
            progress_display=display,
            announce=context.announce,
        )
        if config.junit is not None:
            result.write_junit(config.junit)
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
        from chronoprobe.reports.tidy_formats import check_table_file, pick_format

        self.format = pick_format(self.config.fmt, self.config.out)
        if self.config.out is not None:
            check_table_file(self.config.out)

    def load(self) -> None:
        from chronoprobe.contract.publish import check_not_input
        from chronoprobe.reports.tidy_table import find_runs

        self._found = found = find_runs(self.config.dirs)
        if self.config.out is not None:
            check_not_input(self.config.out, [("RUN_DIR", run.path) for run in found.runs])

    def run(self, context: ToolContext) -> pd.DataFrame:
        from chronoprobe.reports.tidy_formats import write_table
        from chronoprobe.reports.tidy_table import tidy_rows, to_frame

        assert self._found is not None, "load() first"
        frame = to_frame(tidy_rows(self._found.runs))
        for warning in self._found.warnings:
            context.notice(f"[yellow]warning[/]: {warning}")
        if self.config.out is not None:
            write_table(frame, self.config.out, self.format)
        return frame

    def answer(self, result: pd.DataFrame) -> list[Answer]:
        """The table on the terminal (one table, or grouped to fit its width), or its csv or json text."""
        from chronoprobe.reports.tidy_formats import TidyView, encode
        from chronoprobe.reports.tidy_table import tidy_rows

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
