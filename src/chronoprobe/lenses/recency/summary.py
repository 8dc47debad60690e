"""From per-item rows (typed :class:`~chronoprobe.lenses.recency.rows.RecencyRow`) to every reported number
(overall, Table 6, Table 7, confusion matrices)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from chronoprobe.datasets.recency_taxonomy import RecencyClass, parse_label
from chronoprobe.lenses.recency.rows import RecencyRow
from chronoprobe.metrics import recency as m
from chronoprobe.metrics.uncertainty import wilson_clustered, wilson_from_flags

GATE_THRESHOLD = RecencyClass.A_YEAR
"""The horizon of the gate whose agreement with the labels the summary reports (``recency gate``'s default)."""


def _labels(rows: Sequence[RecencyRow]) -> tuple[list[int], list[int | None]]:
    gold = [int(RecencyClass.parse(r.gold)) for r in rows]
    pred = [None if r.prediction is None else int(parse_label(r.prediction)) for r in rows]  # type: ignore[arg-type]  # a stored prediction is a label the lens parsed, never None
    return gold, pred


def _group(rows: Sequence[RecencyRow], *keys: str) -> dict[tuple[Any, ...], list[RecencyRow]]:
    groups: dict[tuple[Any, ...], list[RecencyRow]] = defaultdict(list)
    for row in rows:
        groups[tuple(getattr(row, k) for k in keys)].append(row)
    return dict(groups)


def _questions(rows: Sequence[RecencyRow]) -> list[Any]:
    """Each row's question: the unit its intervals cluster on (a non-stationary question has a row per context)."""
    return [r.q_id for r in rows]


def overall(rows: Sequence[RecencyRow], tolerance: int = 1) -> dict[str, Any]:
    gold, pred = _labels(rows)
    questions = _questions(rows)
    summary: dict[str, Any] = dict(m.classification_summary(gold, pred, tolerance))
    summary["per_class_f1"] = {RecencyClass(c).label: f for c, f in m.per_class_f1(gold, pred).items()}
    summary["per_class_f1_estimates"] = {
        RecencyClass(c).label: e.to_json() for c, e in m.per_class_f1_estimates(gold, pred, questions).items()
    }
    summary["confusion"] = m.confusion_matrix(gold, pred).tolist()
    summary["parsed_by"] = dict(Counter(r.parsed_by for r in rows))
    summary["truncated"] = sum(r.finish_reason == "length" for r in rows)
    summary["estimates"] = m.classification_estimates(gold, pred, tolerance, questions)
    agrees = m.gate_agrees(gold, pred, int(GATE_THRESHOLD))
    summary["gate_threshold"] = GATE_THRESHOLD.label
    summary["gate_agreement"] = sum(agrees) / len(agrees) if agrees else None
    summary["estimates"]["gate_agreement"] = wilson_clustered(agrees, questions).to_json()
    return summary


def _with_estimates(rows: Sequence[RecencyRow], tolerance: int) -> dict[str, Any]:
    gold, pred = _labels(rows)
    return {
        **m.classification_summary(gold, pred, tolerance),
        "estimates": m.classification_estimates(gold, pred, tolerance, _questions(rows)),
    }


def stationarity_table(rows: Sequence[RecencyRow]) -> list[dict[str, Any]]:
    """Table 6: accuracy and macro F1 per stationarity, with vs without context, and the Δ%."""
    table = []
    for (model, strategy), group in _group(rows, "model", "strategy").items():
        for stationarity in ("Stationary", "Non-Stationary"):
            entry: dict[str, Any] = {"model": model, "strategy": strategy, "stationarity": stationarity}
            estimates: dict[str, Any] = {}
            asked: dict[str, list[tuple[Any, int, int | None]]] = {}
            for mode in ("with", "without"):
                subset = [r for r in group if r.stationarity == stationarity and r.context_mode == mode]
                gold, pred = _labels(subset)
                asked[mode] = [(r.q_id, g, p) for r, g, p in zip(subset, gold, pred, strict=True)]
                entry[f"n_{mode}"] = len(subset)
                entry[f"accuracy_{mode}"] = m.accuracy(gold, pred)
                entry[f"f1_{mode}"] = m.macro_f1(gold, pred)
                estimates[f"accuracy_{mode}"] = wilson_clustered(
                    [p == g for g, p in zip(gold, pred, strict=True)], _questions(subset)
                ).to_json()
                estimates[f"f1_{mode}"] = m.macro_f1_estimate(gold, pred, questions=_questions(subset)).to_json()
            entry["accuracy_delta_pct"] = m.delta_percent(entry["accuracy_with"], entry["accuracy_without"])
            entry["f1_delta_pct"] = m.delta_percent(entry["f1_with"], entry["f1_without"])
            deltas = m.delta_percent_estimates(
                asked["with"],
                asked["without"],
                {"accuracy": entry["accuracy_delta_pct"], "f1": entry["f1_delta_pct"]},
            )
            estimates["accuracy_delta_pct"] = deltas["accuracy"].to_json()
            estimates["f1_delta_pct"] = deltas["f1"].to_json()
            entry["estimates"] = estimates
            table.append(entry)
    return table


def transition_pairs(rows: Sequence[RecencyRow]) -> list[tuple[RecencyRow, RecencyRow]]:
    """(C1 row, C2 row) for every pair i < j of a non-stationary question's context rows, in dataset order."""
    pairs = []
    with_rows = [r for r in rows if r.context_mode == "with" and r.stationarity == "Non-Stationary"]
    for _, group in _group(with_rows, "model", "strategy", "q_id").items():
        ordered = sorted(group, key=lambda r: r.context_index or 0)  # rows with context always have an index
        for first, second in combinations(ordered, 2):
            if first.gold != second.gold:
                pairs.append((first, second))
    return pairs


def transition_table(rows: Sequence[RecencyRow]) -> list[dict[str, Any]]:
    """Table 7: RL1 / RL2 accuracy and transition accuracy (both right), per model and strategy."""
    table = []
    pairs = transition_pairs(rows)
    by_key: dict[tuple[str, str], list[tuple[RecencyRow, RecencyRow]]] = defaultdict(list)
    for first, second in pairs:
        by_key[(first.model, first.strategy)].append((first, second))
    with_ns = [r for r in rows if r.context_mode == "with" and r.stationarity == "Non-Stationary"]
    for (model, strategy), group in _group(with_ns, "model", "strategy").items():
        key_pairs = by_key.get((model, strategy), [])
        gold1, pred1 = _labels([a for a, _ in key_pairs])
        gold2, pred2 = _labels([b for _, b in key_pairs])
        owners = [a.q_id for a, _ in key_pairs]  # a question with three contexts gives three pairs
        questions = _group(group, "q_id")
        table.append(
            {
                "model": model,
                "strategy": strategy,
                "questions": len(questions),
                "pairs": len(key_pairs),
                "rl1_accuracy": m.accuracy(gold1, pred1),
                "rl2_accuracy": m.accuracy(gold2, pred2),
                "transition_accuracy": m.transition_accuracy(list(zip(gold1, pred1, gold2, pred2, strict=True))),
                "all_contexts_right": (sum(all(r.correct for r in g) for g in questions.values()) / len(questions))
                if questions
                else None,
                "estimates": {
                    "rl1_accuracy": wilson_clustered(
                        [p == g for g, p in zip(gold1, pred1, strict=True)], owners
                    ).to_json(),
                    "rl2_accuracy": wilson_clustered(
                        [p == g for g, p in zip(gold2, pred2, strict=True)], owners
                    ).to_json(),
                    "transition_accuracy": wilson_clustered(
                        [p1 == g1 and p2 == g2 for g1, p1, g2, p2 in zip(gold1, pred1, gold2, pred2, strict=True)],
                        owners,
                    ).to_json(),
                    "all_contexts_right": wilson_from_flags(
                        [all(r.correct for r in g) for g in questions.values()]
                    ).to_json(),
                },
            }
        )
    return table


def summarise(rows: Sequence[RecencyRow], tolerance: int = 1) -> dict[str, Any]:
    runs = []
    for (model, strategy, mode), group in _group(rows, "model", "strategy", "context_mode").items():
        entry = {"model": model, "strategy": strategy, "context_mode": mode}
        entry.update(overall(group, tolerance))
        for stationarity in ("Stationary", "Non-Stationary"):
            subset = [r for r in group if r.stationarity == stationarity]
            entry[stationarity] = _with_estimates(subset, tolerance)
        runs.append(entry)
    return {
        "labels": [c.label for c in RecencyClass],
        "tolerance": tolerance,
        "runs": runs,
        "table6": stationarity_table(rows),
        "table7": transition_table(rows),
    }
