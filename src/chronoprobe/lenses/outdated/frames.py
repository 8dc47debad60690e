"""The knowledge date and staleness of an outdated run or score folder as tidy frames:
``chronoprobe.knowledge_date`` and ``chronoprobe.staleness`` (see docs/outdated.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronoprobe.contract.runlog import RUN_LOG, SUMMARY, Run, read_folder
from chronoprobe.errors import DataError
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.lenses.outdated.audit import ResponseRecord
from chronoprobe.lenses.outdated.knowledge_date import rows_knowledge_summary
from chronoprobe.lenses.outdated.metric_records import read_knowledge_block, read_run_detail, read_score_detail
from chronoprobe.metrics.knowledge_date import month_label

if TYPE_CHECKING:
    import pandas

__all__ = ["KNOWLEDGE_DATE_METRICS", "knowledge_date", "staleness"]

KNOWLEDGE_DATE_METRICS = ("knowledge_date", "knowledge_date_naive", "published_cutoff")


def _knowledge_blocks(run: Run | Path | str) -> dict[str, dict[str, Any]]:
    """Model name -> ``knowledge_date`` block of an ``outdated run`` or ``outdated score`` folder (or a
    loaded run); an outdated run written before the block existed gets it computed from its rows."""

    path = run.path if isinstance(run, Run) else Path(run)
    folder = run if isinstance(run, Run) else read_folder(path)
    if folder is None or folder.lens != "outdated":
        raise DataError(str(path), "is not an outdated run or outdated score folder")
    where = str(path / RUN_LOG if (path / RUN_LOG).is_file() else path / SUMMARY)
    if folder.kind == "outdated score":
        block = read_score_detail(folder.detail, where).get("knowledge_date")
        return {folder.models[0].name: read_knowledge_block(block, where, "knowledge_date")} if block else {}
    names = {m.key or m.spec: m.name for m in folder.models}  # keyed as the run's summary and rows key them
    models = read_run_detail(folder.detail, where)["models"]
    blocks = {names[key]: model.get("knowledge_date") for key, model in models.items()}
    if all(blocks.values()):
        return {
            names[key]: read_knowledge_block(block, where, f"summary.detail.models.{key}.knowledge_date")
            for key, model in models.items()
            if (block := model.get("knowledge_date"))
        }
    return _recomputed_blocks(folder, names)


def _recomputed_blocks(run: Run, names: dict[str, str]) -> dict[str, dict[str, Any]]:

    snapshot_name = (run.provenance.snapshot or {}).get("name")
    snapshot = load_snapshot(str(snapshot_name) if snapshot_name else None)
    blocks = {}
    for key, name in names.items():
        rows = [r for r in run.rows if isinstance(r, ResponseRecord) and r.model == key]
        blocks[name] = rows_knowledge_summary(rows, snapshot)
    return blocks


def knowledge_date(run: Run | Path | str) -> pandas.DataFrame:
    """The effective knowledge date of every model of an outdated run or score folder, as a tidy frame.

    One row per model and class (``all`` and each category with enough facts) for the metrics
    ``knowledge_date`` (decimal years: 2021.5 is July 2021) and ``knowledge_date_naive`` (the argmax
    of the as-of curve), plus ``published_cutoff`` where one was given; columns ``model``, ``class``,
    ``metric``, ``value``, ``n``, ``ci_low``, ``ci_high`` and ``month`` (``YYYY-MM``). See docs/outdated.md.
    """
    import pandas  # deferred: pandas

    records = []
    for model, block in _knowledge_blocks(run).items():
        for cls, entry in block["per_category"].items():
            for metric, key in (("knowledge_date", "estimate"), ("knowledge_date_naive", "naive")):
                e = entry[key]
                records.append([model, cls, metric, e["value"], e["n"], e["ci_low"], e["ci_high"]])
        if block.get("published_cutoff_year") is not None:
            records.append([model, "all", "published_cutoff", block["published_cutoff_year"], None, None, None])
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
