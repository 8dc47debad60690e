"""``chronoprobe catalogue``: build a fact catalogue and its snapshot from Wikidata property templates, as tools.

``catalogue build`` (:class:`BuildTool`), ``catalogue templates`` (:class:`TemplatesTool`) and
``catalogue report`` (:class:`ReportTool`), declared as every tool is (:mod:`chronoprobe.contract.tool`). The
work and its validation are :mod:`chronoprobe.knowledge.catalogue_build`'s and
:mod:`chronoprobe.knowledge.templates`'; the tools only take the options. They live with the outdated
lens, whose audit a catalogue feeds (``outdated run --facts``), since ``knowledge/`` is below the tools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field
from rich.highlighter import ReprHighlighter
from rich.text import Text

from chronoprobe.contract.lens import ProgressFactory
from chronoprobe.contract.tool import Answer, Tool, ToolContext
from chronoprobe.knowledge.catalogue_build import build_catalogue, build_lines, report_view
from chronoprobe.knowledge.templates import resolve_templates, shipped_dir, shipped_templates
from chronoprobe.knowledge.wikidata import WDQS_ENDPOINT
from chronoprobe.records.fields import Cli
from chronoprobe.values import HttpUrl, PastDate

if TYPE_CHECKING:
    from chronoprobe.knowledge.catalogue_build import BuildReport, PageProgress
    from chronoprobe.knowledge.templates import PropertyTemplate
    from chronoprobe.tables import TableView

__all__ = [
    "BuildTool",
    "BuildToolConfig",
    "ReportTool",
    "ReportToolConfig",
    "TemplatesTool",
    "TemplatesToolConfig",
    "page_progress",
]


class BuildToolConfig(BaseModel):
    """``chronoprobe catalogue build``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    out: Path
    """Where to write the build folder: catalogue.json, snapshot.json, report.json, pages/."""
    templates: Annotated[tuple[str, ...], Cli(argument="TEMPLATE", text_path=True)] = ()
    """Shipped template names or .toml files (default: the whole shipped set)."""
    endpoint: HttpUrl = WDQS_ENDPOINT
    """SPARQL endpoint (WDQS, a mirror, or the stand-in)."""
    as_of: PastDate | None = None
    """Read every history as it stood on this date (YYYY-MM-DD)."""
    per_template: int | None = Field(None, ge=1)
    """At most N subjects (facts) asked per template."""
    timeout: float = Field(60.0, ge=1.0)
    """Seconds per request."""


def page_progress(ticks: ProgressFactory | None) -> PageProgress | None:
    """The build's ``(template, pages done, pages)`` reports as steps of a progress factory: a task per
    template, added on its first report."""
    if ticks is None:
        return None
    tasks: dict[str, tuple[Callable[[int], None], int]] = {}

    def report(name: str, done: int, total: int) -> None:
        advance, before = tasks[name] if name in tasks else (ticks(name, total), 0)
        advance(done - before)
        tasks[name] = (advance, done)

    return report


class BuildTool(Tool["BuildReport"]):
    """Query the endpoint page by page and write a catalogue, a snapshot and a report; a rerun resumes."""

    name = "catalogue.build"
    command = "catalogue build"
    config_type = BuildToolConfig
    transient_progress = True  # a failed live query is then the only line left on the terminal
    config: BuildToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._chosen: list[PropertyTemplate] = []

    def load(self) -> None:

        self._chosen = resolve_templates(self.config.templates)

    # output() stays None: the build writes and resumes its own folder (catalogue_build.check_out judges it)

    def run(self, context: ToolContext) -> BuildReport:

        config = self.config
        with context.progress() as ticks:
            return build_catalogue(
                self._chosen,
                config.out,
                endpoint=config.endpoint,
                as_of=config.as_of,
                limit=config.per_template,
                timeout_s=config.timeout,
                progress=page_progress(ticks),
            )

    def present(self, result: BuildReport) -> list[str]:

        return build_lines(result, self.config.out, len(self._chosen))


class TemplatesToolConfig(BaseModel):
    """``chronoprobe catalogue templates``: no options."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class TemplatesTool(Tool[list["PropertyTemplate"]]):
    """List the shipped templates: what each selects and how many facts it gave on the stand-in."""

    name = "catalogue.templates"
    command = "catalogue templates"
    config_type = TemplatesToolConfig

    def run(self, context: ToolContext) -> list[PropertyTemplate]:

        return shipped_templates()

    def answer(self, result: list[PropertyTemplate]) -> Sequence[Answer]:

        highlight = ReprHighlighter()  # the heading as a console highlights it: numbers and brackets in colour
        lines: list[Answer] = []
        for template in result:
            stand_in = "" if template.stand_in_facts is None else f", {template.stand_in_facts} facts on the stand-in"
            heading = f"[bold]{template.name}[/] ({template.property}, category {template.category}{stand_in})"
            lines += [highlight(Text.from_markup(heading)), Text(f"  {template.description}")]
        closing = (
            f"files: {shipped_dir()}; build them all with `chronoprobe catalogue build --out DIR`, "
            "or some: `chronoprobe catalogue build NAME... --out DIR`"
        )
        return [*lines, Text(closing)]


class ReportToolConfig(BaseModel):
    """``chronoprobe catalogue report``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    folder: Annotated[Path, Cli(argument="DIR")]
    """A build folder (catalogue build --out)."""


class ReportTool(Tool["TableView"]):
    """Per template: subjects asked, facts kept, DyKnow facts merged, and why the others were refused."""

    name = "catalogue.report"
    command = "catalogue report"
    config_type = ReportToolConfig
    config: ReportToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._view: TableView | None = None

    def load(self) -> None:

        self._view = report_view(self.config.folder)

    def run(self, context: ToolContext) -> TableView:
        assert self._view is not None  # load() read it
        return self._view

    def answer(self, result: TableView) -> Sequence[Answer]:
        return [result]
