"""What a command shows while it works: progress bars (plain lines off a terminal), spinners and notices."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from chronoprobe.progress import PROGRESS_EVERY_ENV as PROGRESS_EVERY_ENV  # the tests import it from here
from chronoprobe.progress import ProgressLines, line_if_slow, progress_every

console = Console(stderr=True)


class PlainProgress(Progress):
    """Progress for a console that is not a terminal (a log file, a pipe, a CI log).

    A live bar would only be drawn once, at the end; this prints plain lines instead
    (:class:`chronoprobe.progress.ProgressLines`), e.g. ``smollm2: 120/390 (31%) 00:42 elapsed,
    2.9/s, ETA 01:33``: at least every ``every`` seconds while a task runs, and once when it ends.
    """

    def __init__(self, console: Console, every: float) -> None:
        super().__init__(console=console, disable=True)
        self._lines = ProgressLines(self._print, every)
        self._ids: dict[TaskID, int] = {}

    def _print(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def add_task(
        self,
        description: str,
        start: bool = True,
        total: float | None = 100.0,
        completed: int = 0,
        visible: bool = True,
        **fields: Any,
    ) -> TaskID:
        task_id = super().add_task(
            description, start=start, total=total, completed=completed, visible=visible, **fields
        )
        self._ids[task_id] = self._lines.add(description, None if total is None else int(total))
        if completed:
            self._lines.advance(self._ids[task_id], completed)
        return task_id

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._lines.advance(self._ids[task_id], int(advance))

    def start(self) -> None:
        super().start()
        self._lines.__enter__()

    def stop(self) -> None:
        self._lines.close()  # every task that moved since its last line gets a final one
        super().stop()


@contextmanager
def progress_bar(transient: bool = False) -> Iterator[Progress]:
    """A live bar on a terminal; plain periodic lines (``PlainProgress``) anywhere else.

    ``transient`` erases the bar when it ends, so that an error raised inside (a failed
    live query) is the only line left on the terminal.
    """
    if not console.is_terminal:
        with PlainProgress(console, progress_every()) as plain:
            yield plain
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=transient,
    ) as progress:
        yield progress


def task_progress(bar: Progress) -> Callable[[str, int | None], Callable[[int], None]]:
    """A progress factory for library code: each call adds a task to ``bar`` (None: of unknown size) and returns
    its advance callback."""

    def factory(description: str, total: int | None) -> Callable[[int], None]:
        task = bar.add_task(description, total=total)
        return lambda k: bar.advance(task, k)

    return factory


@contextmanager
def progress_ticks(transient: bool = False) -> Iterator[Callable[[str, int], Callable[[int], None]]]:
    """A progress bar as the runner's progress factory (``chronoprobe.runner.execute(progress_display=...)``);
    ``transient`` as :func:`progress_bar`'s."""
    with progress_bar(transient) as bar:
        yield task_progress(bar)


def announce(message: str) -> AbstractContextManager[Any]:
    """A spinner with ``message`` while a slow step runs (a model load); off a terminal, a plain line.

    A log or a pipe shows no spinner; the line comes once the step has taken the progress interval
    (10 s), so a log never goes longer than that without a line, and a step that is quick (or
    fails at once, in one error line) prints nothing more.
    """
    if console.is_terminal:
        return console.status(message)
    return line_if_slow(print_plain, f"{message} ...", progress_every())


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
