"""The conflicts lens's numbers as lens-neutral :class:`~chronoprobe.metrics.records.Metric` records (the
run's typed :class:`~chronoprobe.records.runlog.Summary`), from the typed view of its summary layout."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from chronoprobe.metrics.records import Metric, group_metrics
from chronoprobe.records.runlog import Summary, typed_layout

HEADLINE = ("cp", "accuracy_no_context", "accuracy_context", "persuaded_pct", "f1", "confidence", "update_success")
"""The card's headline numbers, per class."""

ClassNumbers = dict[str, Any]
"""One class's numbers under the run's methodology (``cp``, ``f1`` ...) with their ``estimates``."""


class ConflictsDetail(TypedDict):
    """A conflicts summary (``summary.json`` without its provenance), as far as its readers read it."""

    classes: list[str]
    summary: dict[str, dict[str, ClassNumbers]]
    """Per model key, per class of fact."""
    gaps: NotRequired[dict[str, dict[str, Any]]]
    """Per model key: the size sweep's gap (folders from before the sweep have none)."""


_VIEW = TypeAdapter(ConflictsDetail)


def read_detail(detail: Mapping[str, Any], where: str | None = None) -> ConflictsDetail:
    """``detail`` checked against :class:`ConflictsDetail` (a DataError naming ``where`` if it does not fit)."""
    return typed_layout(_VIEW, detail, where)


def metrics(detail: ConflictsDetail) -> list[Metric]:
    """Per model key and class of fact: the class's numbers with their estimates."""
    found: list[Metric] = []
    for key, per_class in detail["summary"].items():
        for cls in detail["classes"]:
            if cls in per_class:
                found.extend(group_metrics(key, cls, per_class[cls]))
    for metric in found:
        metric.headline = metric.name in HEADLINE
        if metric.name == "f1" or metric.name.startswith("f1_per_relation."):  # MuLan's F1 is reported in percent
            metric.unit = "%"
    return found


def dataset(extra: Mapping[str, Any]) -> str:
    """The dataset, and the methodology when it is not the dataset's own (as the provenance's ``extra`` records
    them)."""
    name, methodology = extra.get("dataset"), extra.get("methodology")
    if name and methodology and name != methodology:
        return f"{name} ({methodology} methodology)"
    return str(name or methodology or "conflicts")


def summary(layout: Mapping[str, Any], extra: Mapping[str, Any], where: str | None = None) -> Summary:
    """The typed summary of a conflicts layout: its records, each class's CP, accuracy in context, F1 and update
    success as the headline; labelled with the dataset its provenance's ``extra`` names."""
    typed = read_detail(layout, where)
    headline: dict[str, dict[str, float | None]] = {}
    for spec, per_class in typed["summary"].items():
        headline[spec] = {}
        for name, values in per_class.items():
            for key in ("cp", "accuracy_context", "f1", "update_success"):
                if isinstance(values.get(key), int | float):
                    headline[spec][f"{name}.{key}"] = values[key]
    return Summary(
        lens="conflicts",
        models=list(typed["summary"]),
        headline=headline,
        metrics=metrics(typed),
        dataset=dataset(extra),
    )
