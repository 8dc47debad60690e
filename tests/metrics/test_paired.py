"""The paired statistics against what no one here wrote: statsmodels' exact McNemar and scipy's exact binomial
(to 1e-9, tables from 2x2 up to 1,000 items), hand-worked intervals and power, and a coverage simulation."""

from __future__ import annotations

import importlib.util
import math
import sys
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from chronoprobe.metrics.paired import (
    Discordance,
    ItemOutcomes,
    binomial_cdf,
    clustered_se,
    compare_outcomes,
    detectable_difference,
    detectable_mean_difference,
    discordance,
    mcnemar_exact,
    newcombe_paired,
    paired_bootstrap,
    paired_proportions,
    paired_statistic,
    ratio,
    sign_flip_p,
    units_needed,
    units_needed_for_mean,
)
from chronoprobe.metrics.uncertainty import bootstrap_mean, bootstrap_mean_clustered, wilson, wilson_clustered

REPO = Path(__file__).resolve().parents[2]


def reference_mcnemar(table: list[list[int]]) -> float:
    """statsmodels' exact McNemar p-value, the reference ours is checked against."""
    from statsmodels.stats.contingency_tables import mcnemar  # deferred: statsmodels and scipy, a second to import

    return float(mcnemar(table, exact=True).pvalue)


def scipy_binomial_cdf(k: int, n: int, p: float) -> float:
    from scipy.stats import binom  # deferred: scipy, most of a second to import

    return float(binom.cdf(k, n, p))


def _tables(rng: np.random.Generator, count: int, largest: int) -> list[tuple[int, int, int, int]]:
    found = []
    for _ in range(count):
        n = int(rng.integers(1, largest + 1))
        found.append(tuple(int(c) for c in rng.multinomial(n, rng.dirichlet([1.0, 1.0, 1.0, 1.0]))))
    return found  # type: ignore[return-value]  # four cells each


def test_exact_mcnemar_is_statsmodels_to_1e9_on_every_small_table_and_random_ones_up_to_1000_items() -> None:
    small = [cells for cells in product(range(7), repeat=4)]  # every 2x2 table with cells 0..6
    for both, a_only, b_only, neither in [*small, *_tables(np.random.default_rng(3), 400, 1000)]:
        reference = reference_mcnemar([[both, a_only], [b_only, neither]])
        assert mcnemar_exact(a_only, b_only) == pytest.approx(reference, abs=1e-9)


def test_no_discordant_pair_gives_p_one_as_statsmodels_does() -> None:
    assert reference_mcnemar([[40, 0], [0, 90]]) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0  # a balanced table: statsmodels caps 2 * P(X <= 5) at 1


@pytest.mark.e2e
def test_binomial_tail_is_scipys_to_1e9() -> None:
    for n in (*range(0, 40), 100, 999, 1000):
        for k in range(-1, n + 2):
            assert binomial_cdf(k, n) == pytest.approx(float(scipy_binomial_cdf(k, n, 0.5)), abs=1e-9)
    assert binomial_cdf(2900, 6000) == pytest.approx(
        float(scipy_binomial_cdf(2900, 6000, 0.5)), rel=1e-9
    )  # log-space branch


def test_discordance_counts_the_four_cells() -> None:
    table = discordance([1, 1, 0, 0, 1, 0], [1, 0, 1, 0, 0, 1])
    assert table == Discordance(both=1, first_only=2, second_only=2, neither=1)
    assert table.n == 6 and table.rate == pytest.approx(4 / 6)


def test_newcombes_paired_interval_by_hand() -> None:
    """Bentur et al.'s airway table (1, 1, 7, 12; Fagerland, Lydersen and Laake's example of the paired 2x2 table),
    worked through Newcombe's method 10 step by step."""
    table = Discordance(both=1, first_only=1, second_only=7, neither=12)
    n = 21
    p_a, p_b = 2 / n, 8 / n
    a, b = wilson(2, n), wilson(8, n)
    assert a.ci_low is not None and a.ci_high is not None and b.ci_low is not None and b.ci_high is not None
    cross = 1 * 12 - 1 * 7  # 5, not above n/2 = 10.5: the correlation is taken as 0
    assert cross <= n / 2
    low = (p_b - p_a) - math.hypot(p_b - b.ci_low, a.ci_high - p_a)
    high = (p_b - p_a) + math.hypot(b.ci_high - p_b, p_a - a.ci_low)
    found = newcombe_paired(table)
    assert found == pytest.approx((6 / 21, low, high))
    assert found == pytest.approx((0.2857, 0.0256, 0.5069), abs=1e-4)


def test_a_positive_correlation_narrows_the_paired_interval() -> None:
    # 40 both, 5 A only, 15 B only, 70 neither: phi = (40*70 - 5*15 - 65) / sqrt(45*85*55*75)
    table = Discordance(40, 5, 15, 70)
    n = 130
    phi = (40 * 70 - 5 * 15 - n / 2) / math.sqrt(45 * 85 * 55 * 75)
    a, b = wilson(45, n), wilson(55, n)
    assert a.value is not None and b.value is not None and a.ci_low is not None and a.ci_high is not None
    assert b.ci_low is not None and b.ci_high is not None
    below_b, above_a = b.value - b.ci_low, a.ci_high - a.value
    low = 10 / n - math.sqrt(below_b**2 - 2 * phi * below_b * above_a + above_a**2)
    found = newcombe_paired(table)
    assert found is not None and found[1] == pytest.approx(low)
    unpaired = 10 / n - math.hypot(below_b, above_a)
    assert found[1] > unpaired  # the paired lower bound sits closer to the difference


def test_a_folder_against_itself_differs_by_zero_with_p_one() -> None:
    outcomes = [1, 0, 0, 1, 1, 0, 1, 0, 0, 0] * 13
    found = paired_proportions(outcomes, outcomes, scale=100.0)
    assert (found.delta, found.p, found.discordant_ab, found.discordant_ba) == (0.0, 1.0, 0, 0)
    assert found.ci_low is not None and found.ci_high is not None and found.ci_low < 0 < found.ci_high
    assert not found.decides
    means = paired_bootstrap([0.3, 2.0, 1.1, 0.7], [0.3, 2.0, 1.1, 0.7])
    assert (means.delta, means.ci_low, means.ci_high, means.p) == (0.0, 0.0, 0.0, 1.0)


def test_mcnemar_and_newcombe_decide_a_clear_difference() -> None:
    a = [1] * 40 + [1] * 2 + [0] * 20 + [0] * 68
    b = [1] * 40 + [0] * 2 + [1] * 20 + [0] * 68
    found = paired_proportions(a, b, scale=100.0)
    assert found.delta == pytest.approx(100 * 18 / 130)
    assert found.p == pytest.approx(reference_mcnemar([[40, 2], [20, 68]]), abs=1e-12)
    assert found.decides and found.ci_low is not None and found.ci_low > 0


def test_the_paired_bootstrap_resamples_units_together_and_is_seeded() -> None:
    rng = np.random.default_rng(1)
    a = rng.random(90)
    b = a + 0.1 + rng.normal(0, 0.05, 90)
    units = [i // 3 for i in range(90)]
    first = paired_bootstrap(a, b, units)
    assert first == paired_bootstrap(a, b, units)  # seeded: identical reruns
    assert first.n == 30 and first.items == 90 and first.test == "paired bootstrap"
    assert first.delta == pytest.approx(float(np.mean(b - a)))
    assert first.ci_low is not None and first.ci_high is not None and first.ci_low < first.delta < first.ci_high
    assert first.decides and first.p is not None and first.p < 0.01
    # a mean's paired bootstrap is the bootstrap of the per-unit differences: the same draws give its interval
    per_item = paired_bootstrap(a, b)
    differences = bootstrap_mean(b - a)
    assert (per_item.ci_low, per_item.ci_high) == pytest.approx((differences.ci_low, differences.ci_high))


def test_a_clustered_rate_is_compared_by_the_bootstrap_with_its_discordant_counts() -> None:
    a = {f"f{i}#{k}": float(i % 2) for i in range(20) for k in range(3)}
    b = {f"f{i}#{k}": float(i % 3 == 0) for i in range(20) for k in range(3)}
    first, second = ItemOutcomes("m", "all", "rate", a), ItemOutcomes("m", "all", "rate", b)
    owners = {f"f{i}#{k}": f"f{i}" for i in range(20) for k in range(3)}
    clustered = ItemOutcomes("m", "all", "rate", first.values, clusters=owners)
    found = compare_outcomes(clustered, second)
    assert found.test == "paired bootstrap" and found.n == 20 and found.items == 60
    table = discordance(list(a.values()), list(b.values()))
    assert (found.discordant_ab, found.discordant_ba) == (table.first_only, table.second_only)
    assert compare_outcomes(first, second).test == "exact McNemar"


def test_clustered_standard_errors_by_hand() -> None:
    values, clusters = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0], ["a", "a", "b", "b", "c", "c"]
    # mean 1/2; the clusters' summed deviations: +1, -1, 0 -> sqrt(2) / 6
    assert clustered_se(values, clusters) == pytest.approx(math.sqrt(2) / 6)
    alone = clustered_se(values, list(range(6)))
    assert alone == pytest.approx(math.sqrt(np.var(values) / 6))  # every item its own cluster: the plain SE
    assert clustered_se([], []) is None


def test_clustered_intervals_are_the_plain_ones_without_clusters() -> None:
    flags = [True, False, True, True, False, False, True]
    assert wilson_clustered(flags, list(range(7))) == wilson(4, 7)
    values = [0.2, 1.5, 0.9, 2.2, 0.4]
    assert bootstrap_mean_clustered(values, list("abcde")) == bootstrap_mean(values)
    together = wilson_clustered([True, True, True, False, False, False], ["a", "a", "a", "b", "b", "b"])
    # perfectly clustered: the effective size is the 2 clusters, not the 6 answers
    assert together.ci_high is not None and wilson(1, 2).ci_high is not None
    assert together.ci_high == pytest.approx(wilson(1, 2).ci_high)


def test_connors_sample_size_by_hand_and_its_inverse() -> None:
    # psi 0.2, delta 0.1: ((1.96 sqrt(.2) + 0.8416 sqrt(.19)) / .1)^2 = 154.6 -> 155 facts
    z_a, z_b = 1.959963984540054, 0.8416212335729143
    expected = math.ceil((z_a * math.sqrt(0.2) + z_b * math.sqrt(0.19)) ** 2 / 0.01)
    assert units_needed(0.1, 0.2) == expected == 155
    found = detectable_difference(155, 0.2)
    assert found is not None and 0.099 < found <= 0.1
    assert units_needed(found, 0.2) in (155, 156)  # the same size, up to rounding up
    assert units_needed(0.0, 0.2) is None and units_needed(0.3, 0.2) is None  # no difference; more than the discordance
    assert detectable_difference(3, 0.05) is None  # three facts detect nothing within 5% discordance


def test_the_mean_sample_size_is_the_normal_approximation() -> None:
    z = 1.959963984540054 + 0.8416212335729143
    assert units_needed_for_mean(0.5, 2.0) == math.ceil((z * 2.0 / 0.5) ** 2)
    assert detectable_mean_difference(100, 2.0) == pytest.approx(z * 2.0 / 10)


def _simulation() -> object:
    spec = importlib.util.spec_from_file_location(
        "paired_coverage_simulation", REPO / "scripts" / "paired_coverage_simulation.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_paired_interval_covers_93_to_97_percent_and_is_never_wider_at_positive_correlation() -> None:
    """2,000 seeded draws of 130 facts at four correlations (the table in docs/statistics.md)."""
    simulation = _simulation()
    for phi in simulation.CORRELATIONS:  # type: ignore[attr-defined]
        found = simulation.coverage(phi, draws=2000, facts=130, seed=0)  # type: ignore[attr-defined]
        assert 0.93 <= found.covered <= 0.97, found
        assert 0.93 <= found.bootstrap_covered <= 0.97, found
        assert found.never_wider, found
        if phi > 0:
            assert found.paired_width < found.unpaired_width, found


def _mean_components(values: list[float]) -> np.ndarray:
    return np.column_stack([np.asarray(values, dtype=float), np.ones(len(values))])


def test_few_units_take_the_exact_sign_flip_p() -> None:
    """Two facts both in B's favour: the bootstrap alone would say p = 0; swapping the sides unit by unit gives 1/2
    (2 of the 4 swaps are as far from 0). Six such facts: 2/64."""
    two = paired_statistic(_mean_components([0, 0]), _mean_components([1, 1]), ["f1", "f2"], ratio)
    assert (two.test, two.p, two.decides) == ("exact sign-flip", 0.5, False)
    six = paired_statistic(_mean_components([0] * 6), _mean_components([1] * 6), [f"f{i}" for i in range(6)], ratio)
    assert (six.test, six.p, six.decides) == ("exact sign-flip", 2 / 64, True)
    ten = paired_statistic(_mean_components([0] * 10), _mean_components([1] * 10), [f"f{i}" for i in range(10)], ratio)
    assert (ten.test, ten.p) == ("exact sign-flip", 2 / 1024)  # the design allows no smaller p over 10 facts
    twelve = paired_statistic(
        _mean_components([0] * 12), _mean_components([1] * 12), [f"f{i}" for i in range(12)], ratio
    )
    assert (twelve.test, twelve.p) == ("exact sign-flip", 2 / 4096)
    thirteen = [f"f{i}" for i in range(13)]
    over = paired_statistic(_mean_components([0] * 13), _mean_components([1] * 13), thirteen, ratio)
    assert (over.test, over.p) == ("paired bootstrap", 2 / 8192)  # every resample favours B: floored, not 0
    # against every swap counted by hand, on uneven data
    rng = np.random.default_rng(3)
    a, b = rng.random((5, 2)), rng.random((5, 2))
    seen = abs(b[:, 0].sum() / b[:, 1].sum() - a[:, 0].sum() / a[:, 1].sum())
    extreme = 0
    for flips in product([0, 1], repeat=5):
        swapped_a = sum(b[i] if f else a[i] for i, f in enumerate(flips))
        swapped_b = sum(a[i] if f else b[i] for i, f in enumerate(flips))
        extreme += abs(swapped_b[0] / swapped_b[1] - swapped_a[0] / swapped_a[1]) >= seen - 1e-12
    assert sign_flip_p(a, b, ratio) == extreme / 32
