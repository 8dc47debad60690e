"""The knowledge date and staleness of an outdated run or score folder as tidy frames:
``chronoprobe.knowledge_date`` and ``chronoprobe.staleness`` (see docs/outdated.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronoprobe.errors import DataError
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.lenses.outdated.audit import ResponseRecord
from chronoprobe.lenses.outdated.knowledge_date import rows_knowledge_summary
from chronoprobe.lenses.outdated.metric_records import (
    knowledge_date_metrics,
    read_knowledge_block,
    read_run_detail,
    read_score_detail,
)
from chronoprobe.metrics.knowledge_date import month_label
from chronoprobe.records.runlog import SUMMARY, Metric, Run, read_folder, read_json_object

if TYPE_CHECKING:
    import pandas

__all__ = ["KNOWLEDGE_DATE_METRICS", "knowledge_date", "staleness"]

KNOWLEDGE_DATE_METRICS = ("knowledge_date", "knowledge_date_naive", "published_cutoff")


def _outdated_folder(run: Run | Path | str) -> Run:
    path = run.path if isinstance(run, Run) else Path(run)
    folder = run if isinstance(run, Run) else read_folder(path)
    if folder is None or folder.lens != "outdated":
        raise DataError(str(path), "is not an outdated run or outdated score folder")
    return folder


def _knowledge_records(run: Run | Path | str) -> dict[str, list[Metric]]:
    """Model name -> its knowledge-date records (of :data:`KNOWLEDGE_DATE_METRICS`), in the order the run logs
    them; an outdated run written before the knowledge date gets them computed from its rows."""
    folder = _outdated_folder(run)
    names = {m.key or m.spec: m.name for m in folder.models}  # keyed as the run's summary and rows key them
    found: dict[str, list[Metric]] = {}
    for metric in folder.summary.metrics:
        if metric.name in KNOWLEDGE_DATE_METRICS and metric.model in names:
            found.setdefault(names[metric.model], []).append(metric)
    if folder.kind == "outdated score" or all(name in found for name in names.values()):
        return found
    return {
        names[key]: [m for m in knowledge_date_metrics(key, block) if m.name in KNOWLEDGE_DATE_METRICS]
        for key, block in _recomputed_blocks(folder, list(names)).items()
    }


def _knowledge_blocks(run: Run | Path | str) -> dict[str, dict[str, Any]]:
    """Model name -> ``knowledge_date`` block of an ``outdated run`` or ``outdated score`` folder (or a loaded
    run), with the staleness curves: from the report's ``summary.json`` (the curves are the report's, not
    numbers of the run's records); an outdated run written before the block existed gets it from its rows."""
    folder = _outdated_folder(run)
    path = folder.path / SUMMARY
    where = str(path)
    layout = read_json_object(path) if path.is_file() else {}
    if folder.kind == "outdated score":
        block = read_score_detail(layout, where).get("knowledge_date")
        return {folder.models[0].name: read_knowledge_block(block, where, "knowledge_date")} if block else {}
    names = {m.key or m.spec: m.name for m in folder.models}  # keyed as the run's summary and rows key them
    models: dict[str, Any] = dict(read_run_detail(layout, where)["models"]) if layout else {}
    blocks = {key: (models.get(key) or {}).get("knowledge_date") for key in names}
    if all(blocks.values()):
        return {
            names[key]: read_knowledge_block(block, where, f"models.{key}.knowledge_date")
            for key, block in blocks.items()
            if block
        }
    return {names[key]: block for key, block in _recomputed_blocks(folder, list(names)).items()}


def _recomputed_blocks(run: Run, keys: list[str]) -> dict[str, dict[str, Any]]:

    snapshot_name = (run.provenance.snapshot or {}).get("name")
    snapshot = load_snapshot(str(snapshot_name) if snapshot_name else None)
    blocks = {}
    for key in keys:
        rows = [r for r in run.rows if isinstance(r, ResponseRecord) and r.model == key]
        blocks[key] = rows_knowledge_summary(rows, snapshot)
    return blocks


def knowledge_date(run: Run | Path | str) -> pandas.DataFrame:
    """The effective knowledge date of every model of an outdated run or score folder, as a tidy frame.

    One row per model and class (``all`` and each category with enough facts) for the metrics
    ``knowledge_date`` (decimal years: 2021.5 is July 2021) and ``knowledge_date_naive`` (the argmax
    of the as-of curve), plus ``published_cutoff`` where one was given; columns ``model``, ``class``,
    ``metric``, ``value``, ``n``, ``ci_low``, ``ci_high`` and ``month`` (``YYYY-MM``). See docs/outdated.md.
    """
    import pandas  # deferred: pandas

    records = [
        [model, m.group, m.name, m.value, m.n, m.ci_low, m.ci_high]
        for model, found in _knowledge_records(run).items()
        for m in found
    ]
    frame = pandas.DataFrame(records, columns=["model", "class", "metric", "value", "n", "ci_low", "ci_high"])
    frame["n"] = pandas.array(frame["n"].tolist(), dtype="Int64")
    frame["month"] = [month_label(v) if v == v and v is not None else None for v in frame["value"]]
    return frame


def staleness(run: Run | Path | str) -> pandas.DataFrame:
    """The staleness curves of an outdated run or score folder, one row per model, class and month.

    Columns: ``model``, ``class``, ``date`` (decimal years from the model's knowledge date to the
    snapshot), ``still_current`` (share of the values it knew at its knowledge date that still held),
    ``ci_low``, ``ci_high`` (95% bootstrap), ``n`` (values followed), ``half_life_years``.
    """
    import pandas  # deferred: pandas

    records = []
    for model, block in _knowledge_blocks(run).items():
        for cls, curve in ((block.get("staleness") or {}).get("per_category") or {}).items():
            half = curve["half_life_years"]["value"]
            for date, share, low, high in zip(curve["dates"], curve["share"], curve["low"], curve["high"], strict=True):
                records.append([model, cls, date, share, low, high, curve["n"], half])
    columns = ["model", "class", "date", "still_current", "ci_low", "ci_high", "n", "half_life_years"]
    return pandas.DataFrame(records, columns=columns)
