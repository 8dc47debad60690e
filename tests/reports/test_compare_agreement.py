"""A compared row's interval and test: where they disagree the row says "undecided", and where another method made
the interval the row names it (issue 40: "+22.2 [+0.2, +45.2]" beside p = 0.12 read as decided)."""

from __future__ import annotations

from typing import Any

import pytest

from chronoprobe.metrics.paired import PairedDifference, paired_proportions
from chronoprobe.reports.compare import CompareRow
from chronoprobe.reports.compare_card import forest_plot
from chronoprobe.reports.compare_output import _delta, _test


def _row(paired: PairedDifference, **changes: Any) -> CompareRow:
    fields: dict[str, Any] = {
        "run": "r", "model": "a vs b", "lens": "outdated", "dataset": "d", "group": "Politicians",
        "metric": "soft_constraint_pct.up-to-date", "a": paired.first, "b": paired.second, "delta": paired.delta,
        "ci_low": paired.ci_low, "ci_high": paired.ci_high, "n": paired.n, "p": paired.p, "test": paired.test,
        "discordant_ab": paired.discordant_ab, "discordant_ba": paired.discordant_ba, "unit": "%", "units": paired.n,
        "paired": paired,
    }  # fmt: skip
    return CompareRow(**{**fields, **changes})


def test_newcombe_clear_of_zero_beside_a_mcnemar_p_of_an_eighth_is_undecided_and_says_so() -> None:
    # 18 facts: 4 that only B gets, 14 that neither gets; Newcombe's interval clears 0, McNemar's p = 2/16
    paired = paired_proportions([0] * 18, [0] * 14 + [1] * 4, scale=100.0)
    assert (round(paired.ci_low or 0, 1), round(paired.ci_high or 0, 1), paired.p) == (0.2, 45.2, 0.125)
    row = _row(paired)
    assert not row.decides and row.disagrees and row.interval_method == "Newcombe"
    assert _delta(row) == "+22.2 [+0.2, +45.2] undecided"
    assert _test(row) == "McNemar (CI Newcombe)"
    plot = forest_plot([row])
    assert "#9aa3b5" in plot and "#2f5fd0" not in plot  # grey: the one rule, interval and test together
    assert "95% Newcombe CI +0.2 to +45.2; exact McNemar p = 0.12; undecided" in plot


@pytest.mark.parametrize(
    ("first", "second", "disagrees", "decides"),
    [
        ([0] * 18, [0] * 10 + [1] * 8, False, True),  # 8 discordant, all one way: p = 2/256, interval clear of 0
        ([0] * 18, [0] * 17 + [1], False, False),  # 1 discordant: neither clears
    ],
)
def test_a_row_whose_interval_and_test_agree_is_not_marked(
    first: list[int], second: list[int], disagrees: bool, decides: bool
) -> None:
    row = _row(paired_proportions(first, second, scale=100.0))
    assert (row.disagrees, row.decides) == (disagrees, decides)
    assert "undecided" not in _delta(row)


def test_a_sign_flip_row_names_the_bootstrap_that_made_its_interval() -> None:
    from chronoprobe.metrics.paired import paired_bootstrap

    paired = paired_bootstrap([0.0] * 6, [1.0] * 6, [f"f{i}" for i in range(6)], scale=100.0)
    row = _row(paired, unit="%")
    assert (row.test, row.interval_method, _test(row)) == ("exact sign-flip", "bootstrap", "sign-flip (CI bootstrap)")
    assert _delta(row) == "+100.0 (no variation in n = 6)"  # every resample alike: never [+100.0, +100.0]


@pytest.mark.parametrize("units", range(2, 16))
def test_no_p_below_what_the_design_allows(units: int) -> None:
    """Whatever the data, a paired comparison over n units never gives p below 2 / 2^n (exact up to 12 units)."""
    import numpy as np

    from chronoprobe.metrics.paired import EXACT_UP_TO_UNITS, paired_statistic, ratio, smallest_p

    rng = np.random.default_rng(units)
    for trial in range(3):
        a = np.column_stack([rng.random(units) * trial, np.ones(units)])
        b = np.column_stack([a[:, 0] + 1.0 + rng.random(units), np.ones(units)])  # B ahead on every unit
        found = paired_statistic(a, b, [f"u{i}" for i in range(units)], ratio)
        assert found.p is not None and found.p >= smallest_p(units) == 2.0 / 2**units
        assert found.test == ("exact sign-flip" if units <= EXACT_UP_TO_UNITS else "paired bootstrap")
