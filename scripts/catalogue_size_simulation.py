"""What a bigger catalogue buys: 95% interval width against catalogue size, for the soft constraint and the knowledge date.

    python scripts/catalogue_size_simulation.py [--trials 10] [--seed 0] [--resamples 200]

Soft constraint: a model is up to date on each of n facts with probability p; the share it gets
has a Wilson interval (metrics/uncertainty.py), whose mean width is reported in points. Two models
p and p + 5 points apart are told apart when a two-sided two-proportion z-test at the 5% level
rejects; its power is reported, and the n that gives 80% power.

Knowledge date: n facts are drawn from the shipped DyKnow snapshot's histories (with replacement,
each shifted back by 0-36 months so that the copies differ but keep DyKnow's tenure lengths). A
model frozen at a true date T (uniform 2010-2022) answers a share ``coverage`` of the facts with a
dated value: the value that held at T with probability 1 - eps, otherwise a wrong one, as in
scripts/knowledge_date_simulation.py. Two profiles: **small** (like the embedded SmolLM2, which
names a dated value for about 10% of DyKnow's facts: coverage 10%, eps 0.5, the wrong value any
of the fact's values) and **capable** (about 80% of the facts, eps 0.3, the wrong value an older
one, 0-8 years before T). The estimator's percentile-bootstrap interval width (median over trials)
and its mean absolute error are reported, in years; 0.00 means every resample chose the same month
of the monthly grid. Prints the Markdown tables of docs/knowledge.md ("What more facts buy").
"""

from __future__ import annotations

import argparse
import datetime as dt
import math

import numpy as np

from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.knowledge.types import FactAnswers, Statement, WikidataDate
from chronoprobe.metrics.knowledge_date import (
    DatedAnswer,
    dated_answer,
    decimal_year,
    estimate_knowledge_date,
    monthly_grid,
)
from chronoprobe.metrics.uncertainty import wilson

SIZES = (130, 250, 500, 1000, 2000, 5000)
SHARES = (0.05, 0.25, 0.5)
GAP = 0.05
Z_TWO_SIDED, Z_POWER = 1.959964, 0.841621  # 5% two-sided; 80% power
PROFILES = {"small": (0.1, 0.5, "random"), "capable": (0.8, 0.3, "older")}
"""name -> (coverage, eps, what a wrong answer names)."""
HORIZON = dt.date(2023, 12, 18)


# --- soft constraint ---------------------------------------------------------------------------------


def wilson_width(n: int, p: float, trials: int, rng: np.random.Generator) -> float:
    """Mean width (points) of the 95% Wilson interval of an up-to-date share p over n facts."""
    widths = []
    for k in rng.binomial(n, p, size=trials):
        estimate = wilson(int(k), n, scale=100.0)
        assert estimate.ci_low is not None and estimate.ci_high is not None
        widths.append(estimate.ci_high - estimate.ci_low)
    return float(np.mean(widths))


def power(n: int, p: float, trials: int, rng: np.random.Generator) -> float:
    """Share of trials in which models at p and p + GAP, n facts each, differ at the 5% level."""
    first = rng.binomial(n, p, size=trials) / n
    second = rng.binomial(n, p + GAP, size=trials) / n
    pooled = (first + second) / 2
    spread = np.sqrt(np.maximum(pooled * (1 - pooled) * 2 / n, 1e-12))
    return float(np.mean(np.abs(second - first) / spread > Z_TWO_SIDED))


def facts_for_power(p: float) -> int:
    """Facts per model for 80% power at the 5% level (normal approximation)."""
    q = p + GAP
    pooled = (p + q) / 2
    top = Z_TWO_SIDED * math.sqrt(2 * pooled * (1 - pooled)) + Z_POWER * math.sqrt(p * (1 - p) + q * (1 - q))
    return math.ceil((top / GAP) ** 2)


# --- knowledge date ----------------------------------------------------------------------------------


def _shift(date: WikidataDate | None, months: int) -> WikidataDate | None:
    if date is None:
        return None
    if date.month is None:
        return WikidataDate(year=date.year + math.floor(months / 12))
    total = date.year * 12 + date.month - 1 + months
    day = min(date.day, 28) if date.day else None
    return WikidataDate(year=total // 12, month=total % 12 + 1, day=day)


def _shifted(history: FactAnswers, fact_id: str, months: int) -> FactAnswers:
    statements = tuple(
        Statement(label=s.label, start=_shift(s.start, months), end=_shift(s.end, months)) for s in history.statements
    )
    return FactAnswers(fact_id=fact_id, statements=statements)


def synthetic_facts(n: int, rng: np.random.Generator) -> list[FactAnswers]:
    base = [a.counted() for a in load_snapshot(None).answers.values() if a.counted().statements]
    picks = rng.integers(len(base), size=n)
    return [_shifted(base[i], f"f{k}", -int(rng.integers(0, 37))) for k, i in enumerate(picks)]


def _on(value: float) -> dt.date:
    year = int(value)
    return dt.date(year, 1, 1) + dt.timedelta(days=int((value - year) * 365))


def frozen_answers(facts: list[FactAnswers], true: float, profile: str, rng: np.random.Generator) -> list[DatedAnswer]:
    coverage, eps, noise = PROFILES[profile]
    answers = []
    for history in facts:
        if rng.random() > coverage:
            continue
        label = None
        if rng.random() < eps and noise == "random":
            label = history.statements[int(rng.integers(len(history.statements)))].label
        else:
            when = true - rng.uniform(0.0, 8.0) if rng.random() < eps else true
            held = [s for s in history.statements if s.valid_at(_on(when))]
            label = held[0].label if held else None
        found = dated_answer(history.fact_id, "all", label, history) if label else None
        if found is not None:
            answers.append(found)
    return answers


def knowledge_date_width(
    n: int, profile: str, trials: int, resamples: int, rng: np.random.Generator
) -> tuple[float, float]:
    """(median 95% interval width, mean absolute error), in years."""
    grid = monthly_grid(2000.0, decimal_year(HORIZON))
    widths, errors = [], []
    for _ in range(trials):
        true = rng.uniform(2010.0, 2022.0)
        result = estimate_knowledge_date(
            frozen_answers(synthetic_facts(n, rng), true, profile, rng), grid, resamples=resamples
        )
        if result is None or result.estimate.value is None:
            continue
        low, high = result.estimate.ci_low, result.estimate.ci_high
        widths.append(math.inf if low is None or high is None else high - low)
        errors.append(abs(result.estimate.value - true))
    return float(np.median(widths)), float(np.mean(errors))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    shares = " / ".join(f"{p:.0%}" for p in SHARES)
    print(
        f"| facts | soft-constraint 95% CI width (points), up to date {shares} | power, 25% vs 30% | power, 50% vs 55% |"
    )
    print("|---|---|---|---|")
    for n in SIZES:
        widths = " / ".join(f"{wilson_width(n, p, args.trials * 10, rng):.1f}" for p in SHARES)
        print(f"| {n} | {widths} | {power(n, 0.25, 2000, rng):.0%} | {power(n, 0.5, 2000, rng):.0%} |")
    print()
    print(
        "Facts per model for 80% power to tell two models 5 points apart: "
        + ", ".join(f"{facts_for_power(p)} at {p:.0%} vs {p + GAP:.0%}" for p in (0.05, 0.25, 0.45))
    )
    print()
    print("| facts | knowledge date 95% CI width (years), small model | its error | capable model | its error |")
    print("|---|---|---|---|---|")
    for n in SIZES:
        small = knowledge_date_width(n, "small", args.trials, args.resamples, rng)
        capable = knowledge_date_width(n, "capable", args.trials, args.resamples, rng)
        print(f"| {n} | {small[0]:.2f} | {small[1]:.2f} | {capable[0]:.2f} | {capable[1]:.2f} |")


if __name__ == "__main__":
    main()
