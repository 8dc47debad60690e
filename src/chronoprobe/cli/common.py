"""Options and helpers shared by every lens's commands."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.models.registry import DEFAULT_MODEL, BackendOptions, load_backend
from chronoprobe.paths import default_call_cache

console = Console(stderr=True)

ModelOpt = Annotated[
    list[str] | None,
    typer.Option("--model", "-m", help="Model spec (repeatable): smollm2, hf:<id>, gguf:<file>, openai:<name>@<url>."),
]
DTypeOpt = Annotated[str, typer.Option(help="Weights dtype: auto, float32, bfloat16, float16.")]
DeviceOpt = Annotated[str, typer.Option(help="Device: auto, cpu, cuda, cuda:1 ...")]
BatchOpt = Annotated[int, typer.Option(help="Prompts per forward pass (hf) or requests per wave (openai).")]
ChatTemplateOpt = Annotated[
    bool | None,
    typer.Option("--chat-template/--no-chat-template", help="Apply the model's chat template (default: if it has one)."),
]
CacheOpt = Annotated[Path | None, typer.Option(help="SQLite call cache (default: in the user cache directory).")]
ApiModeOpt = Annotated[str, typer.Option(help="openai backend: 'chat' or 'completions' endpoint.")]
ConcurrencyOpt = Annotated[int, typer.Option(help="openai backend: requests in flight at once.")]


def backend_options(
    dtype: str = "auto",
    device: str = "auto",
    batch_size: int = 16,
    chat_template: bool | None = None,
    api_mode: str = "chat",
    concurrency: int = 4,
) -> BackendOptions:
    return BackendOptions(
        dtype=dtype,  # type: ignore[arg-type]
        device=device,
        batch_size=batch_size,
        chat_template=chat_template,
        api_mode=api_mode,  # type: ignore[arg-type]
        concurrency=concurrency,
    )


def open_cache(path: Path | None) -> CallCache:
    return CallCache(path or default_call_cache())


def load_models(specs: list[str] | None, options: BackendOptions, cache: CallCache) -> list[CachedModel]:
    """Load every requested model (the embedded default if none) behind the cache."""
    models = []
    for spec in specs or [DEFAULT_MODEL]:
        with console.status(f"loading {spec}"):
            models.append(CachedModel(load_backend(spec, options), cache))
    return models


@contextmanager
def progress_bar() -> Iterator[Progress]:
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    ) as progress:
        yield progress


def task_progress(bar: Progress) -> Callable[[str, int], Callable[[int], None]]:
    """A progress factory for library code: each call adds a task to ``bar`` and returns its advance callback."""

    def factory(description: str, total: int) -> Callable[[int], None]:
        task = bar.add_task(description, total=total)
        return lambda k: bar.advance(task, k)

    return factory
