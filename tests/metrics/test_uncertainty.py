"""Wilson intervals and the seeded bootstrap, checked against values computed by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from chronoprobe.metrics.uncertainty import (
    Estimate,
    bootstrap,
    bootstrap_mean,
    cell,
    ci_cell,
    wilson,
    wilson_from_flags,
)


def test_wilson_known_values() -> None:
    # p = 0.8, z = 1.95996: centre (0.8 + z^2/20) / (1 + z^2/10) = 0.7167, half-width 0.2266
    est = wilson(8, 10)
    assert est.value == 0.8 and est.n == 10 and est.method == "wilson" and est.level == 0.95
    assert est.ci_low == pytest.approx(0.4902, abs=5e-4)
    assert est.ci_high == pytest.approx(0.9433, abs=5e-4)


def test_wilson_at_the_extremes() -> None:
    zero = wilson(0, 10)
    assert zero.value == 0.0 and zero.ci_low == 0.0
    assert zero.ci_high == pytest.approx(0.2775, abs=5e-4)  # z^2/n / (1 + z^2/n)
    full = wilson(10, 10)
    assert full.ci_high == 1.0 and full.ci_low == pytest.approx(1 - 0.2775, abs=5e-4)


def test_three_of_three_is_not_certain() -> None:
    # The example: a --limit 3 run that prints 100.00% must say how little that means.
    est = wilson(3, 3, scale=100.0)
    assert est.value == 100.0 and est.ci_high == 100.0
    assert est.ci_low == pytest.approx(43.85, abs=0.01)
    assert est.format(1, suffix="%") == "100.0% [43.9, 100.0] (n=3)"


def test_wilson_without_items_has_no_value_or_interval() -> None:
    est = wilson(0, 0)
    assert (est.value, est.ci_low, est.ci_high, est.n) == (None, None, None, 0)
    assert est.format_pct() == "– (n=0)"
    assert json.loads(json.dumps(est.to_json()))["value"] is None  # valid JSON, no NaN


def test_wilson_level_and_scale() -> None:
    narrow = wilson(8, 10, level=0.5)
    assert narrow.ci_low > wilson(8, 10).ci_low and narrow.level == 0.5
    pct = wilson(8, 10, scale=100.0)
    assert pct.value == 80.0 and pct.ci_low == pytest.approx(49.02, abs=0.05)
    with pytest.raises(ValueError):
        wilson(11, 10)
    with pytest.raises(ValueError):
        wilson(1, 10, level=1.0)


def test_wilson_from_flags() -> None:
    assert wilson_from_flags([True, False, 1.0, 0.0]) == wilson(2, 4)


def test_formatting() -> None:
    est = Estimate(value=0.123, n=130, ci_low=0.081, ci_high=0.179, method="wilson")
    assert est.format_pct() == "12.3% [8.1, 17.9] (n=130)"
    assert est.format(3) == "0.123 [0.081, 0.179] (n=130)"
    assert cell(est.to_json(), 2) == "0.12 [0.08, 0.18]"
    assert ci_cell(est.to_json(), 2) == "[0.08, 0.18] (n=130)"
    assert cell(None) == "–" and ci_cell(None) == "–"


def test_bootstrap_mean_is_deterministic_for_a_seed() -> None:
    values = np.random.default_rng(5).normal(size=50)
    first = bootstrap_mean(values)
    assert first == bootstrap_mean(values)
    assert first.method == "bootstrap" and first.n == 50
    assert first.value == pytest.approx(values.mean())
    assert first.ci_low < first.value < first.ci_high
    assert bootstrap_mean(values, seed=1) != first


def test_bootstrap_reports_the_given_point() -> None:
    est = bootstrap_mean([1.0, 2.0, 3.0], point=2.0000000001)
    assert est.value == 2.0000000001


def test_bootstrap_of_a_constant_is_a_point_interval() -> None:
    est = bootstrap_mean([0.5] * 7)
    assert (est.ci_low, est.ci_high) == (0.5, 0.5)


def test_bootstrap_without_enough_items_has_no_interval() -> None:
    empty = bootstrap_mean([])
    assert (empty.value, empty.ci_low, empty.n) == (None, None, 0)
    single = bootstrap_mean([3.0])
    assert single.value == 3.0 and single.ci_low is None and single.cell(1) == "3.0 [–]"


def test_bootstrap_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(123)
    trials, hits = 200, 0
    for trial in range(trials):
        sample = rng.exponential(scale=1.0, size=60)  # true mean 1, skewed
        est = bootstrap_mean(sample, resamples=400, seed=trial)
        hits += est.ci_low <= 1.0 <= est.ci_high
    assert 0.88 <= hits / trials <= 0.99


def test_bootstrap_agrees_with_the_normal_approximation_for_a_large_sample() -> None:
    values = np.random.default_rng(9).normal(loc=2.0, scale=1.0, size=2000)
    est = bootstrap_mean(values)
    half = 1.96 * values.std(ddof=1) / math.sqrt(values.size)
    assert est.ci_low == pytest.approx(values.mean() - half, abs=0.01)
    assert est.ci_high == pytest.approx(values.mean() + half, abs=0.01)


def test_generic_bootstrap_passes_index_resamples() -> None:
    data = np.arange(10.0)
    seen: list[tuple[int, ...]] = []

    def statistic(idx: np.ndarray) -> np.ndarray:
        seen.append(idx.shape)
        return data[idx].max(axis=1)

    est = bootstrap(10, statistic, 9.0, resamples=450)
    assert sum(shape[0] for shape in seen) == 450 and all(shape[1] == 10 for shape in seen)
    assert est.ci_high == 9.0 and est.ci_low <= 9.0


def test_reported_as_keeps_the_interval() -> None:
    est = wilson(1, 3, scale=100.0)
    shown = est.reported_as(100.0 * (1 / 3))
    assert shown.value == 100.0 * (1 / 3) and (shown.ci_low, shown.ci_high, shown.n) == (est.ci_low, est.ci_high, 3)
    assert wilson(0, 0).reported_as(0.0).value is None  # no items: still no value


def test_a_share_of_outcomes_all_alike_takes_wilson_never_a_zero_width_interval() -> None:
    """Six facts all wrong: a bootstrap gives [0, 0]; a share takes Wilson's [0, 39.0] over its units (six facts,
    not its twelve answers), a score of 0 on every item keeps its flat interval (printed "no variation")."""
    from chronoprobe.metrics.uncertainty import bootstrap_mean, bootstrap_mean_clustered, share_bounds

    flat = bootstrap_mean([0.0] * 6, share=True)
    assert (flat.value, flat.method) == (0.0, "wilson")
    assert (flat.ci_low, flat.ci_high) == (wilson(0, 6).ci_low, wilson(0, 6).ci_high)
    assert flat.ci_high == pytest.approx(0.390, abs=5e-4)
    clustered = bootstrap_mean_clustered([1.0] * 12, [f"f{i // 2}" for i in range(12)], share=True)
    assert (clustered.n, clustered.ci_low, clustered.ci_high) == (12, wilson(6, 6).ci_low, 1.0)
    score = bootstrap_mean([0.0] * 6)  # not a share: its resamples never vary, and it says so when printed
    assert (score.ci_low, score.ci_high, score.method) == (0.0, 0.0, "bootstrap")
    mixed = bootstrap_mean([0.0, 1.0] * 3, share=True)  # a share that varies keeps its bootstrap interval
    assert mixed.method == "bootstrap" and mixed.ci_low is not None and mixed.ci_low < 0.5 < (mixed.ci_high or 0)
    assert share_bounds(0.5, 0.2, 0.8, 10) == (0.2, 0.8)
    assert share_bounds(1.0, 1.0, 1.0, 10) == (wilson(10, 10).ci_low, 1.0)
