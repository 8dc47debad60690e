"""CPU threads for torch when other processes share the machine.

Measured on a 2-core machine (benchmarks/outdated_throughput.py): with torch's
defaults (one OpenMP thread per core, threads spinning while they wait at each
barrier), a batched decode slowed down several-fold as soon as other processes
were busy. Each parallel region ends in a barrier; when another process takes
one of our threads' cores, the other thread spins, burning the CPU time the
descheduled thread needs, and every one of the thousands of small regions of a
decode step waits for the slowest thread.

Two remedies, both on by default and both off with ``CHRONOPROBE_CPU_THREADS=torch``:

* ``OMP_WAIT_POLICY=PASSIVE`` (unless the user set it): waiting threads sleep
  instead of spinning. OpenMP reads it when torch is imported, so
  :func:`prepare_openmp` runs on ``import chronoprobe``, before torch.
* One thread per usable core (``auto``, the default). Giving torch only the cores other
  processes left free (``adaptive``, the default before 0.2.0) lost clearly to a fixed count
  of the cores in 3 of 7 alternating rounds on the loaded 2-core machine (up to 2.5x: 1.99
  against 5.00 prompts/s) and won in 2 (benchmarks/cpu_backends.py, docs/scale.md): the
  scheduler shares a busy machine per thread, so a process that gives up a thread under
  load gives up its share. A fixed count of the cores cannot lose to itself.

``CHRONOPROBE_CPU_THREADS=adaptive`` keeps the load-following count: before each generate call,
measure how many cores *other* processes used since the previous call (``/proc/stat`` minus our
own CPU time) and give torch only the cores left, at least one.
``CHRONOPROBE_CPU_THREADS=<n>`` fixes the count at n (with the passive wait policy).

Every count torch ran with is noted (:func:`counts_since`), so a run's provenance can say
which thread counts produced it.
"""

from __future__ import annotations

import math
import os
import sys
import time

from chronoprobe.errors import ConfigError

ENV = "CHRONOPROBE_CPU_THREADS"
MIN_WINDOW_S = 0.5
"""Shorter windows between generate calls are too noisy to act on; the previous count is kept."""

_IN_FORCE: dict[int, float] = {}
"""Each torch thread count that local work ran with in this process -> when it last did (``time.perf_counter``)."""


def policy() -> str:
    """``auto`` (default: every usable core), ``adaptive`` (the cores others leave free), ``torch`` (leave
    torch and OpenMP alone) or a positive thread count."""
    value = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if value in {"auto", "adaptive", "torch"}:
        return value
    if value.isdigit() and int(value) > 0:
        return value

    raise ConfigError(f"${ENV}", f"{value!r} is not auto, adaptive, torch or a positive number of threads")


def policy_label() -> str:
    """The policy as set, for the record; never raises (a bad value failed when the model loaded)."""
    return os.environ.get(ENV, "auto").strip().lower() or "auto"


def counts_since(started: float | None) -> list[int]:
    """The torch thread counts local work ran with since ``started`` (``time.perf_counter()``; None: ever)."""
    return sorted(n for n, last in _IN_FORCE.items() if started is None or last >= started)


def prepare_openmp() -> None:
    """Make OpenMP threads sleep rather than spin while waiting, if torch is not imported yet."""
    if "torch" in sys.modules or os.environ.get(ENV, "auto").strip().lower() == "torch":
        return
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def _cpu_seconds() -> tuple[float, float, float] | None:
    """(wall clock, busy CPU seconds of the whole machine, CPU seconds of this process), or None off Linux."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    busy = sum(ticks) - ticks[3] - ticks[4]
    own = os.times()
    return time.monotonic(), busy / os.sysconf("SC_CLK_TCK"), own.user + own.system


def threads_for(cores: int, others_busy: float) -> int:
    """Threads to use when other processes keep ``others_busy`` cores busy (rounded to the nearest core)."""
    return max(1, min(cores, cores - math.floor(others_busy + 0.5)))


class AdaptiveThreads:
    """Sets torch's intra-op thread count by the policy (every core, or the cores others leave free); see the module docstring."""

    def __init__(self) -> None:
        self.mode = policy()
        self.cores = usable_cores()
        self._last = _cpu_seconds()
        self.threads: int | None = None
        if self.mode == "auto":
            self._set(self.cores)
        elif self.mode.isdigit():
            self._set(int(self.mode))

    def _set(self, threads: int) -> None:
        import torch  # deferred: torch

        if threads != torch.get_num_threads():
            torch.set_num_threads(threads)
        self.threads = threads

    def adjust(self) -> int | None:
        """Call before a burst of work; returns the thread count set (None when torch decides)."""
        import torch  # deferred: torch

        if self.mode == "adaptive":
            self._follow_load()
        _IN_FORCE[torch.get_num_threads()] = time.perf_counter()
        return self.threads

    def _follow_load(self) -> None:
        now = _cpu_seconds()
        if now is None or self._last is None:
            return
        wall = now[0] - self._last[0]
        if wall < MIN_WINDOW_S:
            return
        others = max(0.0, (now[1] - self._last[1]) - (now[2] - self._last[2])) / wall
        self._last = now
        self._set(threads_for(self.cores, others))
