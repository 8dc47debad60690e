"""The editing lens's numbers as lens-neutral :class:`~chronoprobe.metrics.records.Metric` records,
and the typed view of its summary layout that its readers (the report, the CLI) go through."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.metrics.records import ALL, Metric, from_estimate, number, unit_for
from chronoprobe.records.runlog import Difference, Summary, typed_layout

MEASURES = ("efficacy", "paraphrase", "harmonic_mean", "soft_constraint")
_HEADLINE = ("harmonic_mean_pct", "soft_constraint_pct")
SHARED = "shared"
"""The group of a method's measures on the facts every method on all the facts was scored on (recorded only
when they were scored on different facts: RAG gold skips a fact without a gold passage)."""

Estimate = dict[str, Any]
"""An estimate as JSON: value, n, ci_low, ci_high, method, level."""


class EditSetRecord(TypedDict):
    """An :class:`EditSet` as the summary records it (its facts counted, not listed)."""

    source: str
    facts: int
    select: NotRequired[str | None]
    notes: NotRequired[list[str]]
    skipped: NotRequired[dict[str, str]]


@dataclass
class EditSet:
    """The facts to edit for one model, and how they were chosen; :meth:`record` is how the summary keeps it."""

    records: list[EditRecord]
    source: str
    select: str | None = None
    notes: list[str] = field(default_factory=list)
    """Notes about the whole set (how it was chosen)."""
    fact_notes: dict[str, str] = field(default_factory=dict)
    """fact id -> a note about that fact (e.g. its subject), for the facts in ``records``."""
    skipped: dict[str, str] = field(default_factory=dict)

    def all_notes(self) -> list[str]:
        return [*self.notes, *self.fact_notes.values()]

    def record(self) -> EditSetRecord:
        """The set as a summary's ``dataset`` block."""
        return {
            "source": self.source,
            "select": self.select,
            "facts": len(self.records),
            "notes": self.all_notes(),
            "skipped": self.skipped,
        }


class MethodResult(TypedDict):
    """One editing method (or ``unedited``) at one share of the facts, for one model."""

    method: str
    column: NotRequired[str]
    """The name the report's tables use (``IKE``)."""
    fraction: float
    facts: int
    scores: dict[str, dict[str, Any]]
    """Per Table 3 group (``All`` ...): an estimate per measure, and ``facts``."""
    shared: NotRequired[dict[str, Any]]
    """The measures on the facts every method on all the facts was scored on, and ``facts`` (see :data:`SHARED`)."""
    fluency: NotRequired[float | None]
    locality: NotRequired[dict[str, Any] | None]
    scope_hits: NotRequired[Estimate]
    mode: NotRequired[str]
    seconds_per_edit: NotRequired[float | None]
    edit_seconds: NotRequired[list[float]]
    reused: NotRequired[bool]
    skipped: NotRequired[dict[str, str]]
    notes: NotRequired[list[str]]
    hparams_source: NotRequired[str | None]


class ModelResults(TypedDict):
    dataset: EditSetRecord
    results: list[MethodResult]
    name: NotRequired[str]
    """Short label for the report and plots."""
    paired: NotRequired[list[dict[str, Any]]]
    """Each retrieval method against each editing method on the same facts (the harmonic mean's paired
    difference, editing minus retrieval); absent in runs from before it."""


class EditingDetail(TypedDict):
    """An editing summary (``summary.json`` without its provenance), as far as its readers read it."""

    models: dict[str, ModelResults]
    """Per model key."""
    methods: NotRequired[list[str]]


_VIEW = TypeAdapter(EditingDetail)


def read_detail(detail: Mapping[str, Any], where: str | None = None) -> EditingDetail:
    """``detail`` checked against :class:`EditingDetail` (a DataError naming ``where`` if it does not fit)."""
    return typed_layout(_VIEW, detail, where)


def metrics(detail: EditingDetail) -> list[Metric]:
    """Per method (and scaling fraction) and Table 3 group: the four measures in percent; locality and fluency."""
    found: list[Metric] = []
    for key, model in detail["models"].items():
        for result in model["results"]:
            method = result["method"]
            if result["fraction"] != 1.0:
                method += f"@{100 * result['fraction']:g}%"
            for group, scores in result["scores"].items():
                cls = ALL if group == "All" else group
                for measure in MEASURES:
                    found.append(from_estimate(key, cls, f"{method}.{measure}_pct", scores[measure], scale=100.0))
            shared = result.get("shared")
            if shared:
                for measure in MEASURES:
                    found.append(from_estimate(key, SHARED, f"{method}.{measure}_pct", shared[measure], scale=100.0))
            local = result.get("locality")
            if local:
                for part in ("answers_changed", "facts_changed", "up_to_date_lost"):
                    name = f"{method}.locality_{part}_pct"
                    found.append(from_estimate(key, ALL, name, local[part], scale=100.0))
            for name, value in (
                ("ngram_entropy", result.get("fluency")),
                ("seconds_per_edit", result.get("seconds_per_edit")),
            ):
                if value is not None:
                    found.append(
                        Metric(model=key, group=ALL, name=f"{method}.{name}", value=number(value), unit=unit_for(name))
                    )
    for metric in found:
        metric.headline = metric.group == ALL and "@" not in metric.name and metric.name.endswith(_HEADLINE)
    return found


def method_labels(detail: EditingDetail) -> dict[str, str]:
    """Editing methods by the names their reports use (``ike-null`` -> ``IKE``), as the run recorded them."""
    names: dict[str, str] = {}
    for model in detail["models"].values():
        for result in model["results"]:
            if result["method"] and result.get("column"):
                names[result["method"]] = result["column"]
    return names


def dataset(detail: EditingDetail) -> str:
    """``dyknow editing``, with the edit set's file when every model used the same one."""
    sources = {m["dataset"]["source"] for m in detail["models"].values()}
    return "dyknow editing" + (f" ({Path(sources.pop()).name})" if len(sources) == 1 else "")


def paired(detail: EditingDetail) -> list[Difference]:
    """Each retrieval method against each editing method, paired on the facts both were applied to (``b`` the
    editing method, ``a`` the retrieval one: editing minus retrieval), as the run's ``paired`` block holds them."""
    found = []
    for key, model in detail["models"].items():
        for entry in model.get("paired") or []:
            found.append(
                Difference(
                    model=key,
                    a=str(entry.get("retrieval")),
                    b=str(entry.get("editing")),
                    metric=str(entry.get("metric", "")),
                    delta=number(entry.get("delta")),
                    n=entry.get("n"),
                    ci_low=number(entry.get("ci_low")),
                    ci_high=number(entry.get("ci_high")),
                    p=number(entry.get("p")),
                    test=str(entry.get("test") or ""),
                )
            )
    return found


def summary(layout: Mapping[str, Any], where: str | None = None) -> Summary:
    """The typed summary of an editing layout: its records, each method's harmonic mean and soft constraint over
    every fact as the headline, its paired fixes, the methods as the report names them."""
    typed = read_detail(layout, where)
    headline: dict[str, dict[str, float | None]] = {}
    for spec, model in typed["models"].items():
        numbers: dict[str, float | None] = {}
        for result in model["results"]:
            if result["fraction"] != 1.0:
                continue
            overall = result["scores"]["All"]
            for measure in ("harmonic_mean", "soft_constraint"):  # named and scaled as results names them
                value = overall[measure]["value"]
                numbers[f"{result['method']}.{measure}_pct"] = None if value is None else 100.0 * value
        headline[spec] = numbers
    return Summary(
        lens="editing",
        models=list(typed["models"]),
        headline=headline,
        metrics=metrics(typed),
        paired=paired(typed),
        dataset=dataset(typed),
        names={spec: m["name"] for spec, m in typed["models"].items() if m.get("name")},
        labels=method_labels(typed),
    )
