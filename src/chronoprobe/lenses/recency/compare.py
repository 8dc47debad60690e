"""The recency lens's outcomes item by item, for a paired comparison of two runs (``chronoprobe compare``).

Per strategy and context mode (``zero-shot.with.``), over every question and per stationarity group: each
answer's accuracy, tolerant accuracy, unparseable flag and gate agreement, and its cell of the confusion
matrix for the macro F1 (a statistic of the summed cells). A non-stationary question has an answer per
context: the answers cluster on the question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from chronoprobe.datasets.recency_taxonomy import RecencyClass, parse_label
from chronoprobe.lenses.recency.metric_records import TOLERANCE
from chronoprobe.lenses.recency.rows import RecencyRow
from chronoprobe.lenses.recency.summary import GATE_THRESHOLD
from chronoprobe.metrics import recency as m
from chronoprobe.metrics.paired import Comparable, ItemOutcomes
from chronoprobe.metrics.records import ALL
from chronoprobe.records.runlog import Run

CELLS = m.N_CLASSES * (m.N_CLASSES + 1)
Labelled = tuple[RecencyRow, int, int | None]
"""A row with its gold class and parsed prediction."""


def _macro_f1(sums: np.ndarray) -> np.ndarray:
    return m.macro_f1_of_counts(sums.reshape(sums.shape[0], m.N_CLASSES, m.N_CLASSES + 1))


def _labelled(rows: Sequence[RecencyRow]) -> list[Labelled]:
    found = []
    for r in rows:
        pred = None if r.prediction is None else int(parse_label(r.prediction))  # type: ignore[arg-type]  # a stored prediction parses
        found.append((r, int(RecencyClass.parse(r.gold)), pred))
    return found


def _one_hot(gold: int, pred: int | None) -> tuple[float, ...]:
    cells = [0.0] * CELLS
    cells[m.confusion_cell(gold, pred)] = 1.0
    return tuple(cells)


def _group(prefix: str, group: str, answers: Sequence[Labelled], tolerance: int) -> list[ItemOutcomes]:
    owners = {r.item_id: str(r.q_id) for r, _, _ in answers}  # the unit: the question, whatever its contexts
    common = {"group": group, "clusters": owners, "unit": "questions"}

    def rate(name: str, flag: Callable[[int, int | None], bool], phrase: str, verdict: str = "") -> ItemOutcomes:
        values = {r.item_id: float(flag(g, p)) for r, g, p in answers}
        return ItemOutcomes(
            metric=prefix + name,
            kind="rate",
            values=values,
            phrase=phrase,
            verdict=verdict,
            **common,  # type: ignore[arg-type]  # the fields above
        )

    threshold = int(GATE_THRESHOLD)
    found = [
        rate("accuracy", lambda g, p: p is not None and p == g, "names the right interval"),
        rate(
            "tolerant_accuracy", lambda g, p: m.within_tolerance(g, p, tolerance), "names an interval within one class"
        ),
        rate("unparseable_rate", lambda g, p: p is None, "gives no answer that parses"),
        rate(
            "gate_agreement",
            lambda g, p: (p is None or p <= threshold) == (g <= threshold),
            "decides as the labels would whether to retrieve",
            "better at knowing when an answer needs fresh data",
        ),
    ]
    for name, shifted in (("macro_f1", False), ("tolerant_f1", True)):
        cells = {}
        for r, g, p in answers:
            shown = g if shifted and m.within_tolerance(g, p, tolerance) else p
            cells[r.item_id] = _one_hot(g, shown)
        found.append(
            ItemOutcomes(
                metric=prefix + name,
                group=group,
                kind="statistic",
                values=cells,
                clusters=owners,
                unit="questions",
                statistic=_macro_f1,
            )
        )
    return found


def comparable(run: Run, model: str) -> Comparable:
    """``model``'s outcomes in a recency run folder, and the questions it drew them from."""
    rows = [r for r in run.rows if r.model == model]
    tolerance = int(run.summary.note("", TOLERANCE) or 1)
    found: list[ItemOutcomes] = []
    keys = list(dict.fromkeys((r.strategy, r.context_mode) for r in rows))
    for strategy, mode in keys:
        answers = _labelled([r for r in rows if (r.strategy, r.context_mode) == (strategy, mode)])
        prefix = f"{strategy}.{mode}."
        found += _group(prefix, ALL, answers, tolerance)
        for stationarity in ("Stationary", "Non-Stationary"):
            chosen = [a for a in answers if a[0].stationarity == stationarity]
            if chosen:
                found += _group(prefix, stationarity, chosen, tolerance)
    return Comparable(source=f"questions {run.dataset}", outcomes=found)
