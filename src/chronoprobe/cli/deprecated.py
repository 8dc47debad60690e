"""Older spellings of renamed options that 0.1.0 released, kept until 0.4.0: each still works, with a warning line.

``older_spellings({"--limit": "--balanced-limit"}, parameters)`` gives ``--limit`` as a hidden option of the same
type as ``--balanced-limit``, for the command to offer beside it; ``take_older_spellings`` (first thing the command
does) makes one given set ``--balanced-limit``, and says so on stderr. Both given on the command line with
different values is a one-line error, whatever the values (the new one at its default too); with the same value,
the old one is only warned about. (The older Python keywords are :mod:`chronoprobe.renames`'.)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

import typer

from chronoprobe.cli.console import console
from chronoprobe.errors import ConfigError
from chronoprobe.version import SHIMS_REMOVED_IN

try:  # recent typer vendors click
    from typer._click.core import ParameterSource
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.core import ParameterSource  # type: ignore[assignment]  # older typer: the same names from click
    from click.globals import get_current_context  # type: ignore[no-redef]  # older typer: the same function


def _spelled(parameter: inspect.Parameter) -> list[str]:
    """The option names of a parameter declared as ``Annotated[T, typer.Option(...)]``."""
    if get_origin(parameter.annotation) is not Annotated:
        return []
    found = [m for m in get_args(parameter.annotation)[1:] if hasattr(m, "param_decls")]
    # in Annotated, typer takes the first positional (its default) as the first spelling
    decls = [d for m in found for d in ([m.default] if isinstance(m.default, str) else []) + list(m.param_decls or ())]
    names = [n for decl in decls for n in str(decl).split("/") if n.startswith("-")]
    return names or [f"--{parameter.name.replace('_', '-')}"]


def _hidden(old: str, parameter: inspect.Parameter) -> inspect.Parameter:
    """``old`` as a hidden option of ``parameter``'s type and bounds, not set by default."""
    value_type, *metadata = get_args(parameter.annotation)
    bounds = {k: getattr(m, k) for m in metadata for k in ("min", "max") if getattr(m, k, None) is not None}
    declared = typer.Option(old, hidden=True, help=f"Deprecated: use {_spelled(parameter)[0]}.", **bounds)
    return inspect.Parameter(
        f"deprecated_{old.removeprefix('--').replace('-', '_')}",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Annotated[value_type | None, declared],
        default=None,
    )


def given_on_the_command_line(parameter: str) -> bool:
    """The option was given on the command line (or from the environment), not left at its default."""
    context = get_current_context(silent=True)
    source = context.get_parameter_source(parameter) if context is not None else None
    return source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)


@dataclass(frozen=True)
class OlderSpelling:
    """One older spelling offered as a hidden option: ``old`` for the option whose parameter is ``new``."""

    old: str
    new: str
    """The new spelling, as the warning names it."""
    parameter: inspect.Parameter
    """The hidden option's parameter."""
    target: str
    """The parameter the new spelling sets."""


def older_spellings(renames: Mapping[str, str], parameters: Sequence[inspect.Parameter]) -> list[OlderSpelling]:
    """Each old spelling (``old -> new``) of a command's renamed options as a hidden option of the new one's type."""
    by_option = {name: p for p in parameters for name in _spelled(p)}
    return [OlderSpelling(old, new, _hidden(old, by_option[new]), by_option[new].name) for old, new in renames.items()]


def take_older_spellings(older: Sequence[OlderSpelling], values: dict[str, Any]) -> None:
    """Move each older spelling given into its new option's value (popping the hidden ones), with a warning line;
    both given on the command line with different values: a ConfigError naming both."""
    for spelling in older:
        given = values.pop(spelling.parameter.name)
        if given is None or given == []:
            continue
        if given_on_the_command_line(spelling.target) and values.get(spelling.target) != given:
            raise ConfigError(
                f"{spelling.old}/{spelling.new}", f"give {spelling.new} only ({spelling.old} is its older spelling)"
            )
        console.print(
            f"warning: {spelling.old} is deprecated and removed in {SHIMS_REMOVED_IN}; use {spelling.new}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        values[spelling.target] = given
