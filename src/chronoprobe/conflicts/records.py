"""The conflicts lens's numbers as lens-neutral :class:`~chronoprobe.metrics.records.Metric` records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chronoprobe.metrics.records import Metric, group_metrics

HEADLINE = ("cp", "accuracy_no_context", "accuracy_context", "persuaded_pct", "f1", "confidence", "update_success")
"""The card's headline numbers, per class."""


def metrics(detail: Mapping[str, Any]) -> list[Metric]:
    """Per model key and class of fact: the class's numbers with their estimates."""
    found: list[Metric] = []
    for key, per_class in detail["summary"].items():
        for cls in detail["classes"]:
            if cls in per_class:
                found.extend(group_metrics(key, cls, per_class[cls]))
    for metric in found:
        metric.headline = metric.name in HEADLINE
        if metric.name == "f1":  # MuLan's F1 is reported in percent
            metric.unit = "%"
    return found


def dataset(provenance: Mapping[str, Any]) -> str:
    """The dataset, and the methodology when it is not the dataset's own."""
    extra = provenance.get("extra") or {}
    name, methodology = extra.get("dataset"), extra.get("methodology")
    if name and methodology and name != methodology:
        return f"{name} ({methodology} methodology)"
    return str(name or methodology or "conflicts")
