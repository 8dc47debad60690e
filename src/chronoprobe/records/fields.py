"""A config field and its flag, one rule for every command: a lens run's and a tool's alike.

A field is named as its flag: ``balanced_limit`` is ``--balanced-limit``. A flag that Python or pydantic
reserves as a name (``--from``: a keyword; ``--json``: ``BaseModel.json``) gets the trailing underscore of
PEP 8 (``from_``, ``json_``), which the flag drops. ``models`` is ``--model`` (repeatable: ``-m a -m b``), the
one field named in the plural, since it holds the parsed list.

What the name cannot say is in the field's own declaration, a :class:`Cli` marker pydantic keeps in its metadata::

    dirs: Annotated[tuple[Path, ...], Cli(argument="DIR")]   # a positional argument, DIR...
    live: Annotated[bool, SWITCH] = False                   # --live (a bool is --x/--no-x without it)
    persuasion: Annotated[PersuasionConfig, INTERNAL] = ...  # not offered (set from other options, or Python)
    snapshot: Annotated[str, TEXT_PATH] = "dyknow"           # a text that may name a file the run reads
    save_edited: Annotated[Path | None, OUTPUT] = None       # a path the run writes, not one it reads

and what is the command's rather than one field's is its config's ``cli`` (a :class:`Command`: the group's help
line, the run's other names, the model options it leaves off, the older spellings of renamed flags).
:func:`spelling` reads both, once per config class, for the one generator (``cli/generate.py``), for the inputs
and outputs the runner checks, and for the errors that name an option.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

__all__ = [
    "INTERNAL",
    "OUTPUT",
    "SWITCH",
    "TEXT_PATH",
    "Cli",
    "Command",
    "Spelling",
    "config_inputs",
    "flag_of",
    "option_of",
    "spelling",
]


@dataclass(frozen=True)
class Cli:
    """How a field's command offers it, beyond its name (markers of one field combine)."""

    argument: str = ""
    """A positional argument, named by this metavar (``DIR``, ``DATASET``); positional arguments come in the
    config's field order."""
    switch: bool = False
    """A ``bool`` offered as ``--x`` alone (without it: ``--x/--no-x``)."""
    internal: bool = False
    """Not offered by the command (set from another option, or only from Python); any other field its command
    cannot offer is an error when the command is made."""
    text_path: bool = False
    """A text that may hold a path (a file, or a name or hub id): an existing path counts as an input."""
    output: bool = False
    """A path the command writes besides its report folder or ``--out`` (``--save-edited``), rather than reads."""

    def merged(self, other: Cli) -> Cli:
        return Cli(
            argument=self.argument or other.argument,
            switch=self.switch or other.switch,
            internal=self.internal or other.internal,
            text_path=self.text_path or other.text_path,
            output=self.output or other.output,
        )


SWITCH = Cli(switch=True)
INTERNAL = Cli(internal=True)
TEXT_PATH = Cli(text_path=True)
OUTPUT = Cli(output=True)


@dataclass(frozen=True)
class Command:
    """What a config's command declares beyond its fields: its config's ``cli`` class variable."""

    help: str = ""
    """A lens's ``chronoprobe <lens> --help`` line (empty: the first line of the lens's docstring)."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """A lens's other names of ``run`` (``recency eval``, its first name) -> the help line each shows."""
    omit_model_options: tuple[str, ...] = ()
    """The shared model options its command leaves off (``sampler`` for greedy decoding, ``engine`` ...)."""
    renamed_options: Mapping[str, str] = field(default_factory=dict)
    """Options renamed for one meaning per flag, old spelling (one a release had) -> new: the old one still works
    until 0.4.0 (``cli/deprecated.py``)."""


@dataclass(frozen=True)
class Spelling:
    """A config's command line: each field's :class:`Cli` markers and the config's :class:`Command`."""

    fields: Mapping[str, Cli]
    command: Command

    def _having(self, marked: str) -> frozenset[str]:
        return frozenset(name for name, cli in self.fields.items() if getattr(cli, marked))

    @functools.cached_property
    def arguments(self) -> tuple[str, ...]:
        """The positional arguments, in field order."""
        return tuple(name for name, cli in self.fields.items() if cli.argument)

    @functools.cached_property
    def internal(self) -> frozenset[str]:
        return self._having("internal")

    @functools.cached_property
    def switches(self) -> frozenset[str]:
        return self._having("switch")

    @functools.cached_property
    def text_paths(self) -> frozenset[str]:
        return self._having("text_path")

    @functools.cached_property
    def outputs(self) -> frozenset[str]:
        return self._having("output")

    def option(self, name: str) -> str:
        """How the command names a field: an argument by its metavar, anything else by its flag."""
        cli = self.fields.get(name)
        return cli.argument if cli is not None and cli.argument else flag_of(name)


def field_cli(info: FieldInfo) -> Cli:
    """A field's :class:`Cli` markers, combined (none: the rule alone)."""
    found = Cli()
    for item in info.metadata:
        if isinstance(item, Cli):
            found = found.merged(item)
    return found


_LEGACY: dict[type[BaseModel], Spelling] = {}
"""Config class -> the spelling a lens plug-in declared for it as 0.2.0's class attributes (``Lens.input_options``
...), taken until 0.4.0 (:func:`declare_legacy`)."""


@functools.cache
def spelling(config_type: type[BaseModel]) -> Spelling:
    """How ``config_type``'s command spells it (read once per class; a derived class keeps its base's)."""
    legacy = next((_LEGACY[base] for base in config_type.__mro__ if base in _LEGACY), None)
    if legacy is not None:
        own = {name: field_cli(info) for name, info in config_type.model_fields.items()}
        merged = {name: own[name].merged(legacy.fields.get(name, Cli())) for name in own}
        return Spelling(merged, legacy.command)
    command = getattr(config_type, "cli", Command())
    if not isinstance(command, Command):
        raise TypeError(f"{config_type.__name__}.cli is {command!r}, not a chronoprobe.records.fields.Command")
    return Spelling({name: field_cli(info) for name, info in config_type.model_fields.items()}, command)


def declare_legacy(config_type: type[BaseModel], fields: Mapping[str, Cli], command: Command) -> None:
    """Take a spelling declared outside ``config_type`` (a lens plug-in's 0.2.0 class attributes) for it and every
    config derived from it."""
    _LEGACY[config_type] = Spelling(dict(fields), command)
    spelling.cache_clear()


def flag_of(name: str) -> str:
    """The flag a field is named as: ``--field-name``, a trailing ``_`` dropped; ``models`` is ``--model``."""
    return "--model" if name == "models" else "--" + name.removesuffix("_").replace("_", "-")


def option_of(config_type: type[BaseModel], name: str) -> str:
    """How ``config_type``'s command names a field: an argument's metavar, else its flag."""
    return spelling(config_type).option(name)


def config_inputs(config: BaseModel, outputs: frozenset[str] = frozenset()) -> list[tuple[str, Path]]:
    """Every file or folder ``config`` reads, with the option naming it: its path fields but its outputs (and the
    ``outputs`` given), and its text-path fields that hold an existing path (a name or hub id otherwise)."""
    spelled = spelling(type(config))
    skipped = spelled.outputs | outputs
    found: list[tuple[str, Path]] = []
    for name, value in config:
        if name in skipped:
            continue
        values: tuple[Any, ...] | list[Any] = value if isinstance(value, (tuple, list)) else (value,)
        for item in values:
            if isinstance(item, Path):
                found.append((spelled.option(name), item))
            elif name in spelled.text_paths and isinstance(item, str) and Path(item).exists():
                found.append((spelled.option(name), Path(item)))
    return found
