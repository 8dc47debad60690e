"""The one reader of the summary layouts the built-in lenses wrote before metric records: a run log whose
summary holds only the lens's layout (``summary.detail``), and a folder with a ``summary.json`` alone (written
before ``run.json`` existed; an ``outdated score`` folder to this day).

Each layout becomes the typed :class:`~chronoprobe.records.runlog.Summary` a run logs today, through the lens's
own ``metric_records`` (the same functions its runs make their records with, so an old folder reads exactly
as a new one). :func:`chronoprobe.records.runlog.read_folder` finds this module by name
(:data:`chronoprobe.plugins.OLD_LAYOUTS`); a lens written after the records has no old layout to read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from chronoprobe.lenses.conflicts import metric_records as conflicts
from chronoprobe.lenses.editing import metric_records as editing
from chronoprobe.lenses.outdated import metric_records as outdated
from chronoprobe.lenses.recency import metric_records as recency
from chronoprobe.provenance import Provenance
from chronoprobe.records.runlog import Summary, layout_errors

__all__ = ["file_summary", "run_log_summary"]

Reader = Callable[[Mapping[str, Any], Provenance], Summary]
"""A layout (without its provenance) and the run's provenance -> the typed summary."""

_READERS: dict[str, tuple[str, Reader]] = {
    "outdated run": ("outdated", lambda layout, provenance: outdated.run_summary(layout, provenance.snapshot)),
    "outdated score": ("outdated", lambda layout, provenance: outdated.score_summary(layout)),
    "conflicts run": ("conflicts", lambda layout, provenance: conflicts.summary(layout, provenance.extra)),
    "recency eval": ("recency", lambda layout, provenance: recency.summary(layout, provenance.extra)),
    "editing run": ("editing", lambda layout, provenance: editing.summary(layout)),
}
"""Kind (as the folder marker names it) -> the lens and its layout's reader, in the order a layout is tried."""

_LENS_KINDS = {
    "outdated": "outdated run",
    "conflicts": "conflicts run",
    "recency": "recency eval",
    "editing": "editing run",
}


def _recognised(data: Mapping[str, Any], kind: str | None) -> str | None:
    """The kind of run an older ``summary.json`` is from: its marker's, else what its keys say; None for none."""
    if kind in _READERS:
        return kind
    if "categories" in data and "overall" in data and "generations_dir" in data:
        return "outdated score"
    if "models" in data and "overall_key" in data and "methods" not in data:
        return "outdated run"
    if "classes" in data and "summary" in data:
        return "conflicts run"
    if "runs" in data and ("labels" in data or "table6" in data):
        return "recency eval"
    if "models" in data and "methods" in data:
        return "editing run"
    return None


def file_summary(data: dict[str, Any], kind: str | None, path: Path) -> tuple[str, str, Summary] | None:
    """``(lens, kind, summary)`` of an older ``summary.json`` (``data``, its provenance included; ``kind`` from the
    folder marker, if any); None when no built-in lens wrote it. A layout that does not read is a DataError
    naming ``path``."""
    found = _recognised(data, kind)
    if found is None:
        return None
    lens, reader = _READERS[found]
    recorded = data.get("provenance")
    provenance = Provenance.model_validate(recorded if isinstance(recorded, dict) else {})
    with layout_errors(path, found):
        summary = reader({k: v for k, v in data.items() if k != "provenance"}, provenance)
    return lens, found, summary


def run_log_summary(
    lens: str, kind: str | None, layout: Mapping[str, Any], provenance: Provenance, path: Path
) -> Summary | None:
    """The typed summary of a run log written before metric records (its lens's layout, ``summary.detail``);
    None for a lens whose layouts this reader does not know (a plug-in's); a layout that does not read is a
    DataError naming ``path``."""
    found = kind if kind in _READERS and _READERS[kind][0] == lens else _LENS_KINDS.get(lens)
    if found is None:
        return None
    with layout_errors(path, found):
        return _READERS[found][1](layout, provenance)
