"""The commands that read every lens's result folders, as tools: ``chronoprobe card`` (more join them here).

Each is declared as a lens's tools are (:mod:`chronoprobe.tool`): a config whose field docstrings are
the help text, the command generated from it and ``chronoprobe.produce("card", ...)`` taking the same
values. What they do is :mod:`chronoprobe.reports`'; the tools only take the options.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from chronoprobe.runlog import Run
from chronoprobe.tool import Tool, ToolContext

__all__ = ["CardTool", "CardToolConfig"]


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
