"""The recency lens's numbers as lens-neutral :class:`~chronoprobe.metrics.records.Metric` records (the
run's typed :class:`~chronoprobe.records.runlog.Summary`), from the typed view of its summary layout.

Metric names carry the strategy and context mode as a prefix (``zero-shot.with.accuracy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NotRequired

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from chronoprobe.metrics.records import ALL, Metric, from_estimate, group_metrics, number, unit_for
from chronoprobe.records.runlog import Note, Summary, typed_layout

HEADLINE = ("accuracy", "tolerant_accuracy", "macro_f1", "unparseable_rate", "gate_agreement")
"""The card's headline numbers (over every question), per strategy and context mode."""


class RunNumbers(TypedDict):
    """One model under one strategy and context mode: overall numbers, per stationarity group
    (each a block with its ``estimates``) and per label."""

    model: str
    strategy: str
    context_mode: str
    n: NotRequired[int]
    unparseable: NotRequired[int]
    gate_agreement: NotRequired[float | None]
    accuracy: NotRequired[float | None]
    tolerant_accuracy: NotRequired[float | None]
    macro_f1: NotRequired[float | None]
    tolerant_f1: NotRequired[float | None]
    estimates: NotRequired[dict[str, Any]]
    """Absent in folders from before the intervals."""
    per_class_f1: NotRequired[dict[str, float | None]]
    per_class_f1_estimates: NotRequired[dict[str, Any] | None]


class RecencyDetail(TypedDict):
    """A recency summary (``summary.json`` without its provenance), as far as its readers read it."""

    runs: list[RunNumbers]
    tolerance: NotRequired[int]
    """How many classes off a tolerant answer may be (absent in older folders: 1)."""
    table6: NotRequired[list[dict[str, Any]] | None]
    """Per model, strategy and stationarity: with vs without context (absent in older folders)."""
    table7: NotRequired[list[dict[str, Any]] | None]
    router: NotRequired[list[dict[str, Any]]]
    """The trained router beside each model and strategy, paired, without context (absent in older folders)."""


_VIEW = TypeAdapter(RecencyDetail)


def read_detail(detail: Mapping[str, Any], where: str | None = None) -> RecencyDetail:
    """``detail`` checked against :class:`RecencyDetail` (a DataError naming ``where`` if it does not fit)."""
    return typed_layout(_VIEW, detail, where)


def metrics(detail: RecencyDetail) -> list[Metric]:
    """Per run (model, strategy, context mode): overall, per stationarity group and per label; then
    Tables 6 (the with/without-context deltas) and 7."""
    found: list[Metric] = []
    for entry in detail["runs"]:
        model = entry["model"]
        prefix = f"{entry['strategy']}.{entry['context_mode']}."
        found.extend(group_metrics(model, ALL, entry, prefix))
        for key, group in entry.items():
            if isinstance(group, dict) and "estimates" in group:  # the stationarity groups
                found.extend(group_metrics(model, key, group, prefix))
        per_class = entry.get("per_class_f1_estimates") or {}
        for label, f1 in (entry.get("per_class_f1") or {}).items():
            if isinstance(per_class.get(label), dict):
                found.append(from_estimate(model, label, prefix + "f1", per_class[label]))
            else:
                found.append(Metric(model=model, group=label, name=prefix + "f1", value=number(f1), unit="rate"))
    for row in detail.get("table6") or []:
        model, group = str(row["model"]), str(row["stationarity"])
        deltas = row.get("estimates") or {}
        for key in ("accuracy_delta_pct", "f1_delta_pct"):
            name = f"{row['strategy']}.{key}"
            if isinstance(deltas.get(key), dict):
                found.append(from_estimate(model, group, name, {**deltas[key], "value": row[key]}))
            elif key in row:
                found.append(Metric(model=model, group=group, name=name, value=number(row[key]), unit=unit_for(name)))
    for row in detail.get("table7") or []:
        found.extend(group_metrics(str(row["model"]), "Non-Stationary", row, f"{row['strategy']}."))
    found.extend(router_metrics(detail.get("router") or []))
    for metric in found:
        metric.headline = metric.group == ALL and metric.name.rsplit(".", 1)[-1] in HEADLINE
    return found


def router_metrics(rows: list[dict[str, Any]]) -> list[Metric]:
    """Per model and strategy, without context: the router's accuracy on the model's questions and the paired
    difference router - model (``zero-shot.without.router_accuracy``, ``...router_minus_model_accuracy``)."""
    found: list[Metric] = []
    for row in rows:
        prefix = f"{row['strategy']}.without."
        found.append(from_estimate(str(row["model"]), ALL, prefix + "router_accuracy", row["router_accuracy"]))
        found.append(
            from_estimate(str(row["model"]), ALL, prefix + "router_minus_model_accuracy", row["router_minus_model"])
        )
    return found


def dataset(extra: Mapping[str, Any]) -> str:
    """The questions' source (as the provenance's ``extra`` records it): a hub id as given, a file by its stem."""
    source = str(extra.get("dataset") or "recencyqa")
    if source.startswith("hf:"):
        return source
    return Path(source).stem.lower() or source


TOLERANCE = "tolerance"
"""The run-wide note (model ``""``) of how many classes off a tolerant answer may be."""


def summary(layout: Mapping[str, Any], extra: Mapping[str, Any], where: str | None = None) -> Summary:
    """The typed summary of a recency layout: its records, each run's accuracy and F1 (strict and tolerant) as
    the headline, its tolerance as a note; labelled with the questions' source its provenance's ``extra`` names."""
    typed = read_detail(layout, where)
    headline: dict[str, dict[str, float | None]] = {}
    for run in typed["runs"]:
        numbers = {
            "accuracy": run.get("accuracy"),
            "tolerant_accuracy": run.get("tolerant_accuracy"),
            "macro_f1": run.get("macro_f1"),
            "tolerant_f1": run.get("tolerant_f1"),
        }
        prefix = f"{run['strategy']}.{run['context_mode']}."
        headline.setdefault(run["model"], {}).update({prefix + key: value for key, value in numbers.items()})
    return Summary(
        lens="recency",
        models=list(headline),
        headline=headline,
        metrics=metrics(typed),
        notes=[Note(model="", name=TOLERANCE, text=str(int(typed.get("tolerance", 1))))],
        dataset=dataset(extra),
    )
