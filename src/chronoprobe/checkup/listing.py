"""``chronoprobe lenses`` and ``chronoprobe docs``: what can run, and the pages that say how, as tools.

``lenses`` lists every registered lens (the built-in table and the ``chronoprobe.lenses`` entry points of the
installed packages), like ``inspect list tasks``: its question, its data, its size at each ``check`` budget and
where it comes from. ``docs`` prints a documentation page shipped in the package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict

from chronoprobe import plugins
from chronoprobe.contract.check_part import BUDGETS, check_part
from chronoprobe.contract.lens import Lens, lens_class
from chronoprobe.contract.tool import Answer, Tool, ToolContext
from chronoprobe.docs_pages import page_text, page_title, topics
from chronoprobe.errors import ChronoprobeError
from chronoprobe.records.fields import Cli, spelling
from chronoprobe.reports.lens_card import card_of

__all__ = ["DocsTool", "DocsToolConfig", "LensEntry", "LensesTool", "LensesToolConfig", "budget_text"]


class LensesToolConfig(BaseModel):
    """``chronoprobe lenses``: no options."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


@dataclass(frozen=True)
class LensEntry:
    """One registered lens as ``chronoprobe lenses`` lists it."""

    name: str
    origin: str
    """``built in (module:Class)`` or ``plug-in from <distribution> <version> (module:Class)``."""
    question: str = ""
    data: str = ""
    budgets: str = ""
    command: str = ""
    problem: str = ""
    """Why the lens cannot run (a plug-in that fails to import): its error; empty when it loads."""


def budget_text(sizes: dict[str, dict[str, Any]]) -> str:
    """``quick: sample 40, strategy zero-shot; standard: ...; full: everything``; a lens without sizes is skipped."""
    if not sizes:
        return "no budgets (chronoprobe check skips it)"
    parts = []
    for budget in BUDGETS:
        options = sizes.get(budget)
        if options is None:
            parts.append(f"{budget}: skipped")
            continue
        shown = [f"{name.replace('_', '-')} {_value(value)}" for name, value in options.items() if name != "persuasion"]
        parts.append(f"{budget}: {', '.join(shown) or 'every item'}")
    return "; ".join(parts)


def _value(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def _entry(name: str) -> LensEntry:
    plugin = plugins.plugins().get(name)
    target = plugin.target if plugin is not None else plugins.LENSES.get(name, "?")
    origin = f"plug-in from {plugin.origin} ({target})" if plugin is not None else f"built in ({target})"
    try:
        cls: type[Lens[Any]] = lens_class(name)
    except ChronoprobeError as exc:  # a plug-in that does not import is listed with its error, not hidden
        return LensEntry(name, origin, problem=str(exc))
    command = f"chronoprobe {name} {next(iter(spelling(cls.config_type).command.aliases), 'run')}"
    card = card_of(cls)
    return LensEntry(name, origin, card.question, card.about, budget_text(check_part(cls).sizes), command)


class LensesTool(Tool[list[LensEntry]]):
    """List the lenses that can run: each one's question, data, size per check budget, and where it comes from."""

    name = "lenses"
    command = "lenses"
    config_type = LensesToolConfig

    def run(self, context: ToolContext) -> list[LensEntry]:

        return [_entry(name) for name in plugins.names()]

    def answer(self, result: list[LensEntry]) -> Sequence[Answer]:

        lines: list[Answer] = []
        for entry in result:
            lines.append(f"{entry.name}: {entry.question or entry.problem}")
            if entry.problem and entry.question:
                lines.append(f"  cannot run: {entry.problem}")
            for label, value in (("data", entry.data), ("budgets", entry.budgets), ("run", entry.command)):
                if value:
                    lines.append(f"  {label}: {value}")
            lines.append(f"  from: {entry.origin}")
        lines.append(
            f"{len(result)} lenses; `chronoprobe check` runs every one at a budget's size; a package adds one with "
            'a "chronoprobe.lenses" entry point (`chronoprobe docs architecture`)'
        )
        return lines


class DocsToolConfig(BaseModel):
    """``chronoprobe docs``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    topic: Annotated[str | None, Cli(argument="TOPIC")] = None
    """The page to print (check, outdated, statistics ...); none: list the pages."""


class DocsTool(Tool[str]):
    """Print a documentation page shipped with chronoprobe (the same pages as a checkout's), or list them."""

    name = "docs"
    command = "docs"
    config_type = DocsToolConfig
    config: DocsToolConfig

    def check_inputs(self) -> None:

        if self.config.topic is not None:
            page_text(self.config.topic)  # an unknown topic: one line naming the known ones

    def run(self, context: ToolContext) -> str:

        if self.config.topic is not None:
            return page_text(self.config.topic).rstrip("\n")
        listed = [f"{topic:<18} {page_title(topic)}" for topic in topics()]
        return "\n".join([*listed, "print one with `chronoprobe docs TOPIC`"])

    def answer(self, result: str) -> Sequence[Answer]:

        return [result]
