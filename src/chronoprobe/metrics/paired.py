"""Two models answered on the same items, compared paired. Pure functions, no I/O.

When both models answer the same facts, the question is not "where does each model's interval lie" but
"how much does B differ from A on the same facts". Pairing removes the item-to-item variation both
share, so it decides differences that two separate intervals cannot (Miller 2024, "Adding Error Bars
to Evals", §4: the paired difference).

- **Rates** (a verdict per item, 0 or 1), one item per unit: the exact McNemar test, a two-sided
  binomial test on the discordant pairs (items one model gets and the other does not) with p = 1/2,
  and Newcombe's hybrid score interval for the difference of paired proportions (Newcombe 1998,
  *Statistics in Medicine* 17:2635-2650, method 10: the two marginal Wilson intervals combined with
  the estimated correlation between them). The p-value is what ``statsmodels``'
  ``mcnemar(table, exact=True)`` returns: ``min(1, 2 * P(X <= min(b, c)))`` for X ~ Bin(b + c, 1/2),
  1 when no pair is discordant.
- **Means**, and rates whose items share a unit (a fact's paraphrases, a question's contexts): a
  seeded percentile bootstrap that resamples the shared units with both models' outcomes together
  (the paired bootstrap), the difference of the two means recomputed on each resample; its p-value
  inverts the percentile interval, ``min(1, 2 * min(P*(d <= 0), P*(d >= 0)))``.
- **Clustered standard errors** (Miller 2024, eq. 4): the variance of a mean over items that come in
  clusters, from the clusters' summed deviations.
- **Power**: how many units a paired difference of proportions needs at 80% power, and the smallest
  difference a given number detects, from the discordance rate (Connor 1987, *Biometrics*
  43:207-211: n = (z_a sqrt(psi) + z_b sqrt(psi - delta^2))^2 / delta^2, psi the share of discordant
  units, delta the difference); for means the normal approximation n = ((z_a + z_b) sd / delta)^2
  with sd the standard deviation of the per-unit differences.

Every difference is ``second - first`` (B - A), on the scale the outcomes are given in times
``scale`` (100 for percentage points).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Literal

import numpy as np

from chronoprobe.metrics.uncertainty import LEVEL, RESAMPLES, SEED, resample_counts, wilson

__all__ = [
    "ASSUMED_DISCORDANCE",
    "EXACT_UP_TO_UNITS",
    "POWER",
    "Comparable",
    "Discordance",
    "Draws",
    "ItemOutcomes",
    "PairedDifference",
    "Statistic",
    "Test",
    "binomial_cdf",
    "clustered_se",
    "compare_outcomes",
    "detectable_difference",
    "detectable_mean_difference",
    "discordance",
    "mcnemar_exact",
    "newcombe_paired",
    "paired_bootstrap",
    "paired_proportions",
    "paired_statistic",
    "ratio",
    "smallest_p",
    "unit_resamples",
    "units_needed",
    "units_needed_for_mean",
]

POWER = 0.8
"""The power every sample size and detectable difference is stated at."""
ASSUMED_DISCORDANCE = 0.2
"""The share of items two models judge differently, assumed where nothing measured it (a plan line says so)."""
_EXACT_UP_TO = 5000
"""Up to this many discordant pairs the binomial tail is summed in exact integers; beyond, in log space."""
_CHUNK = 250
"""Bootstrap resamples per batch: bounds memory to _CHUNK x units counts."""

Test = Literal["exact McNemar", "paired bootstrap", "exact sign-flip", "none"]
Kind = Literal["rate", "mean", "statistic"]
Statistic = Callable[[np.ndarray], np.ndarray]
"""A statistic of summed per-item components: ``(resamples, components)`` sums -> one value per resample (a mean
is the sum of the values over the count, a harmonic mean of two shares, a macro F1 of confusion counts)."""


# --- the outcomes a lens declares per item ---------------------------------------------------------------


@dataclass(frozen=True)
class ItemOutcomes:
    """One metric over one class, item by item: what a paired comparison of two runs reads.

    ``values`` maps each item's key (a fact id, a question id ...) to its outcome: 0 or 1 for a rate,
    a number for a mean. ``clusters`` maps an item to the unit it shares with others (a paraphrase to
    its fact) where several items share one; absent, every item is its own unit.
    """

    metric: str
    """As ``chronoprobe results`` names it (``soft_constraint_pct.up-to-date``)."""
    group: str
    """Its class, as ``results`` names it (``all``, a category)."""
    kind: Kind
    values: Mapping[str, float] | Mapping[str, tuple[float, ...]]
    """0 or 1 per item for a rate, a number for a mean; for a statistic, a tuple of components per item."""
    clusters: Mapping[str, str] | None = None
    scale: float = 1.0
    """What the outcome is multiplied by in the metric's unit (100 for a percentage of 0/1 outcomes)."""
    unit: str = "items"
    """What a unit is called in a sentence: ``facts``, ``questions``."""
    phrase: str = ""
    """For a rate, what a model does on a unit where the outcome is 1 (``gives a current answer``); empty:
    the metric's name is used."""
    verdict: str = ""
    """For the check's paragraph, what a model with the higher value is (``fresher``); empty: none."""
    statistic: Statistic | None = None
    """For a statistic, how its value follows from the items' summed components (see :data:`Statistic`)."""
    shared: str = ""
    """Where a model has items only where it answered (``current_among_dated_pct``: the facts it dates), what the
    items both models have are (``both date``): the verdict that cannot tell says how many there are."""

    def unit_of(self, item: str) -> str:
        return item if self.clusters is None else self.clusters.get(item, item)

    def number(self, item: str) -> float:
        """The outcome of one item of a rate or a mean (a statistic's outcomes are tuples of components)."""
        value = self.values[item]
        if isinstance(value, tuple):
            raise TypeError(f"{self.metric} is a statistic: its outcomes are components, not numbers")
        return float(value)


@dataclass(frozen=True)
class Comparable:
    """One model's outcomes in one run, and what its items are drawn from (two runs whose sources differ
    were asked different items)."""

    source: str
    """The snapshot, catalogue or dataset the items come from (``snapshot dyknow-2023-12-18``)."""
    outcomes: Sequence[ItemOutcomes]


# --- the 2x2 table, McNemar, Newcombe ------------------------------------------------------------------


@dataclass(frozen=True)
class Discordance:
    """The paired 2x2 table of two models' 0/1 outcomes on the same items."""

    both: int
    first_only: int
    """Items the first model (A) gets and the second (B) does not: the discordant ``ab`` pairs."""
    second_only: int
    """Items B gets and A does not: the discordant ``ba`` pairs."""
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.first_only + self.second_only + self.neither

    @property
    def rate(self) -> float | None:
        """The share of discordant items (psi); None without items."""
        return (self.first_only + self.second_only) / self.n if self.n else None


def discordance(first: Sequence[float] | np.ndarray, second: Sequence[float] | np.ndarray) -> Discordance:
    """The 2x2 table of two aligned sequences of 0/1 outcomes (truthy counts as 1)."""
    if len(first) != len(second):
        raise ValueError(f"paired outcomes differ in length: {len(first)} vs {len(second)}")
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for a, b in zip(first, second, strict=True):
        counts[(bool(a), bool(b))] += 1
    return Discordance(counts[(True, True)], counts[(True, False)], counts[(False, True)], counts[(False, False)])


def binomial_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): exact integer sums up to 5,000 trials, log space beyond."""
    if n < 0:
        raise ValueError(f"need n >= 0, got {n}")
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= _EXACT_UP_TO:
        term, total = 1, 1
        for i in range(k):
            term = term * (n - i) // (i + 1)
            total += term
        return float(total / 2**n)
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)]
    top = max(logs)
    return min(1.0, math.exp(top + math.log(sum(math.exp(v - top) for v in logs)) - n * math.log(2.0)))


def mcnemar_exact(first_only: int, second_only: int) -> float:
    """The exact McNemar test's two-sided p-value for ``b`` and ``c`` discordant pairs (1 when there are none)."""
    if first_only < 0 or second_only < 0:
        raise ValueError("discordant counts are never negative")
    return min(1.0, 2.0 * binomial_cdf(min(first_only, second_only), first_only + second_only))


def newcombe_paired(table: Discordance, *, level: float = LEVEL) -> tuple[float, float, float] | None:
    """B - A for paired proportions with Newcombe's hybrid score interval (his 1998 method 10): ``(d, low, high)``.

    With p_A = (both + first_only) / n, p_B = (both + second_only) / n, their Wilson intervals (l, u), and
    phi the correlation of the two marginals (``both * neither - first_only * second_only`` over the root
    of the four margins' product; taken as 0 when a margin is empty, shrunk by n/2 towards 0 when positive,
    as Newcombe does):

        low  = d - sqrt((p_B - l_B)^2 - 2 phi (p_B - l_B)(u_A - p_A) + (u_A - p_A)^2)
        high = d + sqrt((u_B - p_B)^2 - 2 phi (u_B - p_B)(p_A - l_A) + (p_A - l_A)^2)

    None without items.
    """
    n = table.n
    if n == 0:
        return None
    first = wilson(table.both + table.first_only, n, level=level)
    second = wilson(table.both + table.second_only, n, level=level)
    assert first.value is not None and second.value is not None and first.ci_low is not None  # n > 0
    assert first.ci_high is not None and second.ci_low is not None and second.ci_high is not None
    phi = _phi(table)
    p_a, p_b = first.value, second.value
    below_b, above_b = p_b - second.ci_low, second.ci_high - p_b
    below_a, above_a = p_a - first.ci_low, first.ci_high - p_a
    d = (table.second_only - table.first_only) / n
    low = d - math.sqrt(max(0.0, below_b**2 - 2 * phi * below_b * above_a + above_a**2))
    high = d + math.sqrt(max(0.0, above_b**2 - 2 * phi * above_b * below_a + below_a**2))
    return d, max(-1.0, low), min(1.0, high)


def _phi(table: Discordance) -> float:
    margins = (
        (table.both + table.first_only)
        * (table.second_only + table.neither)
        * (table.both + table.second_only)
        * (table.first_only + table.neither)
    )
    if margins == 0:
        return 0.0
    cross = table.both * table.neither - table.first_only * table.second_only
    half = table.n / 2.0
    if cross > half:
        return (cross - half) / math.sqrt(margins)
    return cross / math.sqrt(margins) if cross < 0 else 0.0


# --- the paired difference --------------------------------------------------------------------------------

EXACT_UP_TO_UNITS = 12
"""Up to this many units a bootstrap comparison takes its p-value from the exact sign-flip test, every one of the
2^units swaps enumerated (4,096 at 12), instead of the bootstrap: over two facts that both favour B every resample
favours B and the bootstrap's p is 0, whatever the truth, while the swaps give p = 1/2 there; over 10 facts the
design allows no p below 2/1024 (about 0.002), which a bootstrap p of 0 would claim to beat."""
MIN_BOOTSTRAP_UNITS = EXACT_UP_TO_UNITS + 1
"""The fewest units whose comparison takes the bootstrap's p-value (floored at what the design allows)."""


def smallest_p(units: int) -> float:
    """The smallest two-sided p-value any test of a paired difference over ``units`` units can give: 2 / 2^units,
    the exact sign-flip test's when every unit favours one side (1 without units)."""
    return min(1.0, 2.0 / 2.0**units) if units > 0 else 1.0


def sign_flip_p(sums_a: np.ndarray, sums_b: np.ndarray, statistic: Statistic) -> float:
    """The exact two-sided randomization test of a paired statistic: the share of the 2^units ways of swapping
    the two sides' summed components unit by unit whose difference is at least as far from 0 as the one seen."""
    g = sums_a.shape[0]
    flips = ((np.arange(2**g)[:, None] >> np.arange(g)[None, :]) & 1).astype(np.float64)  # [2^g, g]
    kept = 1.0 - flips
    as_a = kept @ sums_a + flips @ sums_b
    as_b = flips @ sums_a + kept @ sums_b
    with np.errstate(invalid="ignore", divide="ignore"):
        diffs = statistic(as_b) - statistic(as_a)
    seen = abs(float(diffs[0]))  # no swap: the difference observed
    diffs = np.where(np.isfinite(diffs), np.abs(diffs), 0.0)
    return float(np.mean(diffs >= seen - 1e-12 * max(1.0, seen)))


@dataclass(frozen=True)
class PairedDifference:
    """B - A on the shared items: both values, the difference with its 95% interval, the test and its p-value."""

    first: float | None
    second: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    """Shared units (facts, questions): what the interval is over."""
    p: float | None
    test: Test
    items: int = 0
    """Shared items (answers, paraphrases); the same as ``n`` when every item is its own unit."""
    discordant_ab: int | None = None
    """For a rate: units A gets and B does not."""
    discordant_ba: int | None = None
    spread: float | None = None
    """For a rate, the discordance rate psi; for a mean, the standard deviation of the per-unit differences:
    what the power of a comparison of this size rests on."""
    level: float = LEVEL
    resamples: int | None = None
    seed: int | None = None
    """The bootstrap's resamples and seed, when it drew any."""

    @property
    def decides(self) -> bool:
        """The interval lies on one side of 0 and the test agrees (p < 1 - level). Under
        :data:`EXACT_UP_TO_UNITS` units and fewer the test is the exact sign-flip test, whose p is exact at any size."""
        if self.ci_low is None or self.ci_high is None or self.p is None:
            return False
        return (self.ci_low > 0 or self.ci_high < 0) and self.p < 1.0 - self.level


def _units(items: Sequence[str], clusters: Mapping[str, str] | None) -> tuple[list[str], np.ndarray]:
    """The distinct units of ``items`` in first-seen order, and each item's unit index."""
    order: dict[str, int] = {}
    index = np.empty(len(items), dtype=np.int64)
    for i, item in enumerate(items):
        unit = item if clusters is None else clusters.get(item, item)
        index[i] = order.setdefault(unit, len(order))
    return list(order), index


def paired_proportions(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    units: Sequence[Hashable] | None = None,
    *,
    scale: float = 1.0,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedDifference:
    """Two models' 0/1 outcomes on the same items (aligned), compared: exact McNemar with Newcombe's paired
    interval when every item is its own unit, else the paired bootstrap over ``units`` (a unit per item)."""
    table = discordance(first, second)
    singletons = units is None or len(set(units)) == len(units)
    if not singletons:
        assert units is not None
        found = paired_bootstrap(first, second, units, scale=scale, level=level, resamples=resamples, seed=seed)
        return replace(found, discordant_ab=table.first_only, discordant_ba=table.second_only)
    n = table.n
    interval = newcombe_paired(table, level=level)
    if interval is None:
        return PairedDifference(None, None, None, None, None, 0, None, "exact McNemar", items=0)
    d, low, high = interval
    return PairedDifference(
        first=scale * (table.both + table.first_only) / n,
        second=scale * (table.both + table.second_only) / n,
        delta=scale * d,
        ci_low=scale * low,
        ci_high=scale * high,
        n=n,
        p=mcnemar_exact(table.first_only, table.second_only),
        test="exact McNemar",
        items=n,
        discordant_ab=table.first_only,
        discordant_ba=table.second_only,
        spread=table.rate,
        level=level,
    )


def paired_bootstrap(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    units: Sequence[Hashable] | None = None,
    *,
    scale: float = 1.0,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedDifference:
    """mean(second) - mean(first) over aligned items, with a seeded percentile bootstrap that resamples units
    (``units[i]``: item i's unit; default every item its own) with both models' outcomes together.

    Each resample's means are over its items (a unit drawn twice counts its items twice)."""
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired outcomes differ in length: {a.size} vs {b.size}")
    keys = [str(u) for u in units] if units is not None else [str(i) for i in range(a.size)]
    ones = np.ones_like(a)
    return paired_statistic(
        np.column_stack([a, ones]),
        np.column_stack([b, ones]),
        keys,
        ratio,
        scale=scale,
        level=level,
        draws=Draws(resamples, seed),
    )


def ratio(sums: np.ndarray) -> np.ndarray:
    """The statistic of a mean: the first component's sum over the second's (the items counted)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        result: np.ndarray = sums[:, 0] / sums[:, 1]
    return result


def paired_statistic(
    first: np.ndarray,
    second: np.ndarray,
    units: Sequence[str],
    statistic: Statistic,
    *,
    scale: float = 1.0,
    level: float = LEVEL,
    draws: Draws | None = None,
) -> PairedDifference:
    """statistic(second) - statistic(first) over aligned items, each item a row of components (``(items, k)``),
    with the paired percentile bootstrap over ``units`` (item i's unit ``units[i]``): both models' items of a
    drawn unit are drawn together, the statistic recomputed from the resample's summed components.

    Its p-value inverts the percentile interval, never below :func:`smallest_p` (up to :data:`EXACT_UP_TO_UNITS`
    units, the exact sign-flip test's, :func:`sign_flip_p`); ``spread`` is the bootstrap standard error times the root of the
    number of units (a per-unit standard deviation, what :func:`units_needed_for_mean` takes)."""
    names, index = _units(list(units), None)
    g, items = len(names), int(first.shape[0])
    if items == 0:
        return PairedDifference(None, None, None, None, None, 0, None, "paired bootstrap", items=0, level=level)
    sums_a = np.zeros((g, first.shape[1]))
    sums_b = np.zeros((g, second.shape[1]))
    np.add.at(sums_a, index, first)
    np.add.at(sums_b, index, second)
    value_a = float(statistic(sums_a.sum(axis=0)[None, :])[0])
    value_b = float(statistic(sums_b.sum(axis=0)[None, :])[0])
    finite = math.isfinite(value_a) and math.isfinite(value_b)
    delta = scale * (value_b - value_a) if finite else None
    undecided = PairedDifference(
        _scaled(value_a, scale), _scaled(value_b, scale), delta, None, None, g, None, "paired bootstrap", items=items
    )
    if g < 2 or delta is None:
        return undecided
    chosen = draws or Draws(RESAMPLES, SEED)
    drawn = chosen.of(tuple(names))
    diffs = scale * (statistic(drawn @ sums_b) - statistic(drawn @ sums_a))
    diffs = diffs[np.isfinite(diffs)]
    if diffs.size == 0:
        return undecided
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(diffs, [tail, 1.0 - tail])
    # floored at what the design allows: a bootstrap's p of 0 says only that no resample crossed 0
    p = max(smallest_p(g), min(1.0, 2.0 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0)))))
    test: Test = "paired bootstrap"
    if g <= EXACT_UP_TO_UNITS:
        p, test = sign_flip_p(sums_a, sums_b, statistic), "exact sign-flip"
    spread = float(np.std(diffs, ddof=1)) * math.sqrt(g) if diffs.size > 1 else None
    return replace(
        undecided,
        test=test,
        ci_low=float(low),
        ci_high=float(high),
        p=p,
        spread=spread,
        level=level,
        resamples=int(drawn.shape[0]),
        seed=chosen.seed,
    )


def _scaled(value: float, scale: float) -> float | None:
    return scale * value if math.isfinite(value) else None


def unit_resamples(units: int, *, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """How often each of ``units`` units is drawn in each of ``resamples`` seeded resamples: ``(resamples, units)``."""
    rng = np.random.default_rng(seed)
    parts = []
    for start in range(0, resamples, _CHUNK):
        batch = min(_CHUNK, resamples - start)
        parts.append(resample_counts(rng.integers(0, units, size=(batch, units)), units).astype(np.float64))
    return np.concatenate(parts)


@dataclass
class Draws:
    """One seeded draw per set of units, shared by every metric over the same units (a comparison of two runs
    resamples each class's facts once, not once per metric)."""

    resamples: int = RESAMPLES
    seed: int = SEED
    drawn: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict)

    def of(self, units: tuple[str, ...]) -> np.ndarray:
        if units not in self.drawn:
            self.drawn[units] = unit_resamples(len(units), resamples=self.resamples, seed=self.seed)
        return self.drawn[units]


def _components(outcomes: ItemOutcomes, items: Sequence[str]) -> np.ndarray:
    """The items' outcomes as rows of components: ``(value, 1)`` for a rate or mean, the given tuple otherwise."""
    if outcomes.kind == "statistic":
        return np.asarray([outcomes.values[item] for item in items], dtype=np.float64).reshape(len(items), -1)
    values = np.asarray([outcomes.number(item) for item in items], dtype=np.float64)
    return np.column_stack([values, np.ones_like(values)])


def compare_outcomes(
    first: ItemOutcomes,
    second: ItemOutcomes,
    *,
    level: float = LEVEL,
    draws: Draws | None = None,
) -> PairedDifference:
    """Two runs' outcomes of one metric and class on their shared items (in ``first``'s order): a rate whose
    every item is its own unit by McNemar and Newcombe, anything else by the paired bootstrap over units
    (``draws``: the seeded resamples, shared between metrics over the same units)."""
    shared = [item for item in first.values if item in second.values]
    if not shared:
        test: Test = "exact McNemar" if first.kind == "rate" and first.clusters is None else "paired bootstrap"
        return PairedDifference(None, None, None, None, None, 0, None, test, items=0, level=level)
    units = [first.unit_of(item) for item in shared]
    clustered = len(set(units)) < len(units)
    if first.kind == "rate":
        a = [first.number(item) for item in shared]
        b = [second.number(item) for item in shared]
        if not clustered:
            return paired_proportions(a, b, scale=first.scale, level=level)
        table = discordance(a, b)
    statistic = first.statistic or ratio
    found = paired_statistic(
        _components(first, shared),
        _components(second, shared),
        units,
        statistic,
        scale=first.scale,
        level=level,
        draws=draws,
    )
    if first.kind != "rate":
        return found
    return replace(found, discordant_ab=table.first_only, discordant_ba=table.second_only)


# --- clustered standard errors ----------------------------------------------------------------------------


def clustered_se(values: Sequence[float], clusters: Sequence[Hashable]) -> float | None:
    """The standard error of the mean of ``values`` whose items come in ``clusters`` (Miller 2024, eq. 4):
    sqrt(sum over clusters of (sum of the cluster's deviations from the mean)^2) / n. With every item its own
    cluster this is the plain standard error with the variance taken over n (not n - 1). None without items."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return None
    if len(clusters) != data.size:
        raise ValueError("one cluster per value is needed")
    _, index = _units([str(c) for c in clusters], None)
    deviations = np.bincount(index, data - data.mean())
    return float(math.sqrt(float((deviations**2).sum())) / data.size)


# --- power ---------------------------------------------------------------------------------------------


def _z(level: float, power: float) -> tuple[float, float]:
    normal = NormalDist()
    return normal.inv_cdf(0.5 + level / 2.0), normal.inv_cdf(power)


def units_needed(delta: float, discordance_rate: float, *, level: float = LEVEL, power: float = POWER) -> int | None:
    """Units a paired difference of proportions ``delta`` (0-1) needs to be detected at ``power`` by a two-sided
    test at ``level``, when a share ``discordance_rate`` of units is discordant (Connor 1987). None when the
    difference cannot be (zero, or larger than the discordance allows)."""
    d, psi = abs(delta), discordance_rate
    if d == 0 or psi <= 0 or d > psi:
        return None
    z_a, z_b = _z(level, power)
    return math.ceil((z_a * math.sqrt(psi) + z_b * math.sqrt(max(0.0, psi - d * d))) ** 2 / (d * d))


def detectable_difference(
    units: int, discordance_rate: float, *, level: float = LEVEL, power: float = POWER
) -> float | None:
    """The smallest paired difference of proportions (0-1) ``units`` units detect at ``power`` (Connor 1987,
    solved for the difference); None when no difference within the discordance is detectable at that size."""
    psi = discordance_rate
    if units <= 0 or psi <= 0:
        return None
    z_a, z_b = _z(level, power)
    root = math.sqrt(units)

    def gap(d: float) -> float:  # increasing in d: positive once d is detectable
        return root * d - z_a * math.sqrt(psi) - z_b * math.sqrt(max(0.0, psi - d * d))

    if gap(psi) < 0:
        return None
    low, high = 0.0, psi
    for _ in range(60):
        middle = (low + high) / 2.0
        low, high = (middle, high) if gap(middle) < 0 else (low, middle)
    return high


def units_needed_for_mean(delta: float, spread: float, *, level: float = LEVEL, power: float = POWER) -> int | None:
    """Units a paired difference of means ``delta`` needs, the per-unit differences having standard deviation
    ``spread`` (normal approximation); None for a zero difference or spread."""
    if delta == 0 or spread <= 0:
        return None
    z_a, z_b = _z(level, power)
    return math.ceil(((z_a + z_b) * spread / abs(delta)) ** 2)


def detectable_mean_difference(units: int, spread: float, *, level: float = LEVEL, power: float = POWER) -> float:
    """The smallest paired difference of means ``units`` units detect at ``power`` (normal approximation)."""
    z_a, z_b = _z(level, power)
    return (z_a + z_b) * spread / math.sqrt(units) if units > 0 else math.inf
