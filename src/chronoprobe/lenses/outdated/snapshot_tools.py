"""``chronoprobe snapshot``: list, fetch, compare and inspect the outdated lens's gold-answer snapshots, as tools.

Each command is declared as a lens's tools are (:mod:`chronoprobe.contract.tool`): a config whose field
docstrings are the help text, the command generated from it and ``chronoprobe.produce("snapshot.show",
...)`` taking the same values. The views and the live fetch are
:mod:`chronoprobe.knowledge.snapshot_views`'; the tools take the options and hand back the tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from chronoprobe.contract.tool import Answer, Tool, ToolContext
from chronoprobe.errors import ChronoprobeError
from chronoprobe.knowledge.snapshot import SnapshotRef, shipped_dir, snapshot_path
from chronoprobe.knowledge.snapshot_views import diff_view, fact_view, fetch_snapshot, listing_view, snapshot_view
from chronoprobe.knowledge.types import Snapshot
from chronoprobe.knowledge.wikidata import WDQS_ENDPOINT
from chronoprobe.records.fields import OUTPUT, SWITCH, Cli
from chronoprobe.tables import TableView
from chronoprobe.values import HttpUrl

__all__ = [
    "DiffTool",
    "DiffToolConfig",
    "FetchResult",
    "FetchTool",
    "FetchToolConfig",
    "ListTool",
    "ListToolConfig",
    "ShowTool",
    "ShowToolConfig",
]

_FROZEN = ConfigDict(frozen=True, use_attribute_docstrings=True)


class _ViewTool(Tool[TableView]):
    """A command that reads snapshots and answers with one table on stdout; it writes nothing."""

    def answer(self, result: TableView) -> Sequence[Answer]:
        return [result]


class ListToolConfig(BaseModel):
    """``chronoprobe snapshot list``: it takes no options."""

    model_config = _FROZEN


class ListTool(_ViewTool):
    """List the snapshots available by name (yours and the shipped ones)."""

    name = "snapshot.list"
    command = "snapshot list"
    config_type = ListToolConfig

    def run(self, context: ToolContext) -> TableView:

        return listing_view()


class DiffToolConfig(BaseModel):
    """``chronoprobe snapshot diff``: every option, as the command takes it."""

    model_config = _FROZEN

    old: Annotated[SnapshotRef, Cli(argument="OLD")]
    """Older snapshot (name or file)."""
    new: Annotated[SnapshotRef, Cli(argument="NEW")]
    """Newer snapshot (name or file)."""
    statements: Annotated[bool, SWITCH] = False
    """Also list added/removed statements."""


class DiffTool(_ViewTool):
    """Show which facts' current answers changed between two snapshots."""

    name = "snapshot.diff"
    command = "snapshot diff"
    config_type = DiffToolConfig
    config: DiffToolConfig

    def run(self, context: ToolContext) -> TableView:

        return diff_view(self.config.old, self.config.new, statements=self.config.statements)


class ShowToolConfig(BaseModel):
    """``chronoprobe snapshot show``: every option, as the command takes it."""

    model_config = _FROZEN

    name: Annotated[SnapshotRef | None, Cli(argument="SNAPSHOT")] = None
    """Snapshot name or file (default: the shipped one)."""
    fact: str | None = None
    """Show every statement of this fact id."""


class ShowTool(_ViewTool):
    """Show a snapshot's current answers, or all statements of one fact."""

    name = "snapshot.show"
    command = "snapshot show"
    config_type = ShowToolConfig
    config: ShowToolConfig

    def run(self, context: ToolContext) -> TableView:

        name, fact = self.config.name, self.config.fact
        return snapshot_view(name) if fact is None else fact_view(name, fact)


class FetchToolConfig(BaseModel):
    """``chronoprobe snapshot fetch``: every option, as the command takes it."""

    model_config = _FROZEN

    endpoint: HttpUrl = WDQS_ENDPOINT
    """SPARQL endpoint (WDQS or a compatible mirror)."""
    catalogue: Path | None = None
    """Fact catalogue JSON (default: the shipped DyKnow one)."""
    limit: int | None = Field(default=None, ge=1)
    """Only the first N facts."""
    name: str | None = None
    """Snapshot name (default: wikidata-<today>)."""
    timeout: float = Field(default=30.0, ge=1.0)
    """Seconds per request."""
    output_dir: Annotated[Path | None, OUTPUT] = None
    """Where to save (default: the user snapshot directory)."""
    replace: Annotated[bool, SWITCH] = False
    """Overwrite an existing snapshot of the same name."""

    @field_validator("name")
    @classmethod
    def _snapshot_name(cls, value: str | None) -> str | None:
        """A name a snapshot can be saved under: a plain, printable, not overlong file name."""

        if value is not None:
            try:
                snapshot_path(value)
            except ChronoprobeError as exc:
                raise ValueError(f"{exc.where} {exc.problem}") from None
            if (shipped_dir() / f"{value}.json").is_file():  # saved under it, today's answers would stand in for it
                raise ValueError(f"{value!r} is a shipped snapshot's name; give the fetched one its own")
        return value


@dataclass(frozen=True)
class FetchResult:
    """What ``snapshot fetch`` saved: the snapshot and its file."""

    snapshot: Snapshot
    path: Path


class FetchTool(Tool[FetchResult]):
    """Query Wikidata now for every fact of the catalogue and save a new snapshot.

    A mostly empty answer (fewer than half of the facts with a dated statement)
    is an error and saves nothing; an existing snapshot is kept unless --replace.
    """

    name = "snapshot.fetch"
    command = "snapshot fetch"
    config_type = FetchToolConfig
    transient_progress = True
    config: FetchToolConfig

    def run(self, context: ToolContext) -> FetchResult:

        config = self.config
        snapshot, path = fetch_snapshot(
            endpoint=config.endpoint,
            catalogue=config.catalogue,
            limit=config.limit,
            name=config.name,
            timeout=config.timeout,
            output_dir=config.output_dir,
            replace=config.replace,
            progress_display=context.progress,
        )
        return FetchResult(snapshot=snapshot, path=path)

    def present(self, result: FetchResult) -> list[str]:
        answers = result.snapshot.answers
        statements = sum(len(answer.statements) for answer in answers.values())
        saved = f"saved {len(answers)} facts ({statements} dated statements) to {result.path}"
        warnings = [f"[yellow]warning[/] {fact_id}: {text}" for fact_id, text in result.snapshot.warnings.items()]
        return [saved, *warnings]
