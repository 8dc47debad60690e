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
    """The summary's key for a model shown as ``model``: the name the user gave, else the spec."""
    for entry in summary["provenance"]["models"]:
        if entry.get("name") == model:
            return str(entry.get("given_name") or entry["spec"])
    return model


def _knowledge(block: dict[str, Any], cls: str, metric: str) -> tuple[float | None, int | None]:
    """The knowledge-date numbers of an outdated summary (``knowledge_date`` block)."""
    if metric in ("knowledge_date", "knowledge_date_naive"):
        found = block["per_category"][cls]["estimate" if metric == "knowledge_date" else "naive"]
        return found["value"], found["n"]
    if metric == "published_cutoff":
        return block["published_cutoff_year"], None
    if metric == "knowledge_cutoff":
        return block["cutoff"]["estimate"]["value"], block["cutoff"]["estimate"]["n"]
    if metric == "knowledge_horizon":
        return block["horizon"]["value"], block["horizon"]["n"]
    curve = block["staleness"]["per_category"].get(cls)
    if metric == "freshness_half_life_years":
        return curve["half_life_years"]["value"], curve["half_life_years"]["n"]
    if metric == "still_current_at_snapshot_pct":
        return 100.0 * curve["share"][-1], curve["n"]
    months = "0" if metric == "deployed_at.stale_pct" else metric[len("deployed_at.stale_") : -len("m_pct")]
    point = block["deployed_at"]["per_category"][cls][months]
    return point["value"], point["n"]


def _dated(summary: dict[str, Any], model: str, cls: str, parts: list[str]) -> tuple[float | None, int | None]:
    """``dated_pct`` and ``current_among_dated_pct`` from the soft-constraint counts, by hand."""
    if "overall_key" in summary:
        block = "as_of" if parts[0] == "as_of" else "per_category"
        counts = summary["models"][_name_to_spec(summary, model)][block][cls]["soft_constraint"]
    else:
        counts = (summary["overall"] if cls == "all" else summary["categories"][cls])["soft_constraint_counts"]
    up, old, facts = counts["up-to-date"], counts["outdated"], sum(counts.values())
    if parts[-1] == "dated_pct":
        return (100.0 * (up + old) / facts if facts else None), facts
    return (100.0 * up / (up + old) if up + old else None), up + old


KNOWLEDGE_METRICS = (
    "knowledge_cutoff",
    "knowledge_date",
    "knowledge_horizon",
    "published_cutoff",
    "freshness_half_life",
    "still_current",
    "deployed_at",
)


def expected(folder: Path, model: str, cls: str, metric: str) -> tuple[float | None, int | None]:
    """(value, n) of ``metric`` for ``model`` and ``cls`` as summary.json records it."""
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    parts = metric.split(".")
    if metric == "claimed_cutoff":
        claim = summary["models"][_name_to_spec(summary, model)]["claimed_cutoff"]
        return claim["year"], claim["n"]
    if metric.startswith(KNOWLEDGE_METRICS):
        if "overall_key" in summary:
            return _knowledge(summary["models"][_name_to_spec(summary, model)]["knowledge_date"], cls, metric)
        return _knowledge(summary["knowledge_date"], cls, metric)
    if parts[-1] in ("dated_pct", "current_among_dated_pct"):
        return _dated(summary, model, cls, parts)
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
    if "methods" in summary:  # editing
        return _editing(summary, model, cls, metric)
    spec = _name_to_spec(summary, model)  # recency
    if len(parts) == 3 and parts[2] in ("router_accuracy", "router_minus_model_accuracy"):  # the router beside it
        strategy, _, name = parts
        row = next(r for r in summary["router"] if (r["model"], r["strategy"]) == (spec, strategy))
        found = row["router_accuracy" if name == "router_accuracy" else "router_minus_model"]
        return found["value"], found["n"]
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


def _editing(summary: dict[str, Any], model: str, cls: str, metric: str) -> tuple[float | None, int | None]:
    """``ike-null.harmonic_mean_pct``, ``rome@50%.efficacy_pct``, ``rag-gold.ngram_entropy`` ..."""
    setting, name = metric.split(".")
    method, _, percent = setting.partition("@")
    fraction = float(percent.rstrip("%")) / 100 if percent else 1.0
    results = summary["models"][_name_to_spec(summary, model)]["results"]
    result = next(r for r in results if (r["method"], r["fraction"]) == (method, fraction))
    if name in ("ngram_entropy", "seconds_per_edit"):
        return result["fluency" if name == "ngram_entropy" else name], None
    if name.startswith("locality_"):
        found = result["locality"][name.removeprefix("locality_").removesuffix("_pct")]
    else:
        found = result["scores"]["All" if cls == "all" else cls][name.removesuffix("_pct")]
    return (None if found["value"] is None else 100.0 * found["value"]), found["n"]
