"""The recency lens's numbers as lens-neutral :class:`~chronoprobe.metrics.records.Metric` records.

Metric names carry the strategy and context mode as a prefix (``zero-shot.with.accuracy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chronoprobe.metrics.records import ALL, Metric, from_estimate, group_metrics, number, unit_for

HEADLINE = ("accuracy", "tolerant_accuracy", "macro_f1", "unparseable_rate")
"""The card's headline numbers (over every question), per strategy and context mode."""


def metrics(detail: Mapping[str, Any]) -> list[Metric]:
    """Per run (model, strategy, context mode): overall, per stationarity group and per label; then
    Tables 6 (the with/without-context deltas) and 7."""
    found: list[Metric] = []
    for entry in detail["runs"]:
        model = str(entry["model"])
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
    for entry in detail.get("table6") or []:
        model, group = str(entry["model"]), str(entry["stationarity"])
        deltas = entry.get("estimates") or {}
        for key in ("accuracy_delta_pct", "f1_delta_pct"):
            name = f"{entry['strategy']}.{key}"
            if isinstance(deltas.get(key), dict):
                found.append(from_estimate(model, group, name, {**deltas[key], "value": entry[key]}))
            elif key in entry:
                found.append(Metric(model=model, group=group, name=name, value=number(entry[key]), unit=unit_for(name)))
    for entry in detail.get("table7") or []:
        found.extend(group_metrics(str(entry["model"]), "Non-Stationary", entry, f"{entry['strategy']}."))
    for metric in found:
        metric.headline = metric.group == ALL and metric.name.rsplit(".", 1)[-1] in HEADLINE
    return found


def dataset(provenance: Mapping[str, Any]) -> str:
    """The questions' source: a hub id as given, a file by its stem."""
    extra = provenance.get("extra") or {}
    source = str(extra.get("dataset") or "recencyqa")
    if source.startswith("hf:"):
        return source
    return Path(source).stem.lower() or source
