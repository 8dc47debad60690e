"""The trained router beside the audited model, on the same questions, paired.

For each model and strategy, on the questions asked without context: the share for which the model names
the right recency class, the share for which the shipped router does, and the paired difference
(router - model) with its 95% interval and test (:func:`chronoprobe.metrics.paired.paired_proportions`, the
machinery of ``chronoprobe compare``). The router's answer for a RecencyQA question is its grouped-CV
prediction, from the fold that did not train on that question (``out_of_fold.json`` beside the weights), so
the comparison is not in-sample; a question the router has no such prediction for is left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from chronoprobe.datasets.recency_taxonomy import RecencyClass
from chronoprobe.lenses.recency.rows import RecencyRow
from chronoprobe.metrics.paired import paired_proportions
from chronoprobe.metrics.uncertainty import wilson
from chronoprobe.router.model import out_of_fold_predictions, question_key

MODE = "without"
"""The context mode compared: the router reads the question alone."""


def router_beside(
    rows: Sequence[RecencyRow], predictions: dict[str, tuple[int, str]] | None = None
) -> list[dict[str, Any]]:
    """Per model and strategy: n, both accuracies (each with its Wilson interval) and the paired difference."""
    predictions = out_of_fold_predictions() if predictions is None else predictions
    groups: dict[tuple[str, str], list[tuple[bool, bool]]] = defaultdict(list)
    for row in rows:
        found = predictions.get(str(row.q_id))
        if row.context_mode != MODE or found is None or found[1] != question_key(row.question):
            continue
        groups[(row.model, row.strategy)].append((row.correct, found[0] == int(RecencyClass.parse(row.gold))))
    found_rows = []
    for (model, strategy), pairs in sorted(groups.items()):
        ours = [float(a) for a, _ in pairs]
        router = [float(b) for _, b in pairs]
        difference = paired_proportions(ours, router)
        found_rows.append(
            {
                "model": model,
                "strategy": strategy,
                "n": len(pairs),
                "model_accuracy": wilson(int(sum(ours)), len(ours)).to_json(),
                "router_accuracy": wilson(int(sum(router)), len(router)).to_json(),
                "router_minus_model": {
                    "value": difference.delta,
                    "ci_low": difference.ci_low,
                    "ci_high": difference.ci_high,
                    "n": difference.n,
                    "p": difference.p,
                    "test": difference.test,
                },
            }
        )
    return found_rows
