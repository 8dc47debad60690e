"""Entry point: ``chronoprobe <lens> <command>``.

Each lens (outdated, conflicts, recency, snapshot) registers a typer sub-app in
its own module. User errors print as one red line and exit with status 2.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys

import typer
from rich.console import Console
from rich.text import Text

from chronoprobe.errors import ChronoprobeError

try:  # recent typer vendors click; older typer uses click itself
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import ClickException, UsageError  # type: ignore[assignment]

app = typer.Typer(
    name="chronoprobe",
    help="Audit how language models handle time-sensitive knowledge.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)

# (module, attribute, command name); a missing module (a lens not built yet) is skipped.
_SUBAPPS = [
    ("chronoprobe.cli.outdated", "app", "outdated"),
    ("chronoprobe.cli.snapshot", "app", "snapshot"),
    ("chronoprobe.cli.conflicts", "app", "conflicts"),
    ("chronoprobe.cli.recency", "app", "recency"),
    ("chronoprobe.cli.editing", "app", "editing"),
    ("chronoprobe.cli.export", "app", "export"),
]
# (module, function, command name): single commands across lenses, registered the same way.
_COMMANDS = [
    ("chronoprobe.cli.results", "results", "results"),
    ("chronoprobe.cli.card", "card", "card"),
]


def _register() -> None:
    if app.registered_groups:  # already done (main() called twice in one process, as the tests do)
        return
    for module_name, attribute, name in _SUBAPPS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        app.add_typer(getattr(module, attribute), name=name)
    for module_name, function, name in _COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        app.command(name)(getattr(module, function))


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

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
    from rich.table import Table

    from chronoprobe.models.registry import KNOWN_SPECS

    table = Table(title="Model specs")
    table.add_column("spec")
    table.add_column("what it loads")
    for spec, description in KNOWN_SPECS:
        table.add_row(spec, description)
    Console().print(table)
    Console().print(
        "Any spec can be given a short display name for plots and tables: NAME=SPEC, "
        "e.g. qwen=hf:Qwen/Qwen2.5-0.5B-Instruct.",
        highlight=False,
    )


@app.command("prepare")
def prepare() -> None:
    """Convert the embedded models once into the local cache (run by setup)."""
    from chronoprobe.models.embedded import converted_gguf, gemma3_available, gemma3_gguf, minilm_dir, smollm2_gguf

    with err_console.status("converting SmolLM2-135M-Instruct (GGUF -> safetensors, once)"):
        folder, digest = converted_gguf(smollm2_gguf())
    err_console.print(f"SmolLM2-135M-Instruct ready in {folder} (gguf sha256 {digest[:12]})")
    if gemma3_available():
        with err_console.status("assembling and checking Gemma 3 270M, then converting it (once, about a minute)"):
            folder, digest = converted_gguf(gemma3_gguf())
        err_console.print(f"Gemma 3 270M ready in {folder} (gguf sha256 {digest[:12]}; Gemma Terms of Use)")
    else:
        err_console.print("Gemma 3 270M not installed (optional; ./setup.sh installs it), skipped")
    err_console.print(f"all-MiniLM-L6-v2 ready in {minilm_dir()}")


def _quiet_libraries() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module="transformers")


def main() -> None:
    _quiet_libraries()
    _register()
    try:
        status = app(standalone_mode=False)
    except UsageError as exc:
        # a bad option value: one line naming the option, like every other user error
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help text is already printed
            sys.exit(2)
        _print_error(" ".join(exc.format_message().split()))
        sys.exit(2)
    except ClickException as exc:
        _print_error(" ".join(exc.format_message().split()))
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(1)
    except ChronoprobeError as exc:
        _print_error(" ".join(str(exc).split()))
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted: finished model calls are cached; rerun the same command to resume")
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("CHRONOPROBE_DEBUG"):
            raise
        from chronoprobe.models.registry import strip_url_credentials

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


def _print_error(message: str) -> None:
    from chronoprobe.models.registry import strip_url_credentials  # a key in a model URL is never printed

    message = strip_url_credentials(message)
    err_console.print(Text.assemble(("error", "bold red"), f": {message}"), highlight=False, soft_wrap=True)


if __name__ == "__main__":
    main()
