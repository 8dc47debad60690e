"""The conflicts lens's rows, typed from ``run`` through ``summarise`` to ``items.jsonl``.

A persuasion row (DynamicQA's methodology) has no ``kind``; MuLan's methodology writes
completion and update rows, told apart by ``kind``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["CompletionRow", "ConflictsRow", "PersuasionRow", "UpdateRow", "typed_row"]


class ConflictsRow(BaseModel):
    """One row of a conflicts run as ``chronoprobe.load`` reads it back; the methodology decides
    the other fields (see chronoprobe docs conflicts). A run's own rows are one of the subclasses below."""

    model_config = ConfigDict(extra="allow")

    model: str
    """Spec of the model that answered."""


class PersuasionRow(ConflictsRow):
    """One (question, context) item under DynamicQA's methodology: samples with and without context."""

    model_config = ConfigDict(extra="forbid")

    item_id: str
    fact_id: str
    dataset: str
    fact_class: str
    relation: str | None
    counterfactual: bool
    question: str
    true_answer: str
    inserted: str
    substitute: str
    answers_context: list[str]
    answers_no_context: list[str]
    clusters_context: list[int]
    clusters_no_context: list[int]
    cp: float
    se_context: float
    se_no_context: float
    correct_context: bool
    correct_no_context: bool
    correct_no_context_original: float
    """The original code's no-context accuracy: the mean of hitting the true answer and the substitute."""
    persuaded: bool | None
    """None for a true-context item."""
    stubborn: bool | None


class CompletionRow(ConflictsRow):
    """One greedy fact completion under MuLan's methodology, with its F1 and first-token confidence."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["completion"] = "completion"
    query_id: str
    fact_id: str
    fact_class: str
    relation: str
    template_index: int
    prefix: str
    generation: str
    prediction: str
    golds: list[str]
    f1: float
    confidence: float | None
    """None when the backend's tokens do not tell it."""


class UpdateRow(ConflictsRow):
    """One in-context update of a memorised fact under MuLan's methodology."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["update"] = "update"
    fact_id: str
    fact_class: str
    relation: str
    query_id: str
    original_prediction: str
    new_object: str
    altered_fact: str
    prediction: str
    success: bool


def typed_row(row: ConflictsRow) -> PersuasionRow | CompletionRow | UpdateRow:
    """``row`` as its own type (a loosely read row is validated by its ``kind``)."""
    if isinstance(row, PersuasionRow | CompletionRow | UpdateRow):
        return row
    kind = (row.model_extra or {}).get("kind")
    typed: type[PersuasionRow | CompletionRow | UpdateRow] = (
        CompletionRow if kind == "completion" else UpdateRow if kind == "update" else PersuasionRow
    )
    return typed.model_validate(row.model_dump())
