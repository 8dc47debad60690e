"""Knows more against fresher where both answer: the two questions the up-to-date share alone mixes up (issue 40 §1)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.lenses.outdated.compare import Answer, outcomes
from chronoprobe.lenses.outdated.knowledge_date import dated_answers
from chronoprobe.lenses.outdated.metric_records import dated_metrics
from chronoprobe.metrics.knowledge_date import (
    date_of_sums,
    decimal_year,
    estimate_knowledge_date,
    fact_logliks,
    monthly_grid,
)
from chronoprobe.metrics.paired import compare_outcomes


def test_the_two_rows_come_from_the_soft_constraint_counts() -> None:
    rows = {
        m.name: m
        for m in dated_metrics("m", "all", {"up-to-date": 5, "outdated": 6, "irrelevant": 118, "ambiguous": 1})
    }
    dated, current = rows["dated_pct"], rows["current_among_dated_pct"]
    assert dated.value == pytest.approx(100 * 11 / 130) and dated.n == 130
    assert current.value == pytest.approx(100 * 5 / 11) and current.n == 11  # n = the facts it dates
    assert current.ci_low is not None and current.ci_high is not None
    assert current.ci_low < current.value < current.ci_high  # Wilson: never zero width
    none = {m.name: m for m in dated_metrics("m", "all", {"up-to-date": 0, "outdated": 0, "irrelevant": 4})}
    assert none["current_among_dated_pct"].value is None and none["current_among_dated_pct"].n == 0
    assert dated_metrics("m", "all", None) == []


def _answers(verdicts: dict[str, str]) -> list[Answer]:
    return [Answer(fact, "c", "0", verdict, None, ()) for fact, verdict in verdicts.items()]  # type: ignore[arg-type]


def test_fresher_is_compared_only_on_the_facts_both_date() -> None:
    # A dates f1-f4 (2 current), B dates f1-f8 (6 current): B knows more; on f1-f4, both date them
    a = _answers(
        {"f1": "up-to-date", "f2": "up-to-date", "f3": "outdated", "f4": "outdated"}
        | {f"f{i}": "irrelevant" for i in range(5, 9)}
    )
    b = _answers(
        {"f1": "up-to-date", "f2": "outdated", "f3": "up-to-date", "f4": "outdated"}
        | {f"f{i}": "up-to-date" for i in range(5, 9)}
    )
    found_a = {(o.metric, o.group): o for o in outcomes(a)}
    found_b = {(o.metric, o.group): o for o in outcomes(b)}
    more = found_a[("dated_pct", "all")]
    assert more.verdict == "knows more" and len(more.values) == 8
    fresher_a, fresher_b = found_a[("current_among_dated_pct", "all")], found_b[("current_among_dated_pct", "all")]
    assert set(fresher_a.values) == {"f1", "f2", "f3", "f4"} and fresher_a.verdict == "fresher where both answer"
    paired = compare_outcomes(fresher_a, fresher_b)
    assert paired.n == 4 and (paired.discordant_ab, paired.discordant_ba) == (1, 1)  # f2 for A, f3 for B
    assert paired.delta == 0.0
    assert found_a[("soft_constraint_pct.up-to-date", "all")].verdict == ""  # never "fresher" from this share


def test_the_knowledge_date_from_summed_fact_components_is_the_estimate() -> None:
    gold = load_snapshot(None)
    when = dt.date(2019, 6, 15)
    items = []
    for fact_id, history in list(gold.answers.items())[:40]:
        held = [s for s in history.counted().statements if s.valid_at(when)]
        if held:
            items.append((fact_id, "c", "outdated", [held[0].label]))
    dated, _ = dated_answers(items, gold.answers)
    grid = monthly_grid(2000.0, decimal_year(gold.retrieved))
    total = np.sum(list(fact_logliks(dated, grid).values()), axis=0)
    estimate = estimate_knowledge_date(dated, grid, resamples=10)
    assert estimate is not None
    assert float(date_of_sums(total.ravel()[None, :], grid)[0]) == estimate.estimate.value
