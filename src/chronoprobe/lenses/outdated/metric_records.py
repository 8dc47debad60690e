"""The outdated lens's numbers as lens-neutral :class:`~chronoprobe.metrics.records.Metric` records (the
run's typed :class:`~chronoprobe.records.runlog.Summary`), from the typed views of its two summary layouts.

Read from the summary layouts ``outdated run`` (``models`` per model key, ``overall_key``) and
``outdated score`` (``categories`` and ``overall``, shares 0-1, reported in percent under the
names ``outdated run`` uses) write.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NotRequired

from pydantic import TypeAdapter, ValidationError
from typing_extensions import TypedDict

from chronoprobe.errors import DataError
from chronoprobe.lenses.outdated.claimed_cutoff import claim_words
from chronoprobe.metrics.records import ALL, Metric, from_estimate, group_metrics, number
from chronoprobe.metrics.uncertainty import wilson
from chronoprobe.records.runlog import Note, Summary, typed_layout

VERDICTS = ("up-to-date", "outdated", "irrelevant", "ambiguous")
_VERDICT_BLOCKS = {"soft_constraint": "soft_constraint_pct", "average": "average_pct"}
"""``outdated score`` block -> the ``outdated run`` name of the same numbers in percent."""
_HEADLINE = [f"soft_constraint_pct.{v}" for v in VERDICTS] + [
    "inconsistency_pct",
    "dated_pct",
    "current_among_dated_pct",
]
HEADLINE = (
    *_HEADLINE,
    *(f"as_of.{m}" for m in _HEADLINE),
    "knowledge_cutoff",
    "knowledge_date",
    "claimed_cutoff",
    "published_cutoff",
    "freshness_half_life_years",
)
"""The card's headline numbers (over every fact), in reading order."""

GroupNumbers = dict[str, Any]
"""One category's (or every fact's) numbers: verdict shares, counts and their ``estimates``."""


class ModelNumbers(TypedDict):
    """One model of an ``outdated run``."""

    per_category: dict[str, GroupNumbers]
    """Per category, and ``all`` (the run's ``overall_key``)."""
    as_of: NotRequired[dict[str, GroupNumbers] | None]
    """The same judged against the gold answers valid at ``--as-of``."""
    name: NotRequired[str]
    """Short label for the plots."""
    knowledge_date: NotRequired[dict[str, Any] | None]
    """Absent in runs from before the knowledge date."""
    claimed_cutoff: NotRequired[dict[str, Any] | None]
    """What the model says its knowledge cutoff is (lenses/outdated/claimed_cutoff.py); absent when not asked."""


class RunDetail(TypedDict):
    """An ``outdated run`` summary (``summary.json`` without its provenance), as far as its readers read it."""

    models: dict[str, ModelNumbers]
    """Per model key."""
    overall_key: NotRequired[str]
    as_of: NotRequired[str | None]


class ScoreDetail(TypedDict):
    """An ``outdated score`` summary (one model's generations from another tool), as far as its readers read it."""

    model: str
    categories: dict[str, GroupNumbers]
    overall: GroupNumbers
    as_of: NotRequired[str | None]
    knowledge_date: NotRequired[dict[str, Any] | None]
    gold: NotRequired[dict[str, Any] | None]
    generations_dir: NotRequired[str]


class DateEstimate(TypedDict):
    value: float | None
    n: int
    ci_low: float | None
    ci_high: float | None


class DateEntry(TypedDict):
    """One class's knowledge date: the estimate and its naive floor."""

    estimate: DateEstimate
    naive: DateEstimate


class HalfLife(TypedDict):
    value: float | None


class StalenessCurve(TypedDict):
    dates: list[float | None]
    share: list[float | None]
    low: list[float | None]
    high: list[float | None]
    n: int
    half_life_years: HalfLife


class Staleness(TypedDict):
    per_category: dict[str, StalenessCurve]


class KnowledgeDateBlock(TypedDict):
    """A model's ``knowledge_date`` block, as far as ``chronoprobe.knowledge_date`` and ``staleness`` read it."""

    per_category: dict[str, DateEntry]
    published_cutoff_year: NotRequired[float | None]
    staleness: NotRequired[Staleness | None]


_KNOWLEDGE_VIEW = TypeAdapter(KnowledgeDateBlock)
_RUN_VIEW = TypeAdapter(RunDetail)
_SCORE_VIEW = TypeAdapter(ScoreDetail)


def read_run_detail(detail: Mapping[str, Any], where: str | None = None) -> RunDetail:
    """``detail`` checked against :class:`RunDetail` (a DataError naming ``where`` if it does not fit)."""
    return typed_layout(_RUN_VIEW, detail, where)


def read_score_detail(detail: Mapping[str, Any], where: str | None = None) -> ScoreDetail:
    """``detail`` checked against :class:`ScoreDetail` (a DataError naming ``where`` if it does not fit)."""
    return typed_layout(_SCORE_VIEW, detail, where)


def read_knowledge_block(block: dict[str, Any], where: str, place: str) -> dict[str, Any]:
    """A ``knowledge_date`` block checked against :class:`KnowledgeDateBlock` (the same dict comes back): a
    DataError naming the file (``where``) and the key (``place``, e.g. ``models.smollm2.knowledge_date``) if it
    does not fit."""
    try:
        _KNOWLEDGE_VIEW.validate_python(block)
        return block
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join([place, *(str(part) for part in error["loc"])])
        raise DataError(where, f"unexpected knowledge-date layout ({key}: {error['msg']})") from None


def run_metrics(detail: RunDetail) -> list[Metric]:
    """Every number of an ``outdated run`` summary, per model key."""
    found: list[Metric] = []
    for key, model in detail["models"].items():
        for groups, prefix in ((model["per_category"], ""), (model.get("as_of") or {}, "as_of.")):
            for category, group in groups.items():
                found.extend(group_metrics(key, category, group, prefix))
                found.extend(dated_metrics(key, category, group.get("soft_constraint"), prefix))
        found.extend(knowledge_date_metrics(key, model.get("knowledge_date")))
        found.extend(claimed_cutoff_metrics(key, model.get("claimed_cutoff")))
    return _headlines(found)


def score_metrics(detail: ScoreDetail) -> list[Metric]:
    """Every number of an ``outdated score`` summary (one model)."""
    found: list[Metric] = []
    model = detail["model"]
    prefix = "as_of." if detail.get("as_of") else ""
    groups = {**detail["categories"], ALL: detail["overall"]}
    for category, group in groups.items():
        found.extend(dated_metrics(model, category, group.get("soft_constraint_counts"), prefix))
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


def dated_metrics(model: str, group: str, counts: Mapping[str, Any] | None, prefix: str = "") -> list[Metric]:
    """Two questions the up-to-date share alone mixes up, from a class's soft-constraint counts (one verdict per
    fact): ``dated_pct``, the share of facts with a dated answer, current or outdated ("knows more"), and
    ``current_among_dated_pct``, of those, the share current ("fresher where it answers"; n = the facts it
    dates). Wilson intervals (one unit per fact). None without counts (a folder written before them)."""
    if not counts:
        return []
    up, old = int(counts.get("up-to-date") or 0), int(counts.get("outdated") or 0)
    facts = sum(int(counts.get(v) or 0) for v in VERDICTS)
    return [
        from_estimate(model, group, f"{prefix}dated_pct", wilson(up + old, facts, scale=100.0)),
        from_estimate(model, group, f"{prefix}current_among_dated_pct", wilson(up, up + old, scale=100.0)),
    ]


def knowledge_date_metrics(model: str, block: Mapping[str, Any] | None) -> list[Metric]:
    """The knowledge cutoff and date (decimal years), the date's naive floor, the horizon (a secondary row, off the
    card's headline), the published cutoff, and per category
    the freshness half-life, the share still current at the snapshot and the deployment forecast."""
    if not block:
        return []
    found: list[Metric] = []
    for category, entry in (block.get("per_category") or {}).items():
        found.append(from_estimate(model, category, "knowledge_date", entry["estimate"]))
        found.append(from_estimate(model, category, "knowledge_date_naive", entry["naive"]))
    cutoff = block.get("cutoff") or {}
    if cutoff.get("estimate"):
        found.append(from_estimate(model, ALL, "knowledge_cutoff", cutoff["estimate"]))
    if block.get("horizon"):
        found.append(from_estimate(model, ALL, "knowledge_horizon", block["horizon"]))
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


def claimed_cutoff_metrics(model: str, block: Mapping[str, Any] | None) -> list[Metric]:
    """The cutoff the model claims (decimal year of the month, or of the year it names; n = answers that named a
    date). A year named without a month spans that year: the row's interval is its first to its last month."""
    if not block:
        return []
    year, label = number(block.get("year")), block.get("value")
    low = high = None
    if year is not None and isinstance(label, str) and "-" not in label:
        low, high = year, year + 11.0 / 12.0
    return [
        Metric(
            model=model,
            group=ALL,
            name="claimed_cutoff",
            value=year,
            n=int(block.get("n") or 0),
            ci_low=low,
            ci_high=high,
            unit="year",
        )
    ]


def _headlines(found: list[Metric]) -> list[Metric]:
    for metric in found:
        metric.headline = metric.group == ALL and metric.name in HEADLINE
    return found


def run_dataset(snapshot: Mapping[str, Any] | None) -> str:
    """An ``outdated run``'s dataset label: its snapshot's name (as its provenance records the snapshot)."""
    return str((snapshot or {}).get("name") or "dyknow")


def run_summary(layout: Mapping[str, Any], snapshot: Mapping[str, Any] | None, where: str | None = None) -> Summary:
    """The typed summary of an ``outdated run`` layout: its records, the words its sentences need, the soft
    constraint over every fact as the headline; labelled with its snapshot (see :func:`run_dataset`)."""
    typed = read_run_detail(layout, where)
    per_model, overall = typed["models"], typed.get("overall_key", ALL)
    headline = {
        spec: {f"soft_constraint_pct.{v}": s["per_category"][overall]["soft_constraint_pct"][v] for v in VERDICTS}
        for spec, s in per_model.items()
    }
    notes = [
        note
        for spec, s in per_model.items()
        for note in knowledge_notes(spec, s.get("knowledge_date"), s.get("claimed_cutoff"))
    ]
    return Summary(
        lens="outdated",
        models=list(per_model),
        headline=headline,
        metrics=run_metrics(typed),
        notes=notes,
        dataset=run_dataset(snapshot),
        names={spec: s["name"] for spec, s in per_model.items() if s.get("name")},
    )


def score_summary(layout: Mapping[str, Any], where: str | None = None) -> Summary:
    """The typed summary of an ``outdated score`` layout (another tool's generations, re-scored)."""
    typed = read_score_detail(layout, where)
    model = typed["model"]
    return Summary(
        lens="outdated",
        models=[model],
        headline={},
        metrics=score_metrics(typed),
        notes=knowledge_notes(model, typed.get("knowledge_date")),
        dataset=score_dataset(typed),
        specs={model: f"generations in {typed.get('generations_dir', model)}"},
    )


def knowledge_notes(model: str, block: Mapping[str, Any] | None, claim: Mapping[str, Any] | None = None) -> list[Note]:
    """What the check's sentences say beside the knowledge-date numbers: why no cutoff was estimated, the
    ``--deployed-at`` date as given, what the model said when asked its cutoff."""
    found = []
    too_few = ((block or {}).get("cutoff") or {}).get("too_few")
    if too_few is not None:
        found.append(Note(model=model, name="knowledge_cutoff.too_few", text=str(too_few)))
    deployed = ((block or {}).get("deployed_at") or {}).get("date")
    if deployed is not None:
        found.append(Note(model=model, name="deployed_at", text=str(deployed)))
    said = claim_words(claim)
    if said is not None:
        found.append(Note(model=model, name="claimed_cutoff", text=said))
    return found


def score_dataset(detail: ScoreDetail) -> str:
    """An ``outdated score``'s dataset label: its gold answers."""
    gold = detail.get("gold") or {}
    if gold.get("name"):
        return str(gold["name"])
    if gold.get("path"):
        return Path(str(gold["path"])).name
    return str(gold.get("kind") or "dyknow")
