"""A lens plug-in's command line as 0.2.0 declared it, on the lens class: still taken until 0.4.0, with a warning.

0.2.0 released the class attributes ``input_options``, ``arguments``, ``internal_fields``, ``text_paths``,
``output_fields``, ``unused_model_options``, ``renamed_options``, ``command_help`` and ``command_aliases`` on
``Lens``. A lens now says them in its config (:mod:`chronoprobe.records.fields`: a field's ``Cli`` markers, the
config's ``cli``); a plug-in that still sets them on its class has them read into its config's spelling.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chronoprobe.records.fields import Cli, Command, declare_legacy
from chronoprobe.renames import warn_deprecated
from chronoprobe.version import SHIMS_REMOVED_IN

__all__ = ["LEGACY_ATTRIBUTES", "take_legacy_spelling"]

LEGACY_ATTRIBUTES = (
    "input_options",
    "arguments",
    "internal_fields",
    "text_paths",
    "output_fields",
    "unused_model_options",
    "renamed_options",
    "command_help",
    "command_aliases",
)


def _fields(lens: type[Any]) -> dict[str, Cli]:
    """The per-field attributes as markers: an ``input_options`` entry names an argument's metavar or a switch."""
    arguments: tuple[str, ...] = getattr(lens, "arguments", ())
    spelled: dict[str, str] = getattr(lens, "input_options", {})
    marks: dict[str, Cli] = {}

    def mark(name: str, cli: Cli) -> None:
        marks[name] = marks.get(name, Cli()).merged(cli)

    for name in arguments:
        mark(name, Cli(argument=spelled.get(name, name.upper())))
    for name in set(spelled) - set(arguments):
        mark(name, Cli(switch=True))
    for attribute, cli in (("internal_fields", Cli(internal=True)), ("text_paths", Cli(text_path=True))):
        for name in getattr(lens, attribute, ()):
            mark(name, cli)
    for name in getattr(lens, "output_fields", ()):
        mark(name, Cli(output=True))
    return marks


def take_legacy_spelling(lens: type[Any]) -> None:
    """Read a lens class's 0.2.0 command-line attributes into its config's spelling, warning once; nothing when it
    sets none."""
    declared = [name for name in LEGACY_ATTRIBUTES if name in vars(lens)]
    config_type = getattr(lens, "config_type", None)
    if not declared or not (isinstance(config_type, type) and issubclass(config_type, BaseModel)):
        return
    warn_deprecated(
        f"{lens.__name__}: the Lens attributes {', '.join(declared)} are deprecated and removed in "
        f"{SHIMS_REMOVED_IN}; declare them on its config (chronoprobe.records.fields: Cli markers, cli = Command(...))"
    )
    command = Command(
        help=getattr(lens, "command_help", ""),
        aliases=dict(getattr(lens, "command_aliases", {})),
        omit_model_options=tuple(sorted(getattr(lens, "unused_model_options", ()))),
        renamed_options=dict(getattr(lens, "renamed_options", {})),
    )
    declare_legacy(config_type, _fields(lens), command)
