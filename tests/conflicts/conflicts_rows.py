"""Typed conflicts rows for hand-computed cases: every field a summary does not read has a default."""

from __future__ import annotations

from typing import Any

from chronoprobe.lenses.conflicts.rows import CompletionRow, PersuasionRow, UpdateRow


def persuasion_row(**fields: Any) -> PersuasionRow:
    fact_id = fields.get("fact_id", "f")
    defaults: dict[str, Any] = {
        "model": "m",
        "item_id": f"{fact_id}/{'cf' if fields.get('counterfactual') else 'true'}",
        "fact_id": fact_id,
        "dataset": "dynamicqa",
        "fact_class": "static",
        "relation": None,
        "counterfactual": False,
        "question": "q",
        "true_answer": "a",
        "inserted": "a",
        "substitute": "b",
        "answers_context": [],
        "answers_no_context": [],
        "clusters_context": [],
        "clusters_no_context": [],
        "cp": 0.0,
        "se_context": 0.0,
        "se_no_context": 0.0,
        "correct_context": True,
        "correct_no_context": True,
        "correct_no_context_original": 1.0,
        "persuaded": None,
        "stubborn": None,
    }
    return PersuasionRow(**{**defaults, **fields})


def completion_row(**fields: Any) -> CompletionRow:
    fact_id = fields.get("fact_id", "f")
    defaults: dict[str, Any] = {
        "model": "m",
        "query_id": f"{fact_id}/0",
        "fact_id": fact_id,
        "fact_class": "c",
        "relation": "P1",
        "template_index": 0,
        "prefix": "p",
        "generation": fields.get("prediction", ""),
        "prediction": "",
        "golds": [],
        "f1": 0.0,
        "confidence": None,
    }
    return CompletionRow(**{**defaults, **fields})


def update_row(**fields: Any) -> UpdateRow:
    defaults: dict[str, Any] = {
        "model": "m",
        "fact_id": "f",
        "fact_class": "c",
        "relation": "P1",
        "query_id": "f/0",
        "original_prediction": "o",
        "new_object": "n",
        "altered_fact": "a",
        "prediction": "",
        "success": False,
    }
    return UpdateRow(**{**defaults, **fields})
