"""The outdated lens's numbers as lens-neutral :class:`~chronoprobe.metrics.records.Metric` records.

Read from the summary layouts ``outdated run`` (``models`` per model key, ``overall_key``) and
``outdated score`` (``categories`` and ``overall``, shares 0-1, reported in percent under the
names ``outdated run`` uses) write.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chronoprobe.metrics.records import ALL, Metric, from_estimate, group_metrics, number

VERDICTS = ("up-to-date", "outdated", "irrelevant", "ambiguous")
_VERDICT_BLOCKS = {"soft_constraint": "soft_constraint_pct", "average": "average_pct"}
"""``outdated score`` block -> the ``outdated run`` name of the same numbers in percent."""
_HEADLINE = [f"soft_constraint_pct.{v}" for v in VERDICTS] + ["inconsistency_pct"]
HEADLINE = (
    *_HEADLINE,
    *(f"as_of.{m}" for m in _HEADLINE),
    "knowledge_date",
    "published_cutoff",
    "freshness_half_life_years",
)
"""The card's headline numbers (over every fact), in reading order."""


def run_metrics(detail: Mapping[str, Any]) -> list[Metric]:
    """Every number of an ``outdated run`` summary, per model key."""
    found: list[Metric] = []
    for key, model in detail["models"].items():
        for block, prefix in (("per_category", ""), ("as_of", "as_of.")):
            for category, group in (model.get(block) or {}).items():
                found.extend(group_metrics(key, category, group, prefix))
        found.extend(knowledge_date_metrics(key, model.get("knowledge_date")))
    return _headlines(found)


def score_metrics(detail: Mapping[str, Any]) -> list[Metric]:
    """Every number of an ``outdated score`` summary (one model)."""
    found: list[Metric] = []
    model = str(detail["model"])
    prefix = "as_of." if detail.get("as_of") else ""
    groups = {**detail["categories"], ALL: detail["overall"]}
    for category, group in groups.items():
        estimates = group.get("estimates") or {}
        for block, name in _VERDICT_BLOCKS.items():
            for verdict, estimate in (estimates.get(block) or {}).items():
                found.append(from_estimate(model, category, f"{prefix}{name}.{verdict}", estimate, scale=100.0))
        if estimates.get("inconsistency"):
            found.append(
                from_estimate(model, category, f"{prefix}inconsistency_pct", estimates["inconsistency"], scale=100.0)
            )
    found.extend(knowledge_date_metrics(model, detail.get("knowledge_date")))
    return _headlines(found)


def knowledge_date_metrics(model: str, block: Mapping[str, Any] | None) -> list[Metric]:
    """The knowledge date (decimal years), its naive floor, the published cutoff, and per category
    the freshness half-life, the share still current at the snapshot and the deployment forecast."""
    if not block:
        return []
    found: list[Metric] = []
    for category, entry in (block.get("per_category") or {}).items():
        found.append(from_estimate(model, category, "knowledge_date", entry["estimate"]))
        found.append(from_estimate(model, category, "knowledge_date_naive", entry["naive"]))
    if block.get("published_cutoff_year") is not None:
        cutoff = number(block["published_cutoff_year"])
        found.append(Metric(model=model, group=ALL, name="published_cutoff", value=cutoff, unit="year"))
    for category, curve in ((block.get("staleness") or {}).get("per_category") or {}).items():
        found.append(from_estimate(model, category, "freshness_half_life_years", curve["half_life_years"]))
        last = {"value": curve["share"][-1], "n": curve["n"], "ci_low": curve["low"][-1], "ci_high": curve["high"][-1]}
        found.append(from_estimate(model, category, "still_current_at_snapshot_pct", last, scale=100.0))
    for category, points in ((block.get("deployed_at") or {}).get("per_category") or {}).items():
        for months, point in points.items():
            name = "deployed_at.stale_pct" if months == "0" else f"deployed_at.stale_{months}m_pct"
            found.append(from_estimate(model, category, name, point))
    return found


def _headlines(found: list[Metric]) -> list[Metric]:
    for metric in found:
        metric.headline = metric.group == ALL and metric.name in HEADLINE
    return found


def run_dataset(provenance: Mapping[str, Any]) -> str:
    """An ``outdated run``'s dataset label: its snapshot's name."""
    snapshot = provenance.get("snapshot") or {}
    return str(snapshot.get("name") or "dyknow")


def score_dataset(detail: Mapping[str, Any]) -> str:
    """An ``outdated score``'s dataset label: its gold answers."""
    gold = detail.get("gold") or {}
    if gold.get("name"):
        return str(gold["name"])
    if gold.get("path"):
        return Path(str(gold["path"])).name
    return str(gold.get("kind") or "dyknow")
