"""``chronoprobe <lens> <command>`` for a tool (:mod:`chronoprobe.tool`), generated from its declaration.

The same generator as a lens run's (:mod:`chronoprobe.cli.lens_command`), read the tool's way: the
parameters are named after the config's fields (``Tool.from_options`` takes them so), ``--out`` is
a field like any other, ``--model`` is the config's ``model`` field when the tool ``takes_model``,
and the shared model options come when it has ``model_options``. The command runs the tool through
:func:`chronoprobe.runner.produce`, prints its :meth:`~chronoprobe.tool.Tool.answer` on stdout and its
:meth:`~chronoprobe.tool.Tool.present` lines on stderr. :func:`lens_group` makes a lens's whole group: its
``run`` and its tools' commands.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import typer

from chronoprobe.cli.deprecated import with_deprecated
from chronoprobe.cli.lens_command import Rules, config_options, lens_app
from chronoprobe.cli.model_options import DEFAULT_MODEL_OPTIONS, MODEL_OPTIONS, ModelOptions, with_model_options
from chronoprobe.cli.progress_display import announce, console, progress_ticks
from chronoprobe.lens import Lens
from chronoprobe.tool import Tool, tool_class, tool_names


def tool_command(tool: type[Tool[Any]]) -> Callable[..., None]:
    """The command of ``tool``, with the older spellings of its renamed options (``tool.renamed_options``)."""
    offered = config_options(tool, Rules(taken=frozenset(MODEL_OPTIONS), by_field=True, model_field=tool.takes_model))

    def command(**values: Any) -> None:
        from chronoprobe.runner import produce

        backend: ModelOptions = values.pop("backend", DEFAULT_MODEL_OPTIONS)
        say = functools.partial(console.print, highlight=False)  # a tool's lines carry rich markup
        made = tool.from_options(**values)
        result = produce(
            made,
            options=backend.backend(),
            cache=backend.cache,
            progress_display=progress_ticks,
            announce=announce,
            notice=say,
        )
        for line in made.answer(result):
            typer.echo(line)  # stdout: the command's output
        for line in made.present(result):
            say(line)

    parameters = [o.parameter for o in offered]
    if tool.model_options:
        keyword = inspect.Parameter.KEYWORD_ONLY
        parameters.append(inspect.Parameter("backend", keyword, annotation=ModelOptions, default=DEFAULT_MODEL_OPTIONS))
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]  # read by typer
    command.__doc__ = inspect.getdoc(tool)
    made: Callable[..., None] = with_model_options(*tool.omit_model_options)(command) if tool.model_options else command
    return with_deprecated(tool.renamed_options)(made)


def lens_group(lens: type[Lens[Any]]) -> typer.Typer:
    """``chronoprobe <lens>`` whole: its ``run`` and a command for each of its tools (the ``TOOLS`` entries
    named ``<lens>.<command>``, in name order), every one generated from its declaration."""
    group = lens_app(lens)
    for name in tool_names():
        owner, _, command = name.partition(".")
        if owner == lens.name:
            group.command(command)(tool_command(tool_class(name)))
    return group
