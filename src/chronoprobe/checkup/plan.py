"""The check's plan: one line per lens (items, model calls, an estimated time), then a total.

Times are ranges from the speed the call cache measured for each model on this machine
(:func:`chronoprobe.estimate.estimate` over its ``speed`` table); where it has measured nothing
for a model, a rough default stands in and the line says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronoprobe.cache import CallCache
from chronoprobe.contract.check_part import check_part
from chronoprobe.contract.lens import Workload
from chronoprobe.contract.power import measured_discordance, power_text, units_of
from chronoprobe.estimate import TimeEstimate, estimate, total

ROUGH_SECONDS_PER_CALL = 1.0
"""Without a measurement: SmolLM2 on 2 busy CPU cores took 0.1-0.3 s per short greedy prompt (the audit)
and 2-4 s per prompt of ten sampled answers (DynamicQA's persuasion) or of a long IKE prompt; 1 s is
between them."""


@dataclass
class LensPlan:
    """One lens's line of the plan."""

    lens: str
    status: str
    """``run``, ``reuse`` (finished earlier in this folder) or ``skip``."""
    reason: str = ""
    workload: Workload | None = None
    models: int = 1
    time: TimeEstimate | None = None
    power: str | None = None
    """What its size detects: ``130 facts: detects a paired difference of about 11 points at 80% power (...)``."""
    sized: str | None = None
    """How ``--precision`` sized it, when it did: ``±3.0 points: 1,068 facts`` or that the cap is reached."""


def estimate_lens(plan: LensPlan, specs: Sequence[str], cache_path: Path | None) -> None:
    """Fill in ``plan.time``: each model's calls at the speed this machine's call cache measured for it."""
    if plan.status != "run" or plan.workload is None:
        return
    cache = CallCache(cache_path) if cache_path is not None and cache_path.is_file() else None
    try:
        calls = plan.workload.calls
        plan.time = total(estimate(cache, spec, "call", calls, default=ROUGH_SECONDS_PER_CALL) for spec in specs)
    finally:
        if cache is not None:
            cache.close()


def estimate_power(plan: LensPlan, lens: Any, cache_path: Path | None) -> None:
    """Fill in ``plan.power``: the smallest paired difference the lens's size detects (measured discordance from the
    call cache where it holds two models' answers to these prompts, else the stated assumption)."""

    sizing = check_part(type(lens)).sizing
    if plan.status != "run" or plan.workload is None or sizing is None:
        return
    cache = CallCache(cache_path) if cache_path is not None and cache_path.is_file() else None
    try:
        measured = measured_discordance(lens, cache) if cache is not None else None
    finally:
        if cache is not None:
            cache.close()
    bound = "at most " if plan.workload.at_most else ""
    plan.power = bound + power_text(units_of(lens, plan.workload.items), sizing.unit, measured)


def plan_line(plan: LensPlan) -> str:
    """``outdated: 130 facts, 390 model calls; about 1–3 min (...)``."""
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
    if plan.time is not None:
        line += f"; {plan.time.describe()} ({plan.time.basis_text()})"
    if plan.sized is not None:
        line += f"; {plan.sized}"
    if plan.power is not None:
        line += f"; {plan.power}"
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
    times = [p.time for p in counted if p.time is not None]
    if times:
        whole = total(times)
        parts.append(whole.describe() + (" (partly a rough default)" if whole.basis == "default" else ""))
    if len(counted) < len(running):
        parts.append("plus lenses that count nothing in advance")
    if kept:
        parts.append(f"{kept} kept from earlier")
    if skipped:
        parts.append(f"{skipped} skipped")
    return "; ".join(parts) + "; answers already in the call cache are not asked again"
