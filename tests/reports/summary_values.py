"""Read a number straight out of a run folder's summary.json, written apart from the tidy reader
so that a card (or a table) can be checked against the file itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCORE_BLOCKS = {
    "soft_constraint_pct": "soft_constraint",
    "average_pct": "average",
    "inconsistency_pct": "inconsistency",
}


def _name_to_spec(summary: dict[str, Any], model: str) -> str:
    for entry in summary["provenance"]["models"]:
        if entry.get("name") == model:
            return str(entry["spec"])
    return model


def expected(folder: Path, model: str, cls: str, metric: str) -> tuple[float | None, int | None]:
    """(value, n) of ``metric`` for ``model`` and ``cls`` as summary.json records it."""
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    parts = metric.split(".")
    if "overall_key" in summary:  # outdated run
        block = "per_category"
        if parts[0] == "as_of":
            block, parts = "as_of", parts[1:]
        estimates = summary["models"][_name_to_spec(summary, model)][block][cls]["estimates"]
        found = estimates[parts[0]] if len(parts) == 1 else estimates[parts[0]][parts[1]]
        return found["value"], found["n"]
    if "generations_dir" in summary:  # outdated score: shares, shown in percent
        group = summary["overall"] if cls == "all" else summary["categories"][cls]
        estimates = group["estimates"][SCORE_BLOCKS[parts[0]]]
        found = estimates if len(parts) == 1 else estimates[parts[1]]
        return (None if found["value"] is None else 100.0 * found["value"]), found["n"]
    if "classes" in summary:  # conflicts
        estimates = summary["summary"][_name_to_spec(summary, model)][cls]["estimates"]
        found = estimates[parts[0]] if len(parts) == 1 else estimates[parts[0]][parts[1]]
        return found["value"], found["n"]
    spec = _name_to_spec(summary, model)  # recency
    if len(parts) == 3:
        strategy, context, name = parts
        entry = next(
            r for r in summary["runs"] if (r["model"], r["strategy"], r["context_mode"]) == (spec, strategy, context)
        )
        if name == "f1":
            return entry["per_class_f1"][cls], entry["per_class_f1_estimates"][cls]["n"]
        group = entry if cls == "all" else entry[cls]
        return group["estimates"][name]["value"], group["estimates"][name]["n"]
    strategy, name = parts
    if name.endswith("_delta_pct"):
        entry = next(
            r for r in summary["table6"] if (r["model"], r["strategy"], r["stationarity"]) == (spec, strategy, cls)
        )
        return entry[name], entry["estimates"][name]["n"]
    entry = next(r for r in summary["table7"] if (r["model"], r["strategy"]) == (spec, strategy))
    return entry["estimates"][name]["value"], entry["estimates"][name]["n"]
