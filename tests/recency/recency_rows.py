"""A typed recency row built from the few fields a summary test varies (imported by file name)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from chronoprobe.lenses.recency.outputs import NAMES
from chronoprobe.lenses.recency.rows import RecencyRow
from chronoprobe.provenance import Provenance


def row(q_id: int, mode: str, stationary: bool, gold: str, pred: str | None, index: int | None = None) -> RecencyRow:
    return RecencyRow(
        **{
            "model": "m",
            "strategy": "zero-shot",
            "context_mode": mode,
            "q_id": q_id,
            "item_id": f"{q_id}:{mode}:{index}",
            "context_index": index,
            "stationarity": "Stationary" if stationary else "Non-Stationary",
            "gold": gold,
            "prediction": pred,
            "correct": gold == pred,
            "parsed_by": "whole" if pred else "none",
            "finish_reason": "stop",
            "question": f"question {q_id}",
            "context": None if index is None else f"context {index}",
            "n_contexts": 0 if index is None else 3,
            "answer": pred or "",
            "template": None,
        }
    )


def write_report(folder: Path, rows: Sequence[RecencyRow], provenance: Provenance | None = None) -> dict[str, Path]:
    """The recency lens's report files for ``rows`` in ``folder``, written as a run writes them (``Lens.report``)."""
    from chronoprobe.lenses.recency import metric_records
    from chronoprobe.lenses.recency.lens import RecencyLens, RecencyRunConfig
    from chronoprobe.lenses.recency.summary import summarise

    folder.mkdir(parents=True, exist_ok=True)
    lens = RecencyLens(RecencyRunConfig())
    lens.layout = summarise(rows)
    lens.report(folder, rows, metric_records.summary(lens.layout, {}), provenance or Provenance())
    return {key: folder / name for key, name in NAMES.items()}
