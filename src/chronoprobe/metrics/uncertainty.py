"""Sample sizes and 95% intervals for every rate and mean we report. Pure functions, no I/O.

- proportions (k of n): the Wilson score interval;
- means and other statistics over items: a percentile bootstrap that resamples the items
  with a seeded ``numpy`` Generator, so the same inputs always give the same interval;
- differences between two independent groups: Newcombe's hybrid score interval for two
  proportions, a bootstrap that resamples each group on its own for two means.

An :class:`Estimate` keeps the reported value beside its n and interval. With no items
(n = 0) the value and the interval are ``None``; a bootstrap over a single item gives no
interval either (every resample is the same item).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

__all__ = [
    "LEVEL",
    "RESAMPLES",
    "SEED",
    "Estimate",
    "Method",
    "as_estimate",
    "bootstrap",
    "bootstrap_difference",
    "bootstrap_mean",
    "bootstrap_mean_clustered",
    "cell",
    "ci_cell",
    "newcombe",
    "resample_counts",
    "share_bounds",
    "wilson",
    "wilson_clustered",
    "wilson_from_flags",
]

LEVEL = 0.95
RESAMPLES = 1000
SEED = 0
_CHUNK = 200
"""Resamples drawn per batch: bounds memory to _CHUNK x n indices; fixed, so results stay reproducible."""

Method = Literal["wilson", "bootstrap", "newcombe", "wilson-clustered", "cluster-bootstrap", "profile-likelihood"]
"""How an interval was made (a share of 0/1 outcomes all alike takes ``wilson`` over its units, whatever resampled
it: a resample of them never varies)."""


class Estimate(BaseModel):
    """A reported number with its sample size and confidence interval (same scale as the value)."""

    model_config = ConfigDict(frozen=True)

    value: float | None
    n: int
    ci_low: float | None
    ci_high: float | None
    method: Method
    level: float = LEVEL

    @property
    def has_interval(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None

    def interval(self, digits: int = 3, scale: float = 1.0) -> str:
        """``[lo, hi]``, or ``[–]`` when there is no interval."""
        if self.ci_low is None or self.ci_high is None:
            return "[–]"
        return f"[{self.ci_low * scale:.{digits}f}, {self.ci_high * scale:.{digits}f}]"

    def cell(self, digits: int = 3, scale: float = 1.0, suffix: str = "") -> str:
        """``value [lo, hi]`` for a report table whose n is shown elsewhere; ``–`` without a value."""
        if self.value is None:
            return "–"
        return f"{self.value * scale:.{digits}f}{suffix} {self.interval(digits, scale)}"

    def format(self, digits: int = 3, scale: float = 1.0, suffix: str = "") -> str:
        """``value [lo, hi] (n=N)``, e.g. ``0.800 [0.490, 0.943] (n=10)``."""
        return f"{self.cell(digits, scale, suffix)} (n={self.n})"

    def format_pct(self, digits: int = 1) -> str:
        """A proportion as a percentage: ``80.0% [49.0, 94.3] (n=10)``."""
        return self.format(digits, scale=100.0, suffix="%")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def reported_as(self, value: float | None) -> Estimate:
        """The same estimate with ``value`` as its value: the number a table already shows, which
        may differ from ours in the last digit when it was computed in another order."""
        if self.value is None or value is None:
            return self
        return self.model_copy(update={"value": float(value)})


def _check_level(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must lie strictly between 0 and 1, got {level}")
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def wilson(k: int, n: int, *, level: float = LEVEL, scale: float = 1.0) -> Estimate:
    """k successes in n trials: value k/n with the Wilson score interval, times ``scale``.

    ``scale=100`` reports a percentage. n = 0 gives value and interval ``None``.
    """
    if n < 0 or not 0 <= k <= max(n, 0):
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    z = _check_level(level)
    if n == 0:
        return Estimate(value=None, n=0, ci_low=None, ci_high=None, method="wilson", level=level)
    low, high = _wilson_bounds(k / n, n, z, k == 0, k == n)
    return Estimate(value=scale * k / n, n=n, ci_low=scale * low, ci_high=scale * high, method="wilson", level=level)


def _wilson_bounds(p: float, n: float, z: float, none: bool, every: bool) -> tuple[float, float]:
    """The Wilson score bounds of a share ``p`` over ``n`` trials (``n`` may be an effective, fractional size)."""
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denominator
    # The bounds are exactly 0 and 1 at the extremes; clamp away rounding residue.
    low = 0.0 if none else max(0.0, centre - half)
    high = 1.0 if every else min(1.0, centre + half)
    return low, high


def share_bounds(value: float, low: float, high: float, units: int, *, level: float = LEVEL) -> tuple[float, float]:
    """A share's interval ends (0-1), Wilson's over ``units`` where a resampling interval has no width: a share of
    0 or 1 resampled is 0 or 1 in every resample, which says nothing of how far the truth may lie from it."""
    if units > 0 and low == high and value in (0.0, 1.0):
        found = wilson(round(value * units), units, level=level)
        assert found.ci_low is not None and found.ci_high is not None  # units > 0
        return found.ci_low, found.ci_high
    return low, high


def _binary(data: np.ndarray) -> bool:
    return bool(data.size) and bool(np.all((data == 0.0) | (data == 1.0)))


def _cluster_index(clusters: Sequence[Hashable], n: int) -> tuple[np.ndarray, int]:
    """Each item's cluster as an index (first-seen order) and the number of clusters."""
    if len(clusters) != n:
        raise ValueError(f"one cluster per item is needed: {len(clusters)} for {n} items")
    order: dict[Hashable, int] = {}
    index = np.fromiter((order.setdefault(c, len(order)) for c in clusters), dtype=np.int64, count=n)
    return index, len(order)


def wilson_clustered(
    flags: Sequence[bool | int | float],
    clusters: Sequence[Hashable],
    *,
    level: float = LEVEL,
    scale: float = 1.0,
) -> Estimate:
    """:func:`wilson_from_flags` for outcomes that come in clusters (a fact's paraphrases, a question's contexts).

    The Wilson interval at the effective sample size n / deff, where the design effect deff is the
    clustered variance of the share (Miller 2024, eq. 4) over its binomial variance p(1 - p)/n, the
    effective size kept between the number of clusters and n (Kish's design effect; the Wilson interval
    on it as Dean & Pagano 2015 evaluate it). A share of 0 or 1 measures no within-cluster correlation,
    so it takes the cautious end: the number of clusters. With every item its own cluster this is
    :func:`wilson_from_flags` to the last digit. n stays the number of items (what the share is over).
    """
    n = len(flags)
    index, units = _cluster_index(clusters, n)
    k = sum(1 for f in flags if f)
    if units == n or n == 0:
        return wilson(k, n, level=level, scale=scale)
    z = _check_level(level)
    p = k / n
    if 0 < k < n:
        data = np.fromiter((1.0 if f else 0.0 for f in flags), dtype=np.float64, count=n)
        clustered = float((np.bincount(index, data - p, minlength=units) ** 2).sum()) / (n * n)
        binomial = p * (1.0 - p) / n
        effective = min(float(n), max(float(units), n * binomial / clustered)) if clustered > 0 else float(n)
    else:
        effective = float(units)
    low, high = _wilson_bounds(p, effective, z, k == 0, k == n)
    return Estimate(
        value=scale * k / n, n=n, ci_low=scale * low, ci_high=scale * high, method="wilson-clustered", level=level
    )


def wilson_from_flags(flags: Sequence[bool | int | float], *, level: float = LEVEL, scale: float = 1.0) -> Estimate:
    """:func:`wilson` over 0/1 outcomes (booleans or 0.0/1.0)."""
    return wilson(sum(1 for f in flags if f), len(flags), level=level, scale=scale)


def bootstrap(
    n: int,
    statistic: Callable[[np.ndarray], np.ndarray],
    point: float | None,
    *,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Estimate:
    """Percentile bootstrap over ``n`` items.

    ``statistic`` receives a ``(batch, n)`` array of item indices (each row one resample
    with replacement) and returns the statistic of every row; ``point`` is the statistic on
    the full sample, reported as the value. Non-finite resample statistics are ignored.
    """
    _check_level(level)
    if resamples < 1:
        raise ValueError(f"need at least one resample, got {resamples}")
    if n == 0 or point is None or not math.isfinite(point):
        return Estimate(
            value=None if n == 0 else point, n=n, ci_low=None, ci_high=None, method="bootstrap", level=level
        )
    if n == 1:
        return Estimate(value=point, n=1, ci_low=None, ci_high=None, method="bootstrap", level=level)
    rng = np.random.default_rng(seed)
    stats = []
    for start in range(0, resamples, _CHUNK):
        batch = min(_CHUNK, resamples - start)
        stats.append(np.asarray(statistic(rng.integers(0, n, size=(batch, n))), dtype=np.float64))
    return _percentiles(np.concatenate(stats), point, n, level)


def _percentiles(statistics: np.ndarray, point: float, n: int, level: float) -> Estimate:
    """The percentile interval of the finite resample statistics around ``point``."""
    values = statistics[np.isfinite(statistics)]
    if values.size == 0:
        return Estimate(value=point, n=n, ci_low=None, ci_high=None, method="bootstrap", level=level)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return Estimate(value=point, n=n, ci_low=float(low), ci_high=float(high), method="bootstrap", level=level)


def resample_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` items is drawn in every resample: ``(batch, n)`` indices to ``(batch, n)`` counts.

    Lets a statistic over clusters of rows (the rows of a question) be computed as counts @ per-cluster totals.
    """
    batch = idx.shape[0]
    flat = (idx + (np.arange(batch) * n)[:, None]).ravel()
    counts: np.ndarray = np.bincount(flat, minlength=batch * n).reshape(batch, n)
    return counts


def bootstrap_difference(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    *,
    point: float | None = None,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    clusters: tuple[Sequence[Hashable], Sequence[Hashable]] | None = None,
) -> Estimate:
    """mean(first) − mean(second) for two independent groups, each resampled on its own
    (percentile bootstrap); n counts the items of both. ``point``: the value to report.

    ``clusters``: each group's item clusters (a fact's contexts); where a group's items share
    clusters, its clusters are resampled instead of its items (``cluster-bootstrap``)."""
    _check_level(level)
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if clusters is not None and a.size and b.size:
        grouped = _clustered_groups(a, b, clusters)
        if grouped is not None:
            return _clustered_difference(grouped, point, level, resamples, seed)
    n = int(a.size + b.size)
    if point is None and a.size and b.size:
        point = float(a.mean() - b.mean())
    if not a.size or not b.size or point is None or not math.isfinite(point):
        value = point if a.size and b.size else None
        return Estimate(value=value, n=n, ci_low=None, ci_high=None, method="bootstrap", level=level)
    if a.size == 1 and b.size == 1:
        return Estimate(value=point, n=n, ci_low=None, ci_high=None, method="bootstrap", level=level)
    rng = np.random.default_rng(seed)
    stats = []
    for start in range(0, resamples, _CHUNK):
        batch = min(_CHUNK, resamples - start)
        first_means = a[rng.integers(0, a.size, size=(batch, a.size))].mean(axis=1)
        second_means = b[rng.integers(0, b.size, size=(batch, b.size))].mean(axis=1)
        stats.append(first_means - second_means)
    return _percentiles(np.concatenate(stats), point, n, level)


_Grouped = tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _clustered_groups(
    a: np.ndarray, b: np.ndarray, clusters: tuple[Sequence[Hashable], Sequence[Hashable]]
) -> _Grouped | None:
    """Each group's per-cluster sums and sizes; None when every item of both groups is its own cluster."""
    sides = []
    singletons = True
    for data, owners in ((a, clusters[0]), (b, clusters[1])):
        index, units = _cluster_index(owners, data.size)
        singletons &= units == data.size
        sides.append((np.bincount(index, data, minlength=units), np.bincount(index, minlength=units).astype(float)))
    return None if singletons else (sides[0], sides[1])


def _clustered_difference(grouped: _Grouped, point: float | None, level: float, resamples: int, seed: int) -> Estimate:
    (sums_a, sizes_a), (sums_b, sizes_b) = grouped
    n = int(sizes_a.sum() + sizes_b.sum())
    if point is None:
        point = float(sums_a.sum() / sizes_a.sum() - sums_b.sum() / sizes_b.sum())
    if not math.isfinite(point) or (sums_a.size == 1 and sums_b.size == 1):
        return Estimate(value=point, n=n, ci_low=None, ci_high=None, method="cluster-bootstrap", level=level)
    rng = np.random.default_rng(seed)
    stats = []
    for start in range(0, resamples, _CHUNK):
        batch = min(_CHUNK, resamples - start)
        means = []
        for sums, sizes in ((sums_a, sizes_a), (sums_b, sizes_b)):
            counts = resample_counts(rng.integers(0, sums.size, size=(batch, sums.size)), sums.size).astype(float)
            means.append((counts @ sums) / (counts @ sizes))
        stats.append(means[0] - means[1])
    found = _percentiles(np.concatenate(stats), point, n, level)
    return found.model_copy(update={"method": "cluster-bootstrap"})


def newcombe(first: Estimate, second: Estimate, *, point: float | None = None) -> Estimate:
    """first − second for two independent proportions, from their Wilson estimates: Newcombe's
    hybrid score interval (his method 10), at their level and on their scale; n counts both groups.

    lower = d − sqrt((p1 − l1)² + (u2 − p2)²), upper = d + sqrt((u1 − p1)² + (p2 − l2)²).
    """
    n = first.n + second.n
    p1, p2 = first.value, second.value
    if p1 is None or p2 is None:
        return Estimate(value=None, n=n, ci_low=None, ci_high=None, method="newcombe", level=first.level)
    d = p1 - p2 if point is None else point
    if first.ci_low is None or first.ci_high is None or second.ci_low is None or second.ci_high is None:
        return Estimate(value=d, n=n, ci_low=None, ci_high=None, method="newcombe", level=first.level)
    low = d - math.hypot(p1 - first.ci_low, second.ci_high - p2)
    high = d + math.hypot(first.ci_high - p1, p2 - second.ci_low)
    return Estimate(value=d, n=n, ci_low=low, ci_high=high, method="newcombe", level=first.level)


def bootstrap_mean(
    values: Sequence[float] | np.ndarray,
    *,
    point: float | None = None,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    share: bool = False,
) -> Estimate:
    """The mean of ``values`` with a percentile-bootstrap interval over the items.

    ``point``: the value to report (default: the mean itself); pass the number a table
    already shows when it was computed in another order of operations. ``share``: the values are 0/1
    outcomes and their mean a share, which takes Wilson's interval where they are all alike.
    """
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1:
        raise ValueError("bootstrap_mean needs a flat sequence of numbers")
    if point is None and data.size:
        point = float(data.mean())
    found = bootstrap(data.size, lambda idx: data[idx].mean(axis=1), point, level=level, resamples=resamples, seed=seed)
    return _share_where_flat(found, data, data.size, level) if share else found


def _share_where_flat(found: Estimate, data: np.ndarray, units: int, level: float) -> Estimate:
    """A bootstrap of 0/1 outcomes all alike has no width: the share takes Wilson's interval over its units."""
    if found.ci_low is None or found.ci_high is None or found.ci_low != found.ci_high or not _binary(data):
        return found
    low, high = share_bounds(float(data[0]), found.ci_low, found.ci_high, units, level=level)
    return found.model_copy(update={"ci_low": low, "ci_high": high, "method": "wilson"})


def bootstrap_mean_clustered(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable],
    *,
    point: float | None = None,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    share: bool = False,
) -> Estimate:
    """:func:`bootstrap_mean` for values that come in clusters: the bootstrap resamples clusters, each
    resample's mean over the items its clusters hold. With every item its own cluster this is
    :func:`bootstrap_mean` to the last digit; n stays the number of items."""
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1:
        raise ValueError("bootstrap_mean_clustered needs a flat sequence of numbers")
    index, units = _cluster_index(clusters, data.size)
    if units == data.size:
        return bootstrap_mean(data, point=point, level=level, resamples=resamples, seed=seed, share=share)
    if point is None and data.size:
        point = float(data.mean())
    sums = np.bincount(index, data, minlength=units)
    sizes = np.bincount(index, minlength=units).astype(np.float64)

    def means(idx: np.ndarray) -> np.ndarray:
        counts = resample_counts(idx, units).astype(np.float64)
        result: np.ndarray = (counts @ sums) / (counts @ sizes)
        return result

    found = bootstrap(units, means, point, level=level, resamples=resamples, seed=seed)
    found = found.model_copy(update={"n": int(data.size), "method": "cluster-bootstrap"})
    return _share_where_flat(found, data, units, level) if share else found


def as_estimate(value: Estimate | Mapping[str, Any] | None) -> Estimate | None:
    """An :class:`Estimate` from itself or its JSON form (as read back from ``summary.json``)."""
    if value is None or isinstance(value, Estimate):
        return value
    return Estimate.model_validate(dict(value))


def cell(value: Estimate | Mapping[str, Any] | None, digits: int = 3, scale: float = 1.0, suffix: str = "") -> str:
    """Report-table cell for an estimate or its JSON form: ``value [lo, hi]``; ``–`` for none."""
    estimate = as_estimate(value)
    return "–" if estimate is None else estimate.cell(digits, scale, suffix)


def ci_cell(value: Estimate | Mapping[str, Any] | None, digits: int = 3) -> str:
    """Report-table cell with only the interval and n: ``[lo, hi] (n=N)``; ``–`` for none."""
    estimate = as_estimate(value)
    if estimate is None:
        return "–"
    return f"{estimate.interval(digits)} (n={estimate.n})"
