"""Progress bars on a rich console: a live bar on a terminal, plain periodic lines anywhere else, and a spinner.

The commands draw their progress with these (``cli/console.py`` binds them to the CLI's
stderr console); a script gets the same bar for ``chronoprobe.run(..., progress=...)``::

    with progress_bar(Console(stderr=True)) as bar:
        chronoprobe.run("outdated", progress=task_progress(bar))
"""

from __future__ import annotations

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

from chronoprobe.progress_lines import ProgressLines, progress_every, slow_step_lines

__all__ = ["PlainProgress", "announce", "named_progress", "progress_bar", "task_progress"]


class PlainProgress(Progress):
    """Progress for a console that is not a terminal (a log file, a pipe, a CI log).

    A live bar would only be drawn once, at the end; this prints plain lines instead
    (:class:`chronoprobe.progress_lines.ProgressLines`), e.g. ``smollm2: 120/390 (31%) 00:42 elapsed,
    2.9/s, ETA 01:33``: at least every ``every`` seconds while a task runs, and once when it ends.
    """

    def __init__(self, console: Console, every: float) -> None:
        super().__init__(console=console, disable=True)
        self._lines = ProgressLines(lambda line: _print(console, line), every)
        self._ids: dict[TaskID, int] = {}

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
def progress_bar(console: Console, transient: bool = False) -> Iterator[Progress]:
    """A live bar on ``console`` when it is a terminal; plain periodic lines (``PlainProgress``) anywhere else.

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


def named_progress(bar: Progress) -> Callable[[str, int, int], None]:
    """A callback ``(name, done, total)`` for library code that reports how far each named step has come (a
    catalogue build's templates): the first call for a name adds its task to ``bar``, every call sets it."""
    tasks: dict[str, TaskID] = {}

    def advance(name: str, done: int, total: int) -> None:
        if name not in tasks:
            tasks[name] = bar.add_task(name, total=total)
        bar.update(tasks[name], completed=done)

    return advance


def announce(console: Console, message: str) -> AbstractContextManager[Any]:
    """A spinner with ``message`` while a slow step runs (a model load); off a terminal, plain lines.

    A log or a pipe shows no spinner: ``message ...`` once the step has taken a second
    (:func:`~chronoprobe.progress_lines.slow_step_lines`) and ``message: done in 8.3 s`` when it ends, so a
    load is never silent in a log; a step that is quick (or fails at once, in one error line) prints nothing.
    """
    if console.is_terminal:
        return console.status(message)
    return slow_step_lines(lambda line: _print(console, line), message)


def _print(console: Console, line: str) -> None:
    console.print(line, highlight=False, markup=False, soft_wrap=True)
