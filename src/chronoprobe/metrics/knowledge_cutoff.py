"""The knowledge cutoff: the date after which a model stops knowing changes. Pure functions.

Each dated fact (one the model answers with a value the snapshot dates, current or outdated) gives
two numbers: ``change``, the date of the change the question is about (when the fact's current value
began), and ``known``, the share of its dated answers that give that current value. A model whose
knowledge stops at c knows a change before c with probability ``before`` and one after c with a lower
probability ``after`` (a lucky guess, a holder who had held it before). The **cutoff** is that step's
changepoint, fitted by maximum likelihood over every dated fact::

    log L(c) = sum over facts of  known * log p(change) + (1 - known) * log(1 - p(change)),
    p(t) = before if t <= c else after,   before >= after (profiled out: each side's mean)

The likelihood only changes where c passes a fact's change date, so it is constant on each gap
between two consecutive change dates; the estimate is the middle of the best gap (the middle one
where several tie), the changes it falls between are reported beside it. A split whose ``before`` side
knows less than its ``after`` side has no drop, and gets the likelihood of no change at all.

The 95% interval is a **profile likelihood** interval: every c whose likelihood ratio to the best,
2 (log L(best) - log L(c)), is at most the 95% quantile of that ratio at the changepoint in worlds drawn
from the fitted step (:func:`bootstrap_threshold`, a seeded parametric bootstrap: a changepoint is not a
regular parameter, so chi-square's 3.84 does not apply), from the first such gap's start to the last
one's end. The interval always spans at least one whole gap, so it is never a single point; a flat
likelihood (every fact known, or none) makes it as wide as the dates allow. Its coverage is simulated in
``scripts/knowledge_date_simulation.py --cutoff`` (docs/outdated.md, "The knowledge cutoff").

With fewer than :data:`MIN_FACTS` dated facts no cutoff is estimated (the caller says "too few
dated facts (N)"). Dates are decimal years, as in :mod:`chronoprobe.metrics.knowledge_date`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from chronoprobe.knowledge.types import FactAnswers
from chronoprobe.metrics.knowledge_date import DatedAnswer, decimal_year
from chronoprobe.metrics.uncertainty import LEVEL, RESAMPLES, SEED, Estimate

MIN_FACTS = 10
"""No cutoff is estimated from fewer dated facts than this."""
_TINY = 1e-12


@dataclass(frozen=True)
class ChangeFact:
    """One dated fact: when its current value began, and how often the model gives that value."""

    fact_id: str
    change: float
    """Decimal year the fact's current value began (the first day its start may mean)."""
    known: float
    """Share of the fact's dated answers that give its current value (0 to 1)."""


@dataclass(frozen=True)
class KnowledgeCutoff:
    """The fitted changepoint with its profile-likelihood interval."""

    estimate: Estimate
    """Decimal year; n = dated facts; interval by profile likelihood."""
    last_known: float | None
    """The latest change date on the known side of the best split (None: none there)."""
    first_unknown: float | None
    """The earliest change date on the unknown side (None: none there)."""
    before: float
    """P(known) for changes up to the cutoff."""
    after: float
    """P(known) for changes after it."""
    flat: bool
    """True when no split beats "no change at all": the data show no drop."""
    threshold: float
    """The likelihood ratio the interval admits (:func:`bootstrap_threshold`)."""


def change_date(answers: FactAnswers) -> float | None:
    """When the fact's current value began: the latest start among its current statements, from the first
    day of the day, month or year the start is known to (when the value may first have held, as
    ``Statement.valid_at`` reads it); None without a dated current value."""
    starts = [decimal_year(s.start.earliest()) for s in answers.counted().current() if s.start is not None]
    return max(starts, default=None)


def change_facts(answers: Sequence[DatedAnswer], gold: Mapping[str, FactAnswers]) -> list[ChangeFact]:
    """One :class:`ChangeFact` per fact with a dated answer and a dated current value."""
    known: dict[str, list[bool]] = {}
    for answer in answers:
        known.setdefault(answer.fact_id, []).append(answer.current)
    facts = []
    for fact_id, flags in known.items():
        change = change_date(gold[fact_id])
        if change is not None:
            facts.append(ChangeFact(fact_id, change, sum(flags) / len(flags)))
    return facts


def _bernoulli(successes: np.ndarray, trials: np.ndarray) -> np.ndarray:
    """Maximised log likelihood of ``successes`` of ``trials`` (fractional counts allowed) at p = k/n."""
    p = np.where(trials > 0, successes / np.maximum(trials, _TINY), 0.5)
    logp = np.log(np.clip(p, _TINY, 1.0))
    log1p = np.log(np.clip(1.0 - p, _TINY, 1.0))
    return np.asarray(successes * logp + (trials - successes) * log1p, dtype=np.float64)


@dataclass(frozen=True)
class _Sorted:
    """The facts sorted by change date, grouped by distinct date."""

    edges: np.ndarray
    """Distinct change dates, sorted; split k puts the facts of edges[:k] on the known side."""
    known: np.ndarray
    """(facts,): known shares in change-date order."""
    starts: np.ndarray
    """Index of each edge's first fact in ``known``."""
    count: np.ndarray
    """(edges,): facts per edge."""


def _sorted(facts: Sequence[ChangeFact]) -> _Sorted:
    order = np.argsort([f.change for f in facts], kind="stable")
    changes = np.asarray([facts[i].change for i in order], dtype=np.float64)
    known = np.asarray([facts[i].known for i in order], dtype=np.float64)
    edges, starts, count = np.unique(changes, return_index=True, return_counts=True)
    return _Sorted(edges, known, starts, count.astype(np.float64))


def _split_loglik(data: _Sorted, known: np.ndarray) -> np.ndarray:
    """(rows, splits): the profile log likelihood of every split k = 0 .. edges for each row of ``known``
    (rows, facts); a split whose known side knows less than the other gets the no-change likelihood."""
    hits = np.add.reduceat(known, data.starts, axis=1)
    n1 = np.concatenate([[0.0], np.cumsum(data.count)])
    k1 = np.concatenate([np.zeros((known.shape[0], 1)), np.cumsum(hits, axis=1)], axis=1)
    n2, k2 = n1[-1] - n1, k1[:, -1:] - k1
    split = _bernoulli(k1, n1) + _bernoulli(k2, n2)
    none = _bernoulli(k1[:, -1:], n1[-1:])
    before = np.where(n1 > 0, k1 / np.maximum(n1, _TINY), 1.0)
    after = np.where(n2 > 0, k2 / np.maximum(n2, _TINY), 0.0)
    return np.asarray(np.where(before < after, none, split), dtype=np.float64)


def bootstrap_threshold(data: _Sorted, best: int, *, level: float, resamples: int, seed: int) -> float:
    """The ``level`` quantile of the likelihood ratio at the changepoint, 2 (log L(best) - log L(c)), in worlds
    drawn from the fitted step: each fact known (1) or not (0) with its side's fitted probability, the change
    dates as they are (a parametric bootstrap, seeded). A changepoint is not a regular parameter, so
    chi-square's 3.84 does not apply; a sharp drop gives a small quantile, a weak one a large one."""
    cut = int(data.starts[best]) if best < len(data.edges) else len(data.known)
    sides = (data.known[:cut], data.known[cut:])
    chance = np.concatenate([np.full(len(side), side.mean() if len(side) else 0.0) for side in sides])
    drawn = (np.random.default_rng(seed).random((resamples, len(chance))) < chance).astype(np.float64)
    loglik = _split_loglik(data, drawn)
    return float(np.quantile(2.0 * (loglik.max(axis=1) - loglik[:, best]), level))


def _gap(edges: np.ndarray, k: int, start: float, end: float) -> tuple[float, float]:
    """The cutoffs split k stands for: from the last known change to the first unknown one."""
    low = edges[k - 1] if k > 0 else min(start, edges[0])
    high = edges[k] if k < len(edges) else max(end, edges[-1])
    return float(low), float(high)


def _middle_of_best(loglik: np.ndarray) -> int:
    top = float(loglik.max())
    tied = np.flatnonzero(loglik >= top - _TINY * max(1.0, abs(top)))
    return int(tied[(len(tied) - 1) // 2])


def estimate_knowledge_cutoff(
    facts: Sequence[ChangeFact],
    *,
    start: float,
    end: float,
    level: float = LEVEL,
    min_facts: int = MIN_FACTS,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> KnowledgeCutoff | None:
    """The knowledge cutoff of ``facts``; None below ``min_facts`` facts.

    ``start`` and ``end`` bound the cutoffs the extreme splits stand for (nothing known: from ``start``
    to the first change; everything known: from the last change to ``end``, the snapshot date)."""
    if len(facts) < max(min_facts, 2):
        return None
    data = _sorted(facts)
    loglik = _split_loglik(data, data.known[None, :])[0]
    best = _middle_of_best(loglik)
    gap_low, gap_high = _gap(data.edges, best, start, end)
    distance = 2.0 * (loglik.max() - loglik)
    threshold = bootstrap_threshold(data, best, level=level, resamples=resamples, seed=seed)
    inside = np.flatnonzero(distance <= threshold + _TINY)
    n1 = float(data.count[:best].sum())
    k1 = float(data.known[: int(n1)].sum())
    total = float(data.known.sum())
    return KnowledgeCutoff(
        estimate=Estimate(
            value=(gap_low + gap_high) / 2.0,
            n=len(facts),
            ci_low=_gap(data.edges, int(inside.min()), start, end)[0],
            ci_high=_gap(data.edges, int(inside.max()), start, end)[1],
            method="profile-likelihood",
            level=level,
        ),
        last_known=float(data.edges[best - 1]) if best > 0 else None,
        first_unknown=float(data.edges[best]) if best < len(data.edges) else None,
        before=k1 / n1 if n1 else math.nan,
        after=(total - k1) / (len(facts) - n1) if len(facts) > n1 else math.nan,
        flat=bool(np.all(distance <= _TINY)),
        threshold=threshold,
    )


# --- the cutoff over a monthly grid, from summed components (a paired bootstrap over facts) ------------------


def cutoff_components(fact: ChangeFact, grid: np.ndarray) -> np.ndarray:
    """A fact's components: per grid month whether its change is on the known side (change <= month) and, if so,
    its known share; then 1 and its known share. Summed over facts they give every split's counts."""
    before = (fact.change <= grid).astype(np.float64)
    return np.concatenate([before, before * fact.known, [1.0, fact.known]])


def cutoff_of_sums(sums: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """(rows, components) summed :func:`cutoff_components` -> the cutoff of each row on ``grid`` (the middle of the
    best months where several tie), by the same profile likelihood as :func:`estimate_knowledge_cutoff`."""
    size = len(grid)
    n1, k1 = sums[:, :size], sums[:, size : 2 * size]
    total, hits = sums[:, 2 * size : 2 * size + 1], sums[:, 2 * size + 1 : 2 * size + 2]
    n2, k2 = total - n1, hits - k1
    split = _bernoulli(k1, n1) + _bernoulli(k2, n2)
    none = _bernoulli(hits, total)
    before = np.where(n1 > 0, k1 / np.maximum(n1, _TINY), 1.0)
    after = np.where(n2 > 0, k2 / np.maximum(n2, _TINY), 0.0)
    loglik = np.where(before < after, none, split)
    return np.asarray([grid[_middle_of_best(row)] for row in loglik], dtype=np.float64)
