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
]


def _register() -> None:
    for module_name, attribute, name in _SUBAPPS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        app.add_typer(getattr(module, attribute), name=name)


@app.callback()
def _root() -> None:
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


@app.command("prepare")
def prepare() -> None:
    """Convert the embedded models once into the local cache (run by setup)."""
    from chronoprobe.models.embedded import converted_gguf, minilm_dir, smollm2_gguf

    with err_console.status("converting SmolLM2-135M-Instruct (GGUF -> safetensors, once)"):
        folder, digest = converted_gguf(smollm2_gguf())
    err_console.print(f"SmolLM2-135M-Instruct ready in {folder} (gguf sha256 {digest[:12]})")
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
        app()
    except ChronoprobeError as exc:
        err_console.print(Text.assemble(("error", "bold red"), f": {exc}"), highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted: finished model calls are cached; rerun the same command to resume")
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("CHRONOPROBE_DEBUG"):
            raise
        first_line = (str(exc).strip().splitlines() or [""])[0][:300]
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


if __name__ == "__main__":
    main()
