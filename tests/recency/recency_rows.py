"""A typed recency row built from the few fields a summary test varies (imported by file name)."""

from __future__ import annotations

from chronoprobe.recency.rows import RecencyRow


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
