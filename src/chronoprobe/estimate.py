"""How long a piece of work will take, as a range: from what the call cache timed on this machine, else a rough default.

The call cache records the seconds of every batch a model really answered (and every weight
edit), per model spec and kind of work (:func:`chronoprobe.cache.speed_subject`), with the
machine's load average at the time. :func:`estimate` turns those timings into a range for
``count`` more steps of the same work; a plan line (``editing run``, ``chronoprobe check``) adds
the ranges of its parts and prints :meth:`TimeEstimate.describe` with :meth:`TimeEstimate.basis_text`.

How wide the range is depends on what it stands on:

* **measured**: the spread of the per-step times this cache recorded for the same work (10th to
  90th percentile, step-weighted), at least -20 %/+25 % around their mean (half to twice it from
  fewer than three timed batches), and higher when the machine is busier now than it was during
  the fastest of them (see :func:`load_factor`);
* **similar**: only other work of the same model was timed (an audit's short prompts standing
  in for an editing run's long ones): that speed is the low end, four times it (or the rough
  default, if larger) the high end;
* **default**: nothing was timed: the rough default, from a third of it to four times it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from chronoprobe.cache import CallCache, SpeedSample, speed_subject

__all__ = [
    "FEW_SAMPLES_SPREAD",
    "MEASURED_SPREAD",
    "ROUGH_SPREAD",
    "Basis",
    "TimeEstimate",
    "estimate",
    "format_duration",
    "format_duration_range",
    "load_factor",
    "total",
    "workload_line",
]

Basis = Literal["measured", "similar", "default"]
ROUGH_SPREAD = (1 / 3, 4.0)
"""A rough default covers a third of it to four times it: a larger model, a busier CPU or a GPU move it that far."""
MEASURED_SPREAD = (0.8, 1.25)
"""The narrowest range around a measured mean: one run's batches do not show how much the load varies."""
FEW_SAMPLES = 3
FEW_SAMPLES_SPREAD = (0.5, 2.0)
"""The narrowest range from fewer than :data:`FEW_SAMPLES` timed batches: two small editing runs of
SmolLM2 at the same load took 2.9 and 5.8 s per IKE call (other facts, other prompt lengths)."""
SIMILAR_SPREAD = 4.0
"""Other work of the same model is a floor for this work; up to this many times slower."""
_BASES: tuple[Basis, ...] = ("measured", "similar", "default")


@dataclass(frozen=True)
class TimeEstimate:
    """Seconds some work may take, ``low`` to ``high``, and what the range stands on."""

    low: float
    high: float
    basis: Basis = "measured"
    """The weakest footing of any part: measured (this work, timed here), similar or default."""
    defaults: tuple[str, ...] = ()
    """The rough defaults used, e.g. ``2.0 s per call``."""
    loads: tuple[float, float] | None = None
    """The lowest and highest load average during the timings used."""
    load_now: float | None = None

    @property
    def measured(self) -> bool:
        """Every part was timed by this cache, for this model and this kind of work."""
        return self.basis == "measured"

    def __add__(self, other: TimeEstimate) -> TimeEstimate:
        loads = [pair for pair in (self.loads, other.loads) if pair is not None]
        return TimeEstimate(
            low=self.low + other.low,
            high=self.high + other.high,
            basis=max(self.basis, other.basis, key=_BASES.index),
            defaults=tuple(dict.fromkeys(self.defaults + other.defaults)),
            loads=(min(p[0] for p in loads), max(p[1] for p in loads)) if loads else None,
            load_now=self.load_now if self.load_now is not None else other.load_now,
        )

    def describe(self) -> str:
        """``about 9–26 min``."""
        return f"about {format_duration_range(self.low, self.high)}"

    def basis_text(self) -> str:
        """Where the range comes from, for the end of a plan line."""
        if self.basis == "default":
            return (
                "a rough range: the call cache has not timed this model on this machine yet, so it stands on "
                f"{', '.join(self.defaults)}"
            )
        if self.basis == "similar":
            return "partly from this model's other calls here, which had shorter prompts: it may take longer"
        text = "from this machine's timings of the same work in the call cache"
        if self.loads is not None:
            low, high = self.loads
            text += f", at load {low:.1f}" if round(low, 1) == round(high, 1) else f", at load {low:.1f}–{high:.1f}"
            if self.load_now is not None:
                text += f" (load now {self.load_now:.1f})"
        return text


ZERO = TimeEstimate(0.0, 0.0)


def total(parts: Iterable[TimeEstimate]) -> TimeEstimate:
    """The sum of ``parts`` (nothing: zero seconds, measured)."""
    found = ZERO
    for part in parts:
        found = found + part
    return found


def current_load() -> float | None:
    """The 1-minute load average, where the system reports one."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def load_factor(measured_at: float | None, now: float | None) -> float:
    """How much slower work may run now than when it was timed at load ``measured_at``: ``(1 + now) / (1 + then)``.

    A rule of thumb for CPU-bound work on a shared machine (capped at 4), never below 1: a quieter
    machine now keeps the measured low end rather than promising more than was seen.
    """
    if measured_at is None or now is None or now <= measured_at:
        return 1.0
    return min(4.0, (1 + now) / (1 + measured_at))


def _weighted_quantile(samples: Sequence[tuple[float, int]], share: float) -> float:
    """The per-step time below which ``share`` of the steps fell (samples: per-step seconds, steps)."""
    ordered = sorted(samples)
    steps = sum(count for _, count in ordered)
    seen = 0
    for per_step, count in ordered:
        seen += count
        if seen >= share * steps:
            return per_step
    return ordered[-1][0]


def _from_samples(samples: Sequence[SpeedSample], count: int, now: float | None) -> TimeEstimate:
    per_step = [(s.seconds / s.count, s.count) for s in samples]
    mean = sum(s.seconds for s in samples) / sum(s.count for s in samples)
    narrowest = MEASURED_SPREAD if len(samples) >= FEW_SAMPLES else FEW_SAMPLES_SPREAD
    low = min(_weighted_quantile(per_step, 0.1), mean * narrowest[0])
    high = max(_weighted_quantile(per_step, 0.9), mean * narrowest[1])
    loads = [s.load for s in samples if s.load is not None]
    high *= load_factor(min(loads) if loads else None, now)
    return TimeEstimate(
        low=count * low,
        high=count * high,
        loads=(min(loads), max(loads)) if loads else None,
        load_now=now if loads else None,
    )


def estimate(
    cache: CallCache | None,
    spec: str,
    what: str,
    count: int,
    *,
    default: float,
    unit: str = "call",
    similar: Sequence[str] = (),
) -> TimeEstimate:
    """How long ``count`` more steps of ``what`` (``call``, ``editing:<method>``, ``edit:rome`` ...) take for ``spec``.

    From this cache's timings of the same spec and work; else from the first of ``similar``
    (other work of the same model) it timed; else ``default`` seconds per step, named in the
    estimate as ``"<default> s per <unit>"``. See the module docstring for the widths.
    """
    if count <= 0:
        return ZERO
    if cache is not None:
        samples = cache.speed_samples(speed_subject(spec, what))
        if samples:
            return _from_samples(samples, count, current_load())
        timing = cache.timing(speed_subject(spec, what))
        if timing is not None:  # a cache from before the samples were kept: its mean only
            return TimeEstimate(count * timing.per_step * 0.7, count * timing.per_step * 2.0)
        for other in similar:
            found = cache.timing(speed_subject(spec, other))
            if found is not None:
                low = count * found.per_step
                return TimeEstimate(low, max(low * SIMILAR_SPREAD, count * default), basis="similar")
    shown = f"{default:.1f}" if default < 10 else f"{default:.0f}"
    low, high = (count * default * spread for spread in ROUGH_SPREAD)
    return TimeEstimate(low, high, basis="default", defaults=(f"{shown} s per {unit}",))


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``2 h 5 min``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def format_duration_range(low: float, high: float) -> str:
    """``9–26 min`` when both ends share a unit, else ``50 s – 3 min``; one value when they print alike."""
    first, second = format_duration(low), format_duration(high)
    if first == second:
        return first
    first_number, _, first_unit = first.partition(" ")
    second_number, _, second_unit = second.partition(" ")
    if first_unit == second_unit and first_unit in ("s", "min"):
        return f"{first_number}–{second_number} {first_unit}"
    return f"{first} – {second}"


ROUGH_SECONDS_PER_CALL = 1.0
"""A model call's time where the cache has timed none (as ``chronoprobe check``'s plan takes it)."""


def workload_line(
    what: str,
    items: int,
    unit: str,
    calls: int,
    specs: Sequence[str],
    cache: CallCache | None,
    *,
    at_most: bool = False,
) -> str:
    """``outdated: 40 facts, 120 model calls; about 40 s – 8 min (...)``: what a run asks each of its models
    (``specs``) and how long it may take at the speeds ``cache`` measured (a rough default where it has none)."""
    bound = "at most " if at_most else ""
    per_model = " per model" if len(specs) > 1 else ""
    line = f"{what}: {bound}{items:,} {unit}, {bound}{calls:,} model calls{per_model}"
    if not specs:
        return line
    time = total(estimate(cache, spec, "call", calls, default=ROUGH_SECONDS_PER_CALL) for spec in specs)
    return f"{line}; {time.describe()} ({time.basis_text()}); answers already in the call cache are not asked again"
