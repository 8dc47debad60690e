"""The editing run's plan: what it will do per model, and a time range from the call cache's timings.

The times come from :func:`chronoprobe.estimate.estimate`: this machine's timings of the same
model and work where the call cache has them, else the model's other calls (shorter prompts),
else a rough default, widened to a range and named in the line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chronoprobe.cache import CallCache
from chronoprobe.estimate import TimeEstimate, estimate, total
from chronoprobe.lenses.editing.config import COLUMN, EditingConfig
from chronoprobe.models.registry import canonical_spec

ROUGH_SECONDS = {"call": 2.0, "rome": 60.0, "memit": 30.0}
"""Without a measurement in the call cache: SmolLM2 on 2 busy CPU cores took about 2 s per editing prompt (long
IKE/RAG prompts, 100-token fluency answers), and ROME and MEMIT about 60 and 30 s per fact edited
(the runs in `chronoprobe docs editing`). A GPU or an API is faster, a larger model on CPU slower: the plan widens it to a range."""


@dataclass
class RunPlan:
    """One model's share of an editing run, counted before it starts."""

    spec: str
    """The model spec, credentials removed (what the call cache times)."""
    label: str
    """What the run calls the model: its NAME, else its spec."""
    facts: int
    calls: int
    """Prompts sent if nothing is cached yet (answers already in the cache are not asked again)."""
    edits: dict[str, int]
    """Weight method -> facts it edits (scaling fractions included)."""
    time: TimeEstimate
    """How long it may take, and what that stands on."""

    @property
    def timed(self) -> bool:
        """Every part of the range comes from this cache's timing of the same work (an earlier editing run)."""
        return self.time.measured

    @property
    def defaults(self) -> list[str]:
        """The rough defaults the range had to use, e.g. ``2.0 s per call``; empty when the cache timed everything."""
        return list(self.time.defaults)


def plan_model(
    spec: str, label: str, facts: int, calls: dict[str, int], edits: dict[str, int], cache: CallCache | None
) -> RunPlan:
    """The plan for one model: ``calls`` per step (``unedited`` or a method), ``edits`` per weight method."""

    parts = [
        estimate(cache, spec, f"editing:{step}", count, default=ROUGH_SECONDS["call"], similar=("call",))
        for step, count in calls.items()
    ]
    parts += [
        estimate(cache, spec, f"edit:{method}", count, default=ROUGH_SECONDS[method], unit=f"{COLUMN[method]} edit")
        for method, count in edits.items()
    ]
    return RunPlan(
        spec=canonical_spec(spec),
        label=label,
        facts=facts,
        calls=sum(calls.values()),
        edits=edits,
        time=total(parts),
    )


def plan_line(plans: Sequence[RunPlan], config: EditingConfig) -> str:
    """One line before the work: facts, methods, model calls and edits, and how long it may take."""
    methods = list(config.method)
    per_model = []
    for plan in plans:
        edits = "".join(f" + {n} {COLUMN[m]} edits" for m, n in plan.edits.items())
        per_model.append(f"{plan.label}: {plan.facts} facts, {plan.calls:,} model calls{edits}")
    time = total(plan.time for plan in plans)
    line = (
        f"plan: {len(methods)} method(s) ({', '.join(methods)}); {'; '.join(per_model)}; "
        f"{time.describe()} ({time.basis_text()}); answers already in the call cache are not asked again"
    )
    if time.high > 600 and config.balanced_limit is None and any(plan.facts > 10 for plan in plans):
        line += "; for a first look try --balanced-limit 10 --method ike-null,rag-gold"
    return line
