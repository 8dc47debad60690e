"""A config field and its flag, one rule for every command: a lens run's and a tool's alike.

A field is named as its flag: ``balanced_limit`` is ``--balanced-limit``. A flag that Python or pydantic
reserves as a name (``--from``: a keyword; ``--json``: ``BaseModel.json``) gets the trailing underscore of
PEP 8 (``from_``, ``json_``), which the flag drops. ``models`` is ``--model`` (repeatable: ``-m a -m b``), the
one field named in the plural, since it holds the parsed list. A declaration's ``input_options`` names only
what this rule cannot say: a positional argument's metavar (``dirs`` -> ``DIR``) and a ``bool`` offered as a
switch (``live`` -> ``--live``, where the rule's default is ``--live/--no-live``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from pydantic import BaseModel

__all__ = ["config_inputs", "flag_of", "option_of"]


def flag_of(field: str) -> str:
    """The flag a field is named as: ``--field-name``, a trailing ``_`` dropped; ``models`` is ``--model``."""
    return "--model" if field == "models" else "--" + field.removesuffix("_").replace("_", "-")


def option_of(field: str, input_options: Mapping[str, str]) -> str:
    """How a command names a field: its ``input_options`` entry (an argument's metavar, a switch), else its flag."""
    return input_options.get(field, flag_of(field)).split("/")[0]


def config_inputs(
    config: BaseModel,
    input_options: Mapping[str, str],
    outputs: Collection[str] = (),
    text_paths: Collection[str] = (),
) -> list[tuple[str, Path]]:
    """Every file or folder ``config`` reads, with the option naming it: its path fields but the ``outputs``, and
    its ``text_paths`` fields that hold an existing path (a text that may be a file, or a name or hub id)."""
    found: list[tuple[str, Path]] = []
    for field, value in config:
        if field in outputs:
            continue
        values = value if isinstance(value, (tuple, list)) else (value,)
        for item in values:
            if isinstance(item, Path):
                found.append((option_of(field, input_options), item))
            elif field in text_paths and isinstance(item, str) and Path(item).exists():
                found.append((option_of(field, input_options), Path(item)))
    return found
