"""The check's plan: one line per lens (items, model calls, an estimated time), then a total.

Times come from the speed the call cache measured for each model (its ``speed`` table, which
every cached model call adds to); where it has measured nothing for a model, a rough default
stands in and the line says so. :func:`seconds_per_call` is the one place that reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chronoprobe.cache import CallCache, speed_subject
from chronoprobe.lens import Workload

ROUGH_SECONDS_PER_CALL = 1.0
"""Without a measurement: SmolLM2 on 2 busy CPU cores took 0.1-0.3 s per short greedy prompt (the audit)
and 2-4 s per prompt of ten sampled answers (DynamicQA's persuasion); 1 s is between them."""


def seconds_per_call(cache_path: Path | None, spec: str) -> float | None:
    """What the call cache at ``cache_path`` measured per call of the model ``spec``, if anything."""
    if cache_path is None or not cache_path.is_file():
        return None
    cache = CallCache(cache_path)
    try:
        timing = cache.timing(speed_subject(spec))
    finally:
        cache.close()
    return timing.per_step if timing is not None else None


@dataclass
class LensPlan:
    """One lens's line of the plan."""

    lens: str
    status: str
    """``run``, ``reuse`` (finished earlier in this folder) or ``skip``."""
    reason: str = ""
    workload: Workload | None = None
    models: int = 1
    seconds: float | None = None
    rough: list[str] = field(default_factory=list)
    """Models whose speed this cache has not measured (the estimate used the rough default)."""


def estimate(plan: LensPlan, specs: Sequence[str], cache_path: Path | None) -> None:
    """Fill in ``plan.seconds`` from each model's measured speed (or the rough default)."""
    if plan.status != "run" or plan.workload is None:
        return
    total = 0.0
    for spec in specs:
        rate = seconds_per_call(cache_path, spec)
        if rate is None:
            plan.rough.append(spec)
        total += plan.workload.calls * (rate if rate is not None else ROUGH_SECONDS_PER_CALL)
    plan.seconds = total


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min"


def _basis(rough: Sequence[str]) -> str:
    if rough:
        return (
            f"rough default of {ROUGH_SECONDS_PER_CALL:.1f} s per call: the call cache has not timed {', '.join(rough)}"
        )
    return "at the speed the call cache measured"


def plan_line(plan: LensPlan) -> str:
    """``outdated: 130 facts, 390 model calls per model; about 30 s (at the speed the call cache measured)``."""
    if plan.status == "skip":
        return f"{plan.lens}: skipped, {plan.reason}"
    if plan.status == "reuse":
        return f"{plan.lens}: finished earlier in this folder with the same settings; kept, no model calls"
    work = plan.workload
    if work is None:
        return f"{plan.lens}: items and model calls not counted by the lens; time unknown"
    bound = "at most " if work.at_most else ""
    per_model = " per model" if plan.models > 1 else ""
    line = f"{plan.lens}: {bound}{work.items:,} {work.unit}, {bound}{work.calls:,} model calls{per_model}"
    if plan.seconds is not None:
        line += f"; about {duration(plan.seconds)} ({_basis(plan.rough)})"
    return line


def total_line(plans: Sequence[LensPlan]) -> str:
    """The plan's last line: calls and time over every lens that runs."""
    running = [p for p in plans if p.status == "run"]
    counted = [p for p in running if p.workload is not None]
    calls = sum(p.workload.calls * p.models for p in counted if p.workload is not None)
    bound = "at most " if any(p.workload is not None and p.workload.at_most for p in counted) else ""
    kept = sum(p.status == "reuse" for p in plans)
    skipped = sum(p.status == "skip" for p in plans)
    parts = [f"total: {len(running)} lens run(s), {bound}{calls:,} model calls"]
    if counted:
        seconds = sum(p.seconds or 0.0 for p in counted)
        rough = any(p.rough for p in counted)
        parts.append(f"about {duration(seconds)}" + (" (partly a rough default)" if rough else ""))
    if len(counted) < len(running):
        parts.append("plus lenses that count nothing in advance")
    if kept:
        parts.append(f"{kept} kept from earlier")
    if skipped:
        parts.append(f"{skipped} skipped")
    return "; ".join(parts) + "; answers already in the call cache are not asked again"
