"""Progress as plain lines: for logs, pipes, CI and the Python API, where no live bar can be drawn.

A :class:`ProgressLines` counts the tasks the runner's progress callbacks report and writes one
line per task, ``smollm2: 120/390 (31%) 00:42 elapsed, 2.9/s, ETA 01:33``, whenever a task has
gone ``every`` seconds without one (a background ticker, so a long batch still shows that the
run is alive) and once when it finishes. ``every`` is 8 s unless ``CHRONOPROBE_PROGRESS_EVERY``
says otherwise.

The CLI writes these lines to its console when stderr is not a terminal; the Python API sends
them, and the plan line, through the ``chronoprobe.progress`` logger (:func:`logged_progress`),
which shows on stderr unless the program configured logging itself.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from types import TracebackType

__all__ = [
    "DEFAULT_EVERY",
    "LOAD_LINE_AFTER",
    "LOGGER",
    "PROGRESS_EVERY_ENV",
    "ProgressLines",
    "format_clock",
    "line_if_slow",
    "logged_progress",
    "logged_step",
    "progress_every",
    "progress_line",
    "quiet_third_party_output",
    "shown_on_stderr",
    "slow_step_lines",
]

PROGRESS_EVERY_ENV = "CHRONOPROBE_PROGRESS_EVERY"
"""Seconds between plain progress lines (default :data:`DEFAULT_EVERY`; 0: a line on every step)."""
DEFAULT_EVERY = 8.0
LOGGER = logging.getLogger("chronoprobe.progress")
"""Where the Python API writes its plan line and progress lines (INFO)."""

Clock = Callable[[], float]
Emit = Callable[[str], None]


def progress_every() -> float:
    """The interval ``CHRONOPROBE_PROGRESS_EVERY`` asks for, else :data:`DEFAULT_EVERY`."""
    raw = os.environ.get(PROGRESS_EVERY_ENV, "")
    try:
        return max(0.0, float(raw)) if raw.strip() else DEFAULT_EVERY
    except ValueError:
        return DEFAULT_EVERY


def format_clock(seconds: float) -> str:
    """``mm:ss``, or ``h:mm:ss`` from an hour on."""
    minutes, whole = divmod(max(0, int(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{whole:02d}" if hours else f"{minutes:02d}:{whole:02d}"


def progress_line(description: str, done: int, total: int | None, elapsed: float) -> str:
    """One task's line: done/total, elapsed, rate and, once anything is done, the time left."""
    count = f"{done}/{total} ({done / total:.0%})" if total else f"{done} done"
    line = f"{description}: {count} {format_clock(elapsed)} elapsed"
    if done and elapsed > 0:
        rate = done / elapsed
        line += f", {_rate(rate)}"
        if total and done < total:
            line += f", ETA {format_clock((total - done) / rate)}"
    return line


def _rate(per_second: float) -> str:
    if per_second >= 100:
        return f"{per_second:.0f}/s"
    if per_second >= 1:
        return f"{per_second:.1f}/s"
    if per_second >= 0.1:
        return f"{per_second:.2g}/s"
    return f"{per_second * 60:.2g}/min"


@dataclass
class _Task:
    description: str
    total: int | None
    started: float
    done: int = 0
    last_line: float = 0.0
    shown: int | None = None
    """The count of the task's last line (None: no line yet)."""

    @property
    def finished(self) -> bool:
        return self.total is not None and self.done >= self.total


class ProgressLines:
    """Plain progress lines for every task, at least every ``every`` seconds while it runs, and when it ends.

    Use it as a context (the ticker runs inside it); :meth:`factory` is the runner's progress
    factory (``factory(description, total)`` returns the step callback). ``clock`` and
    :meth:`tick` let a test drive time by hand.
    """

    def __init__(self, emit: Emit, every: float | None = None, *, clock: Clock = time.monotonic) -> None:
        self._emit = emit
        self.every = progress_every() if every is None else every
        self._clock = clock
        self._tasks: list[_Task] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def add(self, description: str, total: int | None) -> int:
        """A new task; its id for :meth:`advance`."""
        now = self._clock()
        with self._lock:
            self._tasks.append(_Task(description, total, started=now, last_line=now))
            return len(self._tasks) - 1

    def advance(self, task_id: int, steps: int = 1) -> None:
        with self._lock:
            task = self._tasks[task_id]
            task.done += steps
            if task.finished or self._clock() - task.last_line >= self.every:
                self._line(task)

    def factory(self, description: str, total: int) -> Callable[[int], None]:
        task_id = self.add(description, total)
        return lambda steps: self.advance(task_id, steps)

    def tick(self) -> None:
        """A line for every running task that has gone ``every`` seconds without one."""
        now = self._clock()
        with self._lock:
            for task in self._tasks:
                if not task.finished and now - task.last_line >= self.every:
                    self._line(task)

    def close(self) -> None:
        """Stop the ticker; a task that moved since its last line gets a final one."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        with self._lock:
            for task in self._tasks:
                if task.done != (task.shown or 0):
                    self._line(task)

    def _line(self, task: _Task) -> None:
        if task.shown is not None and task.shown == task.done and task.finished:
            return  # a finished task is told once
        now = self._clock()
        task.last_line, task.shown = now, task.done
        with suppress(Exception):  # a broken pipe or handler must not stop the run it reports on
            self._emit(progress_line(task.description, task.done, task.total, now - task.started))

    def _run_ticker(self) -> None:
        while not self._stop.wait(min(self.every, 1.0) or 0.1):
            self.tick()

    def __enter__(self) -> ProgressLines:
        if self.every > 0:
            self._stop.clear()
            self._ticker = threading.Thread(target=self._run_ticker, name="chronoprobe-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


@contextmanager
def shown_on_stderr(logger: logging.Logger = LOGGER) -> Iterator[None]:
    """Let ``logger``'s INFO lines reach stderr for the duration, unless the program chose otherwise.

    A program that configured logging (a handler on the logger or above it, or a level on
    ``chronoprobe.progress`` or ``chronoprobe``) keeps its choice; otherwise a plain stderr
    handler is attached for the duration and removed after.
    """
    added: logging.Handler | None = None
    level_set = False
    if not logger.hasHandlers():
        added = logging.StreamHandler(sys.stderr)
        added.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(added)
    if logger.level == logging.NOTSET and logging.getLogger("chronoprobe").level == logging.NOTSET:
        logger.setLevel(logging.INFO)
        level_set = True
    try:
        yield
    finally:
        if added is not None:
            logger.removeHandler(added)
        if level_set:
            logger.setLevel(logging.NOTSET)


@contextmanager
def line_if_slow(
    emit: Emit, line: str, after: float, *, closing: Callable[[float], str] | None = None
) -> Iterator[None]:
    """Emit ``line`` once the step inside has taken ``after`` seconds (at once for 0), else nothing; once it
    was emitted, ``closing(seconds)`` when the step ends (not when it fails: its error says that).

    How a slow step without steps to count (loading a model) still shows in a log, and when it ended,
    while a quick one, or one that fails at once, adds no line.
    """
    started = time.monotonic()
    told = threading.Event()
    lock = threading.Lock()

    def tell() -> None:
        with lock:
            emit(line)
            told.set()

    timer = threading.Timer(max(after, 0.0), tell)
    timer.daemon = True
    if after <= 0:
        tell()
    else:
        timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:  # a line being written now is written whole, and then closed
            shown = told.is_set()
    if closing is not None and shown:
        emit(closing(time.monotonic() - started))


LOAD_LINE_AFTER = 3.0
"""Seconds a slow step (a model load) runs before a log is told of it: a quick one (a mock, a cached
remote) adds no line, a real load is named within seconds and its end told with its time."""


def slow_step_lines(emit: Emit, message: str) -> AbstractContextManager[None]:
    """``message ...`` once the step has taken :data:`LOAD_LINE_AFTER` (at once when
    ``CHRONOPROBE_PROGRESS_EVERY`` is 0), then ``message: done in 8.3 s`` when it ends."""
    after = min(LOAD_LINE_AFTER, progress_every())
    return line_if_slow(emit, f"{message} ...", after, closing=lambda seconds: f"{message}: done in {seconds:.1f} s")


def logged_step(message: str) -> AbstractContextManager[None]:
    """The Python API's ``announce``: :func:`slow_step_lines` on :data:`LOGGER`."""
    return slow_step_lines(LOGGER.info, message)


@contextmanager
def logged_progress(every: float | None = None) -> Iterator[Callable[[str, int], Callable[[int], None]]]:
    """A progress factory whose lines go to :data:`LOGGER` (INFO), shown on stderr by default."""
    with shown_on_stderr(), ProgressLines(LOGGER.info, every) as lines:
        yield lines.factory


def quiet_third_party_output() -> None:
    """Silence the libraries' own load bars and chatter (transformers' "Loading weights", the hub's downloads).

    Environment variables are only defaulted, so a user's own setting wins; a library that is
    already imported is told directly.
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    if os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS") != "1":
        return  # the user asked for the bars
    for module, switch in (
        ("transformers.utils.logging", "disable_progress_bar"),
        ("huggingface_hub.utils", "disable_progress_bars"),
    ):
        turn_off = getattr(sys.modules.get(module), switch, None)
        if callable(turn_off):
            turn_off()
