"""The editing lens's numbers as lens-neutral :class:`~chronoprobe.metrics.records.Metric` records."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chronoprobe.metrics.records import ALL, Metric, from_estimate, number

MEASURES = ("efficacy", "paraphrase", "harmonic_mean", "soft_constraint")
_HEADLINE = ("harmonic_mean_pct", "soft_constraint_pct")


def metrics(detail: Mapping[str, Any]) -> list[Metric]:
    """Per method (and scaling fraction) and Table 3 group: the four measures in percent; locality and fluency."""
    found: list[Metric] = []
    for key, model in detail["models"].items():
        for result in model["results"]:
            method = str(result["method"])
            if result["fraction"] != 1.0:
                method += f"@{100 * result['fraction']:g}%"
            for group, scores in result["scores"].items():
                cls = ALL if group == "All" else group
                for measure in MEASURES:
                    found.append(from_estimate(key, cls, f"{method}.{measure}_pct", scores[measure], scale=100.0))
            local = result.get("locality")
            if local:
                for part in ("answers_changed", "facts_changed", "up_to_date_lost"):
                    name = f"{method}.locality_{part}_pct"
                    found.append(from_estimate(key, ALL, name, local[part], scale=100.0))
            for name, field in (("ngram_entropy", "fluency"), ("seconds_per_edit", "seconds_per_edit")):
                if result.get(field) is not None:
                    found.append(Metric(model=key, group=ALL, name=f"{method}.{name}", value=number(result[field])))
    for metric in found:
        metric.headline = metric.group == ALL and "@" not in metric.name and metric.name.endswith(_HEADLINE)
    return found


def method_labels(detail: Mapping[str, Any]) -> dict[str, str]:
    """Editing methods by the names their reports use (``ike-null`` -> ``IKE``), as the run recorded them."""
    names: dict[str, str] = {}
    for model in detail["models"].values():
        for result in model.get("results") or ():
            if isinstance(result, Mapping) and result.get("method") and result.get("column"):
                names[str(result["method"])] = str(result["column"])
    return names


def dataset(detail: Mapping[str, Any]) -> str:
    """``dyknow editing``, with the edit set's file when every model used the same one."""
    sources = {str(m["dataset"]["source"]) for m in detail["models"].values()}
    return "dyknow editing" + (f" ({Path(sources.pop()).name})" if len(sources) == 1 else "")
