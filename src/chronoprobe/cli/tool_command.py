"""``chronoprobe <group> <command>``, generated from the command's declaration: every command, a lens run too.

Every command is a :class:`~chronoprobe.contract.tool.Tool` (a lens's ``run`` is its
:class:`~chronoprobe.contract.lens_run.LensRun`), and one generator makes its parameters
(:mod:`chronoprobe.cli.generate`). The command builds the tool from its values
(:meth:`~chronoprobe.contract.tool.Tool.from_options`) and runs it through the one runner
(:func:`chronoprobe.contract.runner.produce`) with the CLI's displays: a live query's progress while the data
loads, the notices and the plan line, a spinner per model load, the progress bars. It shows the tool's
:meth:`~chronoprobe.contract.tool.Tool.answer` on stdout and its :meth:`~chronoprobe.contract.tool.Tool.present`
lines on stderr, and exits with its :meth:`~chronoprobe.contract.tool.Tool.exit_status`. :func:`lens_group` makes
a lens's whole group (its ``run`` and its tools' commands), :func:`tool_group` a group of tools that is not a lens.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from chronoprobe.cli.console import announce, console, load_ticks, progress_ticks
from chronoprobe.cli.deprecated import given_on_the_command_line, older_spellings, take_older_spellings
from chronoprobe.cli.generate import ConfigOption, check_arguments, config_options, model_options
from chronoprobe.cli.model_options import MODEL_OPTIONS, ModelOptions
from chronoprobe.contract.lens import Lens
from chronoprobe.contract.lens_run import lens_tool
from chronoprobe.contract.runner import produce
from chronoprobe.contract.tool import GROUPS, TOOLS, Answer, RunSettings, Tool, config_error, tool_class
from chronoprobe.plugins import Plugin, unloadable
from chronoprobe.records.fields import spelling
from chronoprobe.tables import TableView

__all__ = ["lens_app", "lens_group", "plugin_stub_app", "show_answer", "tool_command", "tool_group"]


def show_answer(answer: Sequence[Answer]) -> None:
    """A tool's output on stdout: plain lines as they are, a table with its closing lines, rich text, another
    renderable as a plain console draws it (it may choose its layout by the terminal's width; a line longer
    than the terminal is left whole for the terminal to wrap, never cut)."""
    out = Console(highlight=False, soft_wrap=True)
    for item in answer:
        if isinstance(item, str):
            typer.echo(item)
        elif isinstance(item, TableView):
            _show_table(out, item)
        elif isinstance(item, Text):
            out.print(item)
        else:
            Console().print(item, crop=False)


_UNBOUNDED = 10_000
"""The width a ``wide`` table is drawn in: its own."""


def _show_table(out: Console, view: TableView) -> None:
    """A table with its lines before and after, fitted to the terminal's width (words wrapped, never broken), or
    drawn whole at its own width when it is ``wide``."""
    fitted = view.fitted(out.width)
    for line in fitted.before:
        out.print(line, soft_wrap=False)
    if fitted.wide:
        Console(highlight=False, width=_UNBOUNDED, file=out.file).print(fitted.rich())
    else:
        out.print(fitted.rich(), soft_wrap=False)
    for line in fitted.after:
        out.print(line, soft_wrap=fitted.wide)


def tool_command(tool: type[Tool[Any]]) -> Callable[..., None]:
    """The command of ``tool``: its config's options, the model options when it loads models (the shared ones but
    those its config's ``cli`` omits, and a backend of another package's own), and the older spellings of its renamed
    options (its config's ``cli.renamed_options``), kept until 0.4.0: one generator makes them all
    (:mod:`chronoprobe.cli.generate`), and the command's signature is made once, here, for typer to read."""
    offered, declared = config_options(tool), spelling(tool.config_type).command
    spelled = {o.field for o in offered} | {
        old.removeprefix("--").replace("-", "_") for old in declared.renamed_options
    }
    taken = spelled | {"model", "help"}  # --model/-m and --help: a backend's option of that name is not offered
    loading = model_options(declared.omit_model_options, taken) if tool.model_options else []
    keyword = inspect.Parameter.KEYWORD_ONLY  # typer tells an argument from its annotation, not its kind
    parameters = [o.parameter.replace(kind=keyword) for o in [*offered, *loading]]
    older = older_spellings(declared.renamed_options, parameters)

    def command(**values: Any) -> None:
        take_older_spellings(older, values)
        backend = _model_options(loading, values)
        # a tool's lines carry rich markup; a tool that says paragraphs has them wrapped between words
        say = functools.partial(console.print, highlight=False, soft_wrap=not tool.present_wraps)
        check_arguments(tool, offered, values)
        made = tool.from_options(**values)
        settings = RunSettings(
            options=backend.backend(),
            cache=backend.cache,
            progress_display=functools.partial(progress_ticks, transient=tool.transient_progress),
            load_display=load_ticks,
            announce=announce,
            notice=say,
            engine=backend.engine,
        )
        result = produce(made, settings)
        show_answer(made.answer(result))
        for line in made.present(result):
            say(line)
        status = made.exit_status(result)
        if status:
            raise typer.Exit(status)

    command.__signature__ = inspect.Signature([*parameters, *(o.parameter for o in older)])  # type: ignore[attr-defined]  # read by typer
    command.__doc__ = inspect.getdoc(tool)
    return command


def _model_options(loading: list[ConfigOption], values: dict[str, Any]) -> ModelOptions:
    """The model options out of ``values`` (popped): the shared ones as given or at their defaults, a backend's own
    only when given on the command line (a backend's default is its own, not another's)."""
    chosen: dict[str, Any] = {}
    for option in loading:
        value = values.pop(option.field)
        if option.field in MODEL_OPTIONS or given_on_the_command_line(option.field):
            chosen[option.field] = value
    try:
        return ModelOptions(**chosen)
    except ValidationError as exc:  # checked by typer already; named as the flag all the same
        raise config_error(exc, {}, "model options", ModelOptions) from None


def lens_app(lens: type[Lens[Any]]) -> typer.Typer:
    """``chronoprobe <lens>``: a group holding the lens's ``run`` (and its other names, its config's ``cli.aliases``)."""
    run = lens_tool(lens)
    declared = spelling(run.config_type).command
    summary = declared.help or (inspect.getdoc(lens) or f"The {lens.name} lens.").splitlines()[0]
    group = typer.Typer(help=summary, no_args_is_help=True)
    group.command("run")(tool_command(run))
    for alias, help_line in declared.aliases.items():
        group.command(alias, help=help_line)(tool_command(run))
    return group


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


def plugin_stub_app(plugin: Plugin, *, check: bool) -> typer.Typer:
    """``chronoprobe <plug-in>`` as ``chronoprobe --help`` lists it: from its entry point, nothing imported.

    With ``check``, what can be seen without running its code (a missing module, a syntax error, a
    missing attribute) marks it "(plug-in, not loaded)". Its real group is made only when it is the
    command run (``cli/main.py``).
    """
    reason = unloadable(plugin) if check else None
    if reason is not None:
        summary = f"(plug-in, not loaded) {plugin.origin}: {reason}"
    else:
        summary = f"{plugin.summary or 'A lens'} (plug-in from {plugin.origin})"
    return typer.Typer(help=summary, no_args_is_help=True)
