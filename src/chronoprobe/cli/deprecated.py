"""Older spellings of renamed options that 0.1.0 released, kept until 0.4.0: each still works, with a warning line.

``with_deprecated({"--limit": "--balanced-limit"})`` adds ``--limit`` to a command as a hidden option
of the same type as ``--balanced-limit``; given, it sets ``--balanced-limit`` and says so on stderr.
Both given on the command line with different values is a one-line error, whatever the values (the new
one at its default too); with the same value, the old one is only warned about. Applied outermost, over
any decorator that builds the signature. (The older Python keywords are :mod:`chronoprobe.renames`'.)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
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

CommandT = Callable[..., None]


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


def _given(parameter: str) -> bool:
    """The option was given on the command line (or from the environment), not left at its default."""
    context = get_current_context(silent=True)
    source = context.get_parameter_source(parameter) if context is not None else None
    return source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)


def with_deprecated(renames: dict[str, str]) -> Callable[[CommandT], CommandT]:
    """Keep each old spelling (``old -> new``) of a command's renamed options working, with a warning."""

    def decorate(command: CommandT) -> CommandT:
        if not renames:
            return command
        signature = inspect.signature(command, eval_str=True)
        by_option = {name: p for p in signature.parameters.values() for name in _spelled(p)}
        added = {old: _hidden(old, by_option[new]) for old, new in renames.items()}

        @functools.wraps(command)
        def with_old_spellings(**values: Any) -> None:
            for old, hidden in added.items():
                given = values.pop(hidden.name)
                if given is None or given == []:
                    continue
                new = by_option[renames[old]]
                if _given(new.name) and values.get(new.name) != given:
                    raise ConfigError(
                        f"{old}/{renames[old]}", f"give {renames[old]} only ({old} is its older spelling)"
                    )
                console.print(
                    f"warning: {old} is deprecated and removed in {SHIMS_REMOVED_IN}; use {renames[old]}",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )
                values[new.name] = given
            command(**values)

        parameters = [*signature.parameters.values(), *added.values()]
        with_old_spellings.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]  # read by typer
        with_old_spellings.__annotations__ = {p.name: p.annotation for p in parameters}
        return with_old_spellings

    return decorate
