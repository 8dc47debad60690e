"""The knowledge cutoff: a changepoint in P(answer current) against the date of the change, hand-computed cases."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

import numpy as np
import pytest

from chronoprobe.knowledge.types import FactAnswers, Statement, WikidataDate
from chronoprobe.metrics.knowledge_cutoff import (
    MIN_FACTS,
    ChangeFact,
    change_date,
    cutoff_components,
    cutoff_of_sums,
    estimate_knowledge_cutoff,
)

START, END = 2000.0, 2024.0


def _facts(known: Sequence[float], first: int = 2010) -> list[ChangeFact]:
    return [ChangeFact(f"f{i}", float(first + i), share) for i, share in enumerate(known)]


def test_a_clean_step_is_found_between_the_last_known_and_the_first_unknown_change() -> None:
    found = estimate_knowledge_cutoff(_facts([1, 1, 1, 1, 1, 0, 0, 0, 0, 0]), start=START, end=END)
    assert found is not None
    assert (found.last_known, found.first_unknown) == (2014.0, 2015.0)
    assert found.estimate.value == 2014.5 and found.estimate.n == 10
    assert (found.before, found.after, found.flat) == (1.0, 0.0, False)
    # fitted p1 = 1, p2 = 0: every world drawn from the step is the data again, the ratio at the fit is 0, so the
    # interval is the best gap alone: from the last known change to the first unknown one, never a point
    assert found.threshold == 0.0
    assert (found.estimate.ci_low, found.estimate.ci_high) == (2014.0, 2015.0)
    assert found.estimate.method == "profile-likelihood"


def test_the_interval_holds_every_split_within_the_threshold() -> None:
    known = [1, 1, 1, 0, 1, 0, 0, 1, 0, 0]
    found = estimate_knowledge_cutoff(_facts(known), start=START, end=END)
    assert found is not None

    def loglik(k: int) -> float:
        total = 0.0
        for side in (known[:k], known[k:]):
            if side:
                p = sum(side) / len(side)
                total += sum(math.log(p) if y else math.log(1 - p) for y in side if 0 < p < 1)
        return total

    splits = [loglik(k) for k in range(11)]
    best = max(splits)
    assert found.estimate.value == pytest.approx(2012.5)  # split 3 (1, 1, 1 | ...) is the maximum
    assert 0.0 < found.threshold < 20.0
    kept = [k for k in range(11) if 2 * (best - splits[k]) <= found.threshold + 1e-9]
    low = 2010 + min(kept) - 1 if min(kept) > 0 else START
    high = 2010 + max(kept) if max(kept) < 10 else END
    assert (found.estimate.ci_low, found.estimate.ci_high) == (low, high)
    assert found.estimate.ci_low < found.estimate.value < found.estimate.ci_high


def test_no_drop_gives_the_widest_interval_and_says_it_is_flat() -> None:
    for known in ([1.0] * 12, [0.0] * 12, [0.0] * 6 + [1.0] * 6):  # all known, none, a rise (not a drop)
        found = estimate_knowledge_cutoff(_facts(known), start=START, end=END)
        assert found is not None and found.flat
        assert (found.estimate.ci_low, found.estimate.ci_high) == (START, END)


def test_too_few_dated_facts_give_no_cutoff() -> None:
    assert estimate_knowledge_cutoff(_facts([1] * (MIN_FACTS - 1)), start=START, end=END) is None
    assert estimate_knowledge_cutoff(_facts([1] * MIN_FACTS), start=START, end=END) is not None


def test_the_threshold_is_seeded_and_grows_as_the_drop_weakens() -> None:
    sharp = _facts([1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0])
    weak = _facts([1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0])
    first = estimate_knowledge_cutoff(sharp, start=START, end=END)
    again = estimate_knowledge_cutoff(sharp, start=START, end=END)
    loose = estimate_knowledge_cutoff(weak, start=START, end=END)
    assert first is not None and again is not None and loose is not None
    assert first.threshold == again.threshold  # seeded: the same facts give the same interval
    assert loose.threshold > first.threshold
    assert loose.estimate.ci_high - loose.estimate.ci_low > first.estimate.ci_high - first.estimate.ci_low


def test_the_change_is_the_latest_start_among_current_values_from_its_first_possible_day() -> None:
    def statement(label: str, start: str, end: str | None = None) -> Statement:
        return Statement(
            label=label,
            start=WikidataDate.parse(start),
            end=WikidataDate.parse(end) if end else None,
        )

    answers = FactAnswers(
        fact_id="x",
        statements=(
            statement("Old", "+2010-03-01T00:00:00Z", "+2015-00-00T00:00:00Z"),
            statement("Team", "+2003-00-00T00:00:00Z"),
            statement("Club", "+2019-07-00T00:00:00Z"),
        ),
        retrieved=dt.date(2023, 12, 18),
    )
    assert change_date(answers) == pytest.approx(2019.5)  # July 2019, known to the month: its first day


def test_the_summed_components_give_the_fitted_cutoff_on_a_monthly_grid() -> None:
    facts = _facts([1, 1, 1, 0, 1, 0, 0, 1, 0, 0])
    grid = np.arange(2000 * 12, 2024 * 12) / 12.0
    sums = np.sum([cutoff_components(f, grid) for f in facts], axis=0)[None, :]
    found = estimate_knowledge_cutoff(facts, start=START, end=END)
    assert found is not None
    on_grid = float(cutoff_of_sums(sums, grid)[0])
    assert found.last_known is not None and found.first_unknown is not None
    assert found.last_known <= on_grid < found.first_unknown  # the same best split, at a month inside its gap
    # no facts on the known side at all: a resample with no dated fact reads as flat, not an error
    assert np.isfinite(cutoff_of_sums(np.zeros((1, 2 * len(grid) + 2)), grid)).all()
