"""The conflicts lens's outcomes item by item, for a paired comparison of two runs (``chronoprobe compare``).

Per class of fact, as the run's records are:

- DynamicQA's methodology: per counterfactual item (one per fact) whether the model took the context's answer
  (persuaded) or kept its own (stubborn); per item its accuracy with context and its CP and semantic entropy
  (a fact's true and counterfactual contexts: clustered on the fact); per fact its accuracy without context;
- MuLan's methodology: per query its F1 (left out when the prediction is empty) and confidence (a fact's
  templates: clustered on the fact), per update prompt whether it succeeded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from chronoprobe.lenses.conflicts.rows import CompletionRow, PersuasionRow, UpdateRow, typed_row
from chronoprobe.metrics import mulan as mm
from chronoprobe.metrics.paired import Comparable, ItemOutcomes, Kind
from chronoprobe.records.runlog import Run


def _outcome(
    metric: str,
    group: str,
    kind: Kind,
    rows: Sequence[Any],
    key: Callable[[Any], str],
    value: Callable[[Any], float | None],
    *,
    scale: float = 1.0,
    phrase: str = "",
    verdict: str = "",
) -> ItemOutcomes:
    """One metric over ``rows`` keyed by ``key``, each item's unit its fact (clustered where a fact has several)."""
    values: dict[str, float] = {}
    owners: dict[str, str] = {}
    for row in rows:
        found = value(row)
        if found is None or math.isnan(found):
            continue
        values[key(row)] = float(found)
        owners[key(row)] = row.fact_id
    return ItemOutcomes(
        metric=metric,
        group=group,
        kind=kind,
        values=values,
        clusters=owners,  # the unit is the fact, whatever its items
        scale=scale,
        unit="facts",
        phrase=phrase,
        verdict=verdict,
    )


def _persuasion(rows: Sequence[PersuasionRow], group: str) -> list[ItemOutcomes]:
    counterfactual = [r for r in rows if r.counterfactual]
    first_per_fact = list({r.fact_id: r for r in reversed(rows)}.values())  # the summary's row per fact: its first

    def item(r: PersuasionRow) -> str:
        return r.item_id

    def fact(r: PersuasionRow) -> str:
        return r.fact_id

    return [
        _outcome(
            "persuaded_pct",
            group,
            "rate",
            counterfactual,
            fact,
            lambda r: float(r.persuaded is True),
            scale=100.0,
            phrase="takes the context's answer",
            verdict="more persuadable",
        ),
        _outcome(
            "stubborn_pct",
            group,
            "rate",
            counterfactual,
            fact,
            lambda r: float(r.stubborn is True),
            scale=100.0,
            phrase="keeps its own answer",
        ),
        _outcome("accuracy_context", group, "rate", rows, item, lambda r: float(r.correct_context)),
        _outcome("accuracy_no_context", group, "rate", first_per_fact, fact, lambda r: float(r.correct_no_context)),
        _outcome("cp", group, "mean", rows, item, lambda r: r.cp),
        _outcome("cp_true_context", group, "mean", [r for r in rows if not r.counterfactual], item, lambda r: r.cp),
        _outcome("cp_counterfactual", group, "mean", counterfactual, item, lambda r: r.cp),
        _outcome("se_context", group, "mean", rows, item, lambda r: r.se_context),
        _outcome("se_no_context", group, "mean", first_per_fact, fact, lambda r: r.se_no_context),
    ]


def _completion(
    rows: Sequence[CompletionRow], updates: Sequence[UpdateRow], group: str, fidelity: Any
) -> list[ItemOutcomes]:
    scored = [r for r in rows if not mm.is_empty_prediction(r.prediction)]

    def query(r: CompletionRow) -> str:
        return r.query_id

    return [
        _outcome("f1", group, "mean", scored, query, lambda r: r.f1, scale=100.0),
        _outcome("confidence", group, "mean", rows, query, lambda r: r.confidence),
        _outcome(
            "update_success",
            group,
            "rate",
            updates,
            lambda u: u.query_id,
            lambda u: float(mm.update_succeeded(u.prediction, u.new_object, fidelity=fidelity)),
            phrase="takes up the update",
        ),
    ]


def comparable(run: Run, model: str) -> Comparable:
    """``model``'s outcomes in a conflicts run folder, per class, and the dataset the run asked."""
    mine = [typed_row(r) for r in run.rows if r.model == model]
    config = run.config
    completion = getattr(config, "completion", None)
    fidelity = getattr(completion, "fidelity", "corrected")
    classes = list(dict.fromkeys(r.fact_class for r in mine))
    found: list[ItemOutcomes] = []
    for group in classes:
        members = [r for r in mine if r.fact_class == group]
        persuasion = [r for r in members if isinstance(r, PersuasionRow)]
        if persuasion:
            found += _persuasion(persuasion, group)
        completions = [r for r in members if isinstance(r, CompletionRow)]
        if completions:
            updates = [r for r in members if isinstance(r, UpdateRow)]
            found += _completion(completions, updates, group, fidelity)
    data = getattr(config, "data", None)
    source = f"dataset {run.dataset}" + (f" ({data.name})" if data is not None and hasattr(data, "name") else "")
    return Comparable(source=source, outcomes=found)
