"""The effective knowledge date of a model and how fast its knowledge goes stale. Pure functions.

Every answer the DyKnow classifier matched names one value of a fact, and the snapshot says
when that value held (one or more validity periods). From these periods alone:

- the **as-of curve**: for each date t on a monthly grid, the share of matched answers whose
  value held at t;
- the **knowledge date** T: the date whose world the answers describe best, by maximum
  likelihood under a noisy-recall model (below), with a percentile bootstrap over facts;
- the **staleness curve**: of the answers that held at T, the share still holding at each
  later date up to the snapshot, and a **freshness half-life** from a constant-hazard fit.

The model (docs/outdated.md, "Knowledge date"). An answer to fact f names value v. If the
model's knowledge stops at T, it names a value that held at T with probability 1 - eps, and
otherwise one of the fact's K_f values at random (an older memory, a confusion)::

    P(v | T) = (1 - eps) * P(v held at T) + eps / K_f

``P(v held at T)`` is 0 or 1 for day-precise dates; a date known only to the month or year is
read as uniform over that month or year, so the probability ramps linearly across it. A fact's
answers (its paraphrases) are averaged in log-likelihood so that each fact counts once, and
eps is profiled out over a small grid. A fact whose value never changed gives a flat
likelihood after its start and so moves nothing; a fact with many values moves the estimate
more than one with two (its noise term eps / K_f is smaller). Irrelevant and ambiguous answers
name no dated value: they are excluded and counted.

Dates are decimal years: 2021.5 is the start of July 2021 (month m starts at year + (m-1)/12).
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from chronoprobe.knowledge.types import FactAnswers, Statement, WikidataDate
from chronoprobe.metrics.uncertainty import LEVEL, RESAMPLES, SEED, Estimate, bootstrap, share_bounds

GRID_START = 2000.0
"""First date of the default grid: no audited model's knowledge is older."""
GRID_STEP = 1.0 / 12.0
NOISE_GRID: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
"""Values of eps the likelihood is profiled over."""
MIN_FACTS = 5
"""A category gets its own knowledge date only with at least this many facts with a dated answer."""
_TIE = 1e-9


# --- dates ---------------------------------------------------------------------------------------


def decimal_year(date: dt.date) -> float:
    """``2021-07-01`` -> 2021.5; days split their month evenly."""
    days = calendar.monthrange(date.year, date.month)[1]
    return date.year + (date.month - 1 + (date.day - 1) / days) / 12.0


def month_label(value: float) -> str:
    """The month a decimal year falls in: ``2021.5`` -> ``2021-07``."""
    months = math.floor(value * 12.0 + 1e-6)
    return f"{months // 12:04d}-{months % 12 + 1:02d}"


def parse_month(text: str) -> float:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` as a decimal year; ``ValueError`` otherwise."""
    parts = text.strip().split("-")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts) or len(parts[0]) != 4:
        raise ValueError(f"{text!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
    year, month, day = int(parts[0]), int(parts[1]) if len(parts) > 1 else 1, int(parts[2]) if len(parts) > 2 else 1
    return decimal_year(dt.date(year, month, day))


def monthly_grid(start: float, end: float) -> np.ndarray:
    """First days of the months from the month holding ``start`` to the one holding ``end``."""
    first, last = math.floor(start * 12 + 1e-6), math.floor(end * 12 + 1e-6)
    return np.arange(first, max(first, last) + 1, dtype=np.float64) / 12.0


def _span(date: WikidataDate) -> tuple[float, float]:
    """(first, end) of the time a date may mean, as decimal years: a day, a month or a year long."""
    first = decimal_year(date.earliest())
    last = date.latest() + dt.timedelta(days=1)
    return first, decimal_year(last)


# --- validity --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Period:
    """When a value held: it started somewhere in [start_lo, start_hi) and ended in [end_lo, end_hi)
    (uniformly); an open-ended period has infinite end bounds."""

    start_lo: float
    start_hi: float
    end_lo: float = math.inf
    end_hi: float = math.inf

    @classmethod
    def of(cls, statement: Statement) -> Period:
        if statement.start is None:
            raise ValueError(f"statement {statement.label!r} has no start")
        start_lo, start_hi = _span(statement.start)
        if statement.end is None:
            return cls(start_lo, start_hi)
        end_lo, end_hi = _span(statement.end)
        return cls(start_lo, start_hi, max(end_lo, start_lo), max(end_hi, start_lo))

    def held(self, when: np.ndarray) -> np.ndarray:
        """P(the value held at each date) under uniform dating within each imprecise bound."""
        started = _ramp(when, self.start_lo, self.start_hi)
        if math.isinf(self.end_lo):
            return started
        # ended before t: E < t; a day-precise end date still holds on its last day
        return started * (1.0 - _ramp(when, self.end_lo, self.end_hi))


def _ramp(when: np.ndarray, low: float, high: float) -> np.ndarray:
    """P(X <= t) for X uniform on [low, high); a step at ``low`` when the span is a single day."""
    if high - low <= 1.0 / 365.0:
        return (when >= low).astype(np.float64)
    return np.clip((when - low) / (high - low), 0.0, 1.0)


def _norm(label: str) -> str:
    return " ".join(label.split()).casefold()


def entity_periods(answers: FactAnswers, label: str) -> tuple[Period, ...]:
    """Every validity period of the value named ``label`` (statements sharing the label are one value)."""
    key = _norm(label)
    return tuple(Period.of(s) for s in answers.counted().statements if _norm(s.label) == key)


def value_count(answers: FactAnswers) -> int:
    """K: the number of distinct dated values of a fact."""
    return len({_norm(s.label) for s in answers.counted().statements})


@dataclass(frozen=True)
class DatedAnswer:
    """One matched answer: the fact, the value it names and when that value held."""

    fact_id: str
    category: str
    label: str
    periods: tuple[Period, ...]
    values: int
    """K of the fact: how many distinct values it has had."""
    current: bool = False
    """The answer gives the fact's current value (judged up-to-date at the snapshot)."""

    def held(self, when: np.ndarray) -> np.ndarray:
        if not self.periods:
            return np.zeros_like(when)
        return np.asarray(np.max(np.stack([p.held(when) for p in self.periods]), axis=0), dtype=np.float64)


def dated_answer(
    fact_id: str, category: str, label: str, answers: FactAnswers, *, current: bool = False
) -> DatedAnswer | None:
    """The dated form of an answer naming ``label`` (``current``: judged up-to-date); None when the snapshot
    has no dated period for it."""
    periods = entity_periods(answers, label)
    if not periods:
        return None
    return DatedAnswer(fact_id, category, _norm(label), periods, max(1, value_count(answers)), current)


# --- the knowledge date ----------------------------------------------------------------------------


@dataclass(frozen=True)
class KnowledgeDate:
    """The estimate with its interval (decimal years), the naive floor beside it, and the curve."""

    estimate: Estimate
    """Maximum-likelihood date; n = facts with at least one dated answer."""
    naive: Estimate
    """Argmax of the as-of curve (the floor to beat), same bootstrap."""
    answers: int
    """Dated answers used."""
    informative_facts: int
    """Facts whose likelihood is not flat over the grid (their answer's value changed within it)."""
    noise: float
    """eps at the maximum."""
    grid: np.ndarray
    curve: np.ndarray
    """As-of curve: share of dated answers whose value held at each grid date."""


@dataclass(frozen=True)
class _Facts:
    """Per-fact arrays over the grid, the unit the bootstrap resamples."""

    loglik: np.ndarray
    """(facts, noise values, grid): mean log-likelihood of the fact's answers."""
    held_sum: np.ndarray
    """(facts, grid): sum over the fact's answers of P(value held)."""
    answers: np.ndarray
    """(facts,): dated answers per fact."""


def _by_fact(answers: Sequence[DatedAnswer]) -> dict[str, list[DatedAnswer]]:
    grouped: dict[str, list[DatedAnswer]] = {}
    for answer in answers:
        grouped.setdefault(answer.fact_id, []).append(answer)
    return grouped


def _fact_arrays(answers: Sequence[DatedAnswer], grid: np.ndarray, noise: Sequence[float]) -> _Facts:
    eps = np.asarray(noise, dtype=np.float64)[:, None]
    loglik, held_sum, counts = [], [], []
    for items in _by_fact(answers).values():
        held = np.stack([a.held(grid) for a in items])  # (answers, grid)
        k = np.asarray([a.values for a in items], dtype=np.float64)[:, None, None]
        lik = (1.0 - eps)[None] * held[:, None, :] + eps[None] / k  # (answers, noise, grid)
        loglik.append(np.log(lik).mean(axis=0))
        held_sum.append(held.sum(axis=0))
        counts.append(len(items))
    return _Facts(np.stack(loglik), np.stack(held_sum), np.asarray(counts, dtype=np.float64))


def plateau_centre(values: np.ndarray) -> int:
    """Index of the maximum; when several grid dates tie, the middle one of them (by position)."""
    top = float(np.max(values))
    tied = np.flatnonzero(values >= top - _TIE * max(1.0, abs(top)))
    return int(tied[(len(tied) - 1) // 2])


def _mle_index(loglik: np.ndarray) -> int:
    """``loglik`` (noise, grid) summed over facts: the grid index of the profile maximum."""
    return plateau_centre(loglik.max(axis=0))


def _weights(idx: np.ndarray, facts: int) -> np.ndarray:
    """Resample rows of fact indices -> (rows, facts) multiplicities."""
    weights = np.zeros((idx.shape[0], facts), dtype=np.float64)
    np.add.at(weights, (np.arange(idx.shape[0])[:, None], idx), 1.0)
    return weights


def fact_logliks(
    answers: Sequence[DatedAnswer], grid: np.ndarray, noise: Sequence[float] = NOISE_GRID
) -> dict[str, np.ndarray]:
    """Per fact, its (noise, grid) mean log likelihood: the components whose sum over facts the knowledge date
    maximises (a paired bootstrap over facts sums them per resample, :func:`date_of_sums`)."""
    if not answers:
        return {}
    return dict(zip(_by_fact(answers), _fact_arrays(answers, grid, noise).loglik, strict=True))


def date_of_sums(sums: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """(rows, noise x grid) summed log likelihoods -> the knowledge date of each row (decimal years)."""
    shaped = sums.reshape(sums.shape[0], -1, len(grid))
    return np.asarray([grid[_mle_index(row)] for row in shaped], dtype=np.float64)


def estimate_knowledge_date(
    answers: Sequence[DatedAnswer],
    grid: np.ndarray,
    *,
    noise: Sequence[float] = NOISE_GRID,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> KnowledgeDate | None:
    """The knowledge date of ``answers`` on ``grid``; None without a dated answer."""
    if not answers:
        return None
    facts = _fact_arrays(answers, grid, noise)
    n = len(facts.answers)
    total = facts.loglik.sum(axis=0)
    best = _mle_index(total)
    curve = facts.held_sum.sum(axis=0) / facts.answers.sum()
    naive_best = plateau_centre(curve)

    def mle(idx: np.ndarray) -> np.ndarray:
        w = _weights(idx, n)
        sums = np.tensordot(w, facts.loglik, axes=(1, 0))  # (rows, noise, grid)
        return np.asarray([grid[_mle_index(s)] for s in sums])

    def naive(idx: np.ndarray) -> np.ndarray:
        w = _weights(idx, n)
        shares = (w @ facts.held_sum) / (w @ facts.answers)[:, None]
        return np.asarray([grid[plateau_centre(s)] for s in shares])

    flat = np.ptp(facts.loglik.max(axis=1), axis=1) > 1e-12
    return KnowledgeDate(
        estimate=bootstrap(n, mle, float(grid[best]), level=level, resamples=resamples, seed=seed),
        naive=bootstrap(n, naive, float(grid[naive_best]), level=level, resamples=resamples, seed=seed),
        answers=int(facts.answers.sum()),
        informative_facts=int(flat.sum()),
        noise=float(noise[int(np.argmax(total[:, best]))]),
        grid=grid,
        curve=curve,
    )


# --- the knowledge horizon ------------------------------------------------------------------------


def known_change(answer: DatedAnswer) -> float:
    """The latest change an answer shows the model knows: when its value began. A value that held more than
    once (a holder voted back in) shows only its first start: the answer may come from that first term."""
    return min(period.start_lo for period in answer.periods)


def knowledge_horizon(
    answers: Sequence[DatedAnswer], *, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED
) -> Estimate | None:
    """The latest change among the facts whose current value the model gives: the upper envelope of what it
    knows (decimal years), with a percentile bootstrap over those facts; n = those facts. None: no current
    value is given.

    A fact counts once, with the latest change any of its current answers shows (:func:`known_change`); a
    start known only to the month or year counts from its first day."""
    latest: dict[str, float] = {}
    for answer in answers:
        if answer.current:
            latest[answer.fact_id] = max(latest.get(answer.fact_id, -math.inf), known_change(answer))
    if not latest:
        return None
    changes = np.asarray(list(latest.values()), dtype=np.float64)

    def envelope(idx: np.ndarray) -> np.ndarray:
        return np.asarray(changes[idx].max(axis=1), dtype=np.float64)

    return bootstrap(len(changes), envelope, float(changes.max()), level=level, resamples=resamples, seed=seed)


# --- staleness ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Staleness:
    """What the model knew at its knowledge date, followed forward to the snapshot."""

    grid: np.ndarray
    """Dates from the knowledge date to the snapshot."""
    share: np.ndarray
    """Share of the known values still holding (without a break) at each date."""
    low: np.ndarray
    high: np.ndarray
    n: int
    """Known values followed: distinct (fact, value) pairs that held at the knowledge date."""
    half_life: Estimate
    """Years until half have changed, from a constant-hazard fit (value None when none changed)."""
    changed: int
    """How many of them changed before the snapshot."""


def known_values(answers: Iterable[DatedAnswer], at: float) -> list[DatedAnswer]:
    """Distinct (fact, value) pairs among ``answers`` that held at ``at`` (probability at least 1/2)."""
    chosen: dict[tuple[str, str], DatedAnswer] = {}
    when = np.asarray([at])
    for answer in answers:
        if answer.held(when)[0] >= 0.5:
            chosen.setdefault((answer.fact_id, answer.label), answer)
    return list(chosen.values())


def _still_holding(values: Sequence[DatedAnswer], grid: np.ndarray) -> np.ndarray:
    """(values, grid): P(held) capped by its running minimum, so a value that lapsed and came back
    (a second term) counts as changed."""
    return np.minimum.accumulate(np.stack([v.held(grid) for v in values]), axis=1)


def staleness(
    answers: Sequence[DatedAnswer],
    at: float,
    horizon: float,
    *,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Staleness | None:
    """Survival of the values known at ``at`` until ``horizon`` (the snapshot date); None when none is known."""
    values = known_values(answers, at)
    if not values:
        return None
    grid = monthly_grid(at, horizon)
    grid[0] = at
    holding = _still_holding(values, grid)
    share = holding.mean(axis=0)
    rng = np.random.default_rng(seed)
    if len(values) > 1:
        idx = rng.integers(0, len(values), size=(resamples, len(values)))
        tail = (1.0 - level) / 2.0
        low, high = np.quantile(holding[idx].mean(axis=1), [tail, 1.0 - tail], axis=0)
        ends = [
            share_bounds(float(s), float(a), float(b), len(values), level=level)
            for s, a, b in zip(share, low, high, strict=True)
        ]
        low, high = np.asarray([a for a, _ in ends]), np.asarray([b for _, b in ends])
    else:
        low = high = np.full_like(share, np.nan)
    changed, exposure = _events(holding, grid, horizon)

    half = _half_life(changed, exposure, level=level, resamples=resamples, seed=seed)
    return Staleness(grid, share, low, high, len(values), half, int(changed.sum()))


def _half_life(changed: np.ndarray, exposure: np.ndarray, *, level: float, resamples: int, seed: int) -> Estimate:
    """ln 2 / rate, the rate being changes per year followed (the exponential model's maximum likelihood).

    Percentile bootstrap over the values. A resample without a change has an unbounded half-life;
    when more than the upper tail of resamples has none, the upper bound is unbounded (None).
    """
    n = len(changed)
    point = math.log(2.0) * float(exposure.sum()) / float(changed.sum()) if changed.sum() else None
    if point is None or n < 2:
        return Estimate(value=point, n=n, ci_low=None, ci_high=None, method="bootstrap", level=level)
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    events, time = changed[idx].sum(axis=1), exposure[idx].sum(axis=1)
    halves = np.where(events > 0, math.log(2.0) * time / np.maximum(events, 1.0), np.inf)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(halves, [tail, 1.0 - tail], method="inverted_cdf")
    return Estimate(
        value=point,
        n=n,
        ci_low=float(low) if np.isfinite(low) else None,
        ci_high=float(high) if np.isfinite(high) else None,
        method="bootstrap",
        level=level,
    )


def _events(holding: np.ndarray, grid: np.ndarray, horizon: float) -> tuple[np.ndarray, np.ndarray]:
    """Per value: did it change before ``horizon`` (1/0), and the years it was followed."""
    lapsed = holding < 0.5
    changed = lapsed.any(axis=1)
    first = np.where(changed, lapsed.argmax(axis=1), len(grid) - 1)
    end = np.where(changed, grid[first], horizon)
    return np.asarray(changed, dtype=np.float64), np.asarray(np.maximum(end - grid[0], 0.0), dtype=np.float64)


def share_stale(curve: Staleness, when: float) -> tuple[float, float, float, bool]:
    """(share stale, low, high, extrapolated) at ``when``: read off the curve inside it, and beyond
    the snapshot extended with the constant-hazard fit (the half-life)."""
    grid = curve.grid
    if when <= grid[-1]:
        i = int(np.clip(np.searchsorted(grid, when, side="right") - 1, 0, len(grid) - 1))
        return 1.0 - float(curve.share[i]), 1.0 - float(curve.high[i]), 1.0 - float(curve.low[i]), False
    half = curve.half_life.value
    decay = 0.0 if half is None else math.log(2.0) / half

    def at(share: float) -> float:
        return 1.0 - share * math.exp(-decay * (when - grid[-1]))

    return at(float(curve.share[-1])), at(float(curve.high[-1])), at(float(curve.low[-1])), True


def group_by_category(answers: Sequence[DatedAnswer]) -> Mapping[str, list[DatedAnswer]]:
    grouped: dict[str, list[DatedAnswer]] = {}
    for answer in answers:
        grouped.setdefault(answer.category, []).append(answer)
    return dict(sorted(grouped.items()))
