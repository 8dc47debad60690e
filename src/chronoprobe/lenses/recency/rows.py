"""One row of a recency evaluation: the typed record from ``run`` through ``summarise`` to ``items.jsonl``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["RecencyRow"]


class RecencyRow(BaseModel):
    """One answer to one (question, context) under one strategy, with its parsed class."""

    model_config = ConfigDict(extra="forbid")

    model: str
    strategy: str
    context_mode: str
    item_id: str
    q_id: int | str
    question: str
    context: str | None
    context_index: int | None
    n_contexts: int
    stationarity: str
    gold: str
    prediction: str | None
    parsed_by: str | None
    correct: bool
    answer: str
    finish_reason: str | None
    template: str | None
