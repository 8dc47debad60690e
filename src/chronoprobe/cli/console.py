"""What a command shows while it works: progress bars (plain lines off a terminal), spinners and notices, on the
CLI's console (stderr); the bars themselves are :mod:`chronoprobe.progress_bars`'."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.text import Text

from chronoprobe import progress_bars as bars
from chronoprobe.progress_bars import task_progress

__all__ = [
    "announce",
    "console",
    "load_ticks",
    "print_plain",
    "progress_bar",
    "progress_ticks",
    "show_notices",
    "task_progress",
]

console = Console(stderr=True)


@contextmanager
def progress_bar(transient: bool = False) -> Iterator[Progress]:
    """:func:`chronoprobe.progress_bars.progress_bar` on the CLI's console (stderr)."""
    with bars.progress_bar(console, transient) as bar:
        yield bar


@contextmanager
def progress_ticks(transient: bool = False) -> Iterator[Callable[[str, int], Callable[[int], None]]]:
    """A progress bar as the runner's progress factory (``chronoprobe.contract.runner.produce(progress_display=...)``);
    ``transient`` as :func:`progress_bar`'s."""
    with progress_bar(transient) as bar:
        yield task_progress(bar)


@contextmanager
def load_ticks() -> Iterator[Callable[[str, int | None], Callable[[int], None]]]:
    """The runner's load display (``produce(load_display=...)``): a transient bar, opened only when a step of the
    data's load asks for one (a live query, whose size may be unknown), gone when the load ends."""
    with ExitStack() as opened:
        bar: Progress | None = None

        def factory(description: str, total: int | None) -> Callable[[int], None]:
            nonlocal bar
            if bar is None:
                bar = opened.enter_context(progress_bar(transient=True))
            return task_progress(bar)(description, total)

        yield factory


def announce(message: str) -> AbstractContextManager[Any]:
    """:func:`chronoprobe.progress_bars.announce` on the CLI's console: a spinner, or off a terminal a plain line."""
    return bars.announce(console, message)


def print_plain(line: str) -> None:
    """A line as it is (no markup, no highlighting) on the CLI console: the plan line."""
    console.print(line, highlight=False, markup=False, soft_wrap=True)


class _NoticeHandler(logging.Handler):
    """Prints a library notice (e.g. a Retry-After wait) as one line on the CLI console, above any progress bar."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = Text.assemble(("notice", "yellow"), f": {record.getMessage()}")
            console.print(line, highlight=False, soft_wrap=True)
        except Exception:  # a notice must never break the command
            self.handleError(record)


def show_notices() -> None:
    """Render the retry policy's wait notices (logger ``chronoprobe.retry``) on the console; idempotent."""
    notices = logging.getLogger("chronoprobe.retry")
    if not any(isinstance(h, _NoticeHandler) for h in notices.handlers):
        notices.addHandler(_NoticeHandler(logging.WARNING))
    notices.setLevel(logging.WARNING)


show_notices()  # every command module imports this one
