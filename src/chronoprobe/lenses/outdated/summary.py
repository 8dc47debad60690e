"""Aggregate audit records into the paper's tables (per model, per category)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chronoprobe.knowledge.types import Statement
from chronoprobe.lenses.outdated.audit import ResponseRecord
from chronoprobe.metrics.dyknow import (
    VERDICTS,
    Classification,
    Verdict,
    ambiguous_not_edited,
    average_counts,
    facts_to_edit,
    inconsistent_facts,
    soft_constraint,
    verdict_estimates,
)

ALL = "all"


def _group(
    records: Sequence[ResponseRecord], verdict_of: Callable[[ResponseRecord], Verdict | None], no_gold: int = 0
) -> dict[str, Any]:
    """Rates over the judged facts only; ``no_gold`` (facts without gold answers) is reported beside them."""
    by_fact: dict[str, list[Verdict]] = defaultdict(list)
    classified: dict[str, list[Classification]] = defaultdict(list)
    per_prompt: dict[int, Counter[str]] = defaultdict(Counter)
    for record in sorted(records, key=lambda r: (r.fact_id, r.template_index)):
        verdict = verdict_of(record)
        assert verdict is not None
        by_fact[record.fact_id].append(verdict)
        classified[record.fact_id].append(
            Classification(verdict=verdict, matched=tuple(Statement(label=label) for label in record.matched))
        )
        per_prompt[record.template_index][verdict] += 1
    soft = soft_constraint(by_fact)
    soft_counts = Counter(soft.values())
    facts = len(by_fact)
    inconsistent = inconsistent_facts(classified)
    average_pct: dict[str, float] = {v: 100.0 * share for v, share in average_counts(by_fact).items()}
    return {
        "facts": facts,
        "no_gold": no_gold,
        "per_prompt": {str(i): {v: per_prompt[i][v] for v in VERDICTS} for i in sorted(per_prompt)},
        "soft_constraint": {v: soft_counts[v] for v in VERDICTS},
        "soft_constraint_pct": {v: 100.0 * soft_counts[v] / facts if facts else 0.0 for v in VERDICTS},
        "average_pct": average_pct,
        "inconsistent": len(inconsistent),
        "inconsistency_pct": 100.0 * len(inconsistent) / facts if facts else 0.0,
        "inconsistent_facts": sorted(inconsistent),
        "facts_to_edit": sorted(facts_to_edit(by_fact)),
        "ambiguous_not_edited": sorted(ambiguous_not_edited(by_fact)),
        "estimates": _estimates(by_fact, inconsistent, average_pct),
    }


def _estimates(
    by_fact: Mapping[str, Sequence[Verdict]], inconsistent: Sequence[str], average_pct: Mapping[str, float]
) -> dict[str, Any]:
    """n and 95% Wilson intervals beside the percentages, keyed like them (``*_pct``)."""
    est = verdict_estimates(by_fact, inconsistent, scale=100.0)
    return {
        "soft_constraint_pct": {v: e.to_json() for v, e in est.soft_constraint.items()},
        # The same value as ``average_pct`` to the last digit (it is computed as 100 * share).
        "average_pct": {v: e.reported_as(average_pct[v]).to_json() for v, e in est.average.items()},
        "inconsistency_pct": est.inconsistency.to_json(),
    }


def summarize_model(
    records: Sequence[ResponseRecord], *, with_as_of: bool, no_gold: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Tables for one model: per category and overall, now and (optionally) as of a date.

    ``no_gold`` maps the facts that had no gold answer (so were not asked) to
    their category: they are counted per category and listed, never rated.
    """
    no_gold = dict(no_gold or {})
    missing = Counter(no_gold.values())
    missing[ALL] = len(no_gold)
    categories = sorted({r.category for r in records} | set(no_gold.values()))
    now = {c: _group([r for r in records if r.category == c], lambda r: r.verdict, missing[c]) for c in categories}
    now[ALL] = _group(records, lambda r: r.verdict, missing[ALL])
    summary: dict[str, Any] = {
        "per_category": now,
        "no_gold": sorted(no_gold),
        "facts_to_edit": now[ALL]["facts_to_edit"],
        # One start year per answer matched to a single gold value (up-to-date or outdated).
        "start_years": sorted(
            r.matched_start_years[0]
            for r in records
            if r.verdict in ("up-to-date", "outdated") and r.matched_start_years
        ),
    }
    if with_as_of:
        summary["as_of"] = {
            c: _group([r for r in records if r.category == c or c == ALL], lambda r: r.verdict_as_of, missing[c])
            for c in [*categories, ALL]
        }
    return summary
