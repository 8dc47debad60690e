"""``chronoprobe history DIR...`` as a tool: a model's audits across gold snapshots, and what the world's changes did.

Declared as every tool is (:mod:`chronoprobe.contract.tool`); the work is :mod:`chronoprobe.lenses.outdated.history`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict

from chronoprobe.contract.runner import named_folder
from chronoprobe.contract.tool import Answer, Tool, ToolContext
from chronoprobe.lenses.outdated.history import HISTORY_KIND, change_lines, history_view, read_history, write_history
from chronoprobe.records.fields import SWITCH, Cli
from chronoprobe.records.publish import Output, ResultFolder

if TYPE_CHECKING:
    from chronoprobe.lenses.outdated.history import History

__all__ = ["HistoryTool", "HistoryToolConfig"]


class HistoryToolConfig(BaseModel):
    """``chronoprobe history``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    dirs: Annotated[tuple[Path, ...], Cli(argument="DIR")]
    """Check folders, `outdated run` folders, or folders holding them (searched three levels down)."""
    out: Path | None = None
    """Where to write history.md, history.json and history.png: a folder (default: a new
    results/history/<model>-<timestamp>)."""
    only_model: tuple[str, ...] = ()
    """Only these models: their names or specs in the runs (repeatable)."""
    wide: Annotated[bool, SWITCH] = False
    """Draw the whole table at its own width however wide the terminal (by default it fits the terminal)."""


class HistoryTool(Tool["History"]):
    """Up-to-date, outdated and irrelevant shares by snapshot date, and the gold changes that turned answers outdated."""

    name = "history"
    command = "history"
    config_type = HistoryToolConfig
    config: HistoryToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._found: History | None = None
        self._folder: Path | None = None

    def check_inputs(self) -> None:

        # read first: the default folder is named after the models found (and a bad DIR is named before --out)
        self._found = read_history(self.config.dirs, self.config.only_model)

    def folder(self) -> Path:
        """``--out``, else a new ``results/history/<model>-<timestamp>`` named after the models found."""
        if self._folder is None:
            names = [point.name for point in self._history().points]  # named_folder keeps each once
            self._folder = self.config.out or named_folder(Path("results") / HISTORY_KIND, "", names)
        return self._folder

    def output(self) -> Output:

        return Output("--out", self.folder(), ResultFolder(HISTORY_KIND))

    def run(self, context: ToolContext) -> History:
        found = self._history()
        for warning in found.warnings:
            context.notice(f"[yellow]warning[/]: {warning}")
        return found

    def write(self, folder: Path, result: History) -> None:

        write_history(folder, result)

    def answer(self, result: History) -> Sequence[Answer]:

        return [history_view(result, wide=self.config.wide)]

    def present(self, result: History) -> list[str]:

        return [*change_lines(result), f"history: {self.folder() / 'history.md'}"]

    def _history(self) -> History:
        if self._found is None:  # the runner reads it in check_inputs()
            self.check_inputs()
        assert self._found is not None
        return self._found
