"""``chronoprobe <group> <command>`` for a tool (:mod:`chronoprobe.contract.tool`), generated from its declaration.

The same generator as a lens run's (:mod:`chronoprobe.cli.lens_command`), read the tool's way: the
parameters are named after the config's fields (``Tool.from_options`` takes them so) and come in
field order, ``--out`` is a field like any other, ``--model`` is the config's ``model`` field when the
tool ``takes_model``, and the shared model options come when it has ``model_options``. The command
runs the tool through :func:`chronoprobe.contract.runner.produce`, shows its :meth:`~chronoprobe.contract.tool.Tool.answer`
on stdout and its :meth:`~chronoprobe.contract.tool.Tool.present` lines on stderr, and exits with its
:meth:`~chronoprobe.contract.tool.Tool.exit_status`. :func:`lens_group` makes a lens's whole group (its ``run``
and its tools' commands), :func:`tool_group` a group of tools that is not a lens.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from chronoprobe.cli.console import announce, console, progress_ticks
from chronoprobe.cli.deprecated import with_deprecated
from chronoprobe.cli.lens_command import Rules, config_options, lens_app
from chronoprobe.cli.model_options import DEFAULT_MODEL_OPTIONS, MODEL_OPTIONS, ModelOptions, with_model_options
from chronoprobe.contract.lens import Lens
from chronoprobe.contract.tool import GROUPS, TOOLS, Answer, Tool, tool_class
from chronoprobe.tables import TableView


def show_answer(answer: Sequence[Answer]) -> None:
    """A tool's output on stdout: plain lines as they are, a table with its closing lines, rich text, another
    renderable as a plain console draws it (it may choose its layout by the terminal's width; a line longer
    than the terminal is left whole for the terminal to wrap, never cut)."""
    out = Console(highlight=False, soft_wrap=True)
    for item in answer:
        if isinstance(item, str):
            typer.echo(item)
        elif isinstance(item, TableView):
            out.print(item.rich(), soft_wrap=False)
            for line in item.after:
                out.print(line)
        elif isinstance(item, Text):
            out.print(item)
        else:
            Console().print(item, crop=False)


def tool_command(tool: type[Tool[Any]]) -> Callable[..., None]:
    """The command of ``tool``, with the older spellings of its renamed options (``tool.renamed_options``)."""
    offered = config_options(tool, Rules(taken=frozenset(MODEL_OPTIONS), by_field=True, model_field=tool.takes_model))

    def command(**values: Any) -> None:
        from chronoprobe.contract.runner import produce

        backend: ModelOptions = values.pop("backend", DEFAULT_MODEL_OPTIONS)
        say = functools.partial(console.print, highlight=False, soft_wrap=True)  # a tool's lines carry rich markup
        made = tool.from_options(**values)
        result = produce(
            made,
            options=backend.backend(),
            cache=backend.cache,
            progress_display=functools.partial(progress_ticks, transient=tool.transient_progress),
            announce=announce,
            notice=say,
            engine=backend.engine,
        )
        show_answer(made.answer(result))
        for line in made.present(result):
            say(line)
        status = made.exit_status(result)
        if status:
            raise typer.Exit(status)

    keyword = inspect.Parameter.KEYWORD_ONLY  # typer tells an argument from its annotation, not its kind
    parameters = [o.parameter.replace(kind=keyword) for o in offered]
    if tool.model_options:
        parameters.append(inspect.Parameter("backend", keyword, annotation=ModelOptions, default=DEFAULT_MODEL_OPTIONS))
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]  # read by typer
    command.__doc__ = inspect.getdoc(tool)
    made: Callable[..., None] = with_model_options(*tool.omit_model_options)(command) if tool.model_options else command
    return with_deprecated(tool.renamed_options)(made)


def _add_tools(group: typer.Typer, owner: str) -> typer.Typer:
    """A command in ``group`` for each tool named ``<owner>.<command>``, in the order ``TOOLS`` lists them."""
    for name in TOOLS:
        prefix, _, command = name.partition(".")
        if prefix == owner and command:
            group.command(command)(tool_command(tool_class(name)))
    return group


def lens_group(lens: type[Lens[Any]]) -> typer.Typer:
    """``chronoprobe <lens>`` whole: its ``run`` and a command for each of its tools (the ``TOOLS`` entries
    named ``<lens>.<command>``), every one generated from its declaration."""
    return _add_tools(lens_app(lens), lens.name)


def tool_group(name: str) -> typer.Typer:
    """``chronoprobe <name>`` for a group of tools that is not a lens (:data:`chronoprobe.contract.tool.GROUPS`)."""
    return _add_tools(typer.Typer(help=GROUPS[name], no_args_is_help=True), name)
