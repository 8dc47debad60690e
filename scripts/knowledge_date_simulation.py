"""How well do the knowledge-date estimators recover a known date? A simulation on the shipped snapshot.

    python scripts/knowledge_date_simulation.py [--trials 20] [--seed 0]
    python scripts/knowledge_date_simulation.py --cutoff [--trials 100] [--seed 0]

A synthetic model is frozen at a true date T. For each fact it answers (with probability
``coverage``), it names the value that held at T with probability 1 - eps; otherwise it names
a noisy value: an older one (the value that held a uniform 0-8 years before T: recall of stale
text, the common failure) or any value of the fact at random. The maximum-likelihood estimate and
the naive argmax of the as-of curve are compared by their mean absolute error in years.
Prints one Markdown table (docs/outdated.md, "How it compares with the naive argmax").

With ``--cutoff``: the same synthetic models, each fact asked three times (its paraphrases), and the
knowledge cutoff (``metrics/knowledge_cutoff.py``) fitted to them; the table gives how often its 95%
interval covers the true date T, its median width and error, and how often it was refused (too few
dated facts). Nothing is fitted to these figures: the interval's threshold comes from theory
(docs/outdated.md, "The knowledge cutoff").
"""

from __future__ import annotations

import argparse
import datetime as dt

import numpy as np

from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.knowledge.types import FactAnswers, Statement
from chronoprobe.metrics.knowledge_cutoff import change_facts, estimate_knowledge_cutoff
from chronoprobe.metrics.knowledge_date import (
    DatedAnswer,
    dated_answer,
    decimal_year,
    estimate_knowledge_date,
    monthly_grid,
)


def _date(value: float) -> dt.date:
    year = int(value)
    return dt.date(year, 1, 1) + dt.timedelta(days=int((value - year) * 365))


def simulate(true: float, eps: float, noise: str, coverage: float, rng: np.random.Generator) -> list[DatedAnswer]:
    snapshot = load_snapshot(None)
    answers = []
    for fact_id, history in snapshot.answers.items():
        statements = history.counted().statements
        if not statements or rng.random() > coverage:
            continue
        when = true
        if rng.random() < eps:
            if noise == "random":
                label = statements[int(rng.integers(len(statements)))].label
                answers.append(dated_answer(fact_id, fact_id.split("/")[0], label, history))
                continue
            when = true - rng.uniform(0.0, 8.0)
        held = [s for s in statements if s.valid_at(_date(when))]
        if held:
            answers.append(dated_answer(fact_id, fact_id.split("/")[0], held[0].label, history))
    return [a for a in answers if a is not None]


PARAPHRASES = 3
END = decimal_year(dt.date(2023, 12, 18))
"""The shipped snapshot's day: the latest cutoff an interval may reach."""


def _noisy_label(statements: list[Statement], true: float, eps: float, noise: str, rng: np.random.Generator) -> str | None:
    """The value one answer names: what held at ``true``, or with probability eps an older or a random one."""
    when = true
    if rng.random() < eps:
        if noise == "random":
            return str(statements[int(rng.integers(len(statements)))].label)
        when = true - rng.uniform(0.0, 8.0)
    held = [s for s in statements if s.valid_at(_date(when))]
    return str(held[0].label) if held else None


def simulate_asked(
    true: float, eps: float, noise: str, coverage: float, rng: np.random.Generator, gold: dict[str, FactAnswers]
) -> list[DatedAnswer]:
    """A model frozen at ``true`` answering each fact it answers three times, every answer marked current or not."""
    answers = []
    for fact_id, history in gold.items():
        statements = list(history.counted().statements)
        if not statements or rng.random() > coverage:
            continue
        current = {s.label for s in history.counted().current()}
        for _ in range(PARAPHRASES):
            label = _noisy_label(statements, true, eps, noise, rng)
            answer = None if label is None else dated_answer(fact_id, "all", label, history, current=label in current)
            if answer is not None:
                answers.append(answer)
    return answers


def cutoff_coverage(trials: int, seed: int) -> None:
    """Coverage of the knowledge cutoff's 95% interval, per kind of model."""
    rng = np.random.default_rng(seed)
    gold = dict(load_snapshot(None).answers)
    print(
        "| noise | eps | coverage | trials | refused | 95% interval covers T | median width (years) | median error (years) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    covered_all = fitted_all = 0
    for noise in ("older", "random"):
        for eps in (0.1, 0.3, 0.5):
            for coverage in (0.15, 0.8):
                covered, widths, errors, refused = 0, [], [], 0
                for _ in range(trials):
                    true = rng.uniform(2010.0, 2023.0)
                    facts = change_facts(simulate_asked(true, eps, noise, coverage, rng, gold), gold)
                    found = estimate_knowledge_cutoff(facts, start=2000.0, end=END)
                    if found is None:
                        refused += 1
                        continue
                    low, high, value = found.estimate.ci_low, found.estimate.ci_high, found.estimate.value
                    assert low is not None and high is not None and value is not None
                    covered += low <= true <= high
                    widths.append(high - low)
                    errors.append(abs(value - true))
                fitted = trials - refused
                covered_all, fitted_all = covered_all + covered, fitted_all + fitted
                print(
                    f"| {noise} | {eps} | {coverage} | {trials} | {refused} | {100 * covered / fitted:.1f}% |"
                    f" {np.median(widths):.2f} | {np.median(errors):.2f} |"
                )
    print(
        f"\nAll kinds together: {covered_all} of {fitted_all} intervals cover T ({100 * covered_all / fitted_all:.1f}%)."
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cutoff", action="store_true", help="the knowledge cutoff's interval coverage")
    args = parser.parse_args()
    if args.cutoff:
        cutoff_coverage(args.trials or 100, args.seed)
        return
    args.trials = args.trials or 20
    rng = np.random.default_rng(args.seed)
    grid = monthly_grid(2000.0, decimal_year(dt.date(2023, 12, 18)))
    print(
        "| noise | eps | coverage | MLE mean abs. error (years) | naive mean abs. error (years) | MLE closer / tied / naive closer |"
    )
    print("|---|---|---|---|---|---|")
    for noise in ("older", "random"):
        for eps in (0.1, 0.3, 0.5):
            for coverage in (0.15, 0.8):
                mle, naive, closer, worse = [], [], 0, 0
                for _ in range(args.trials):
                    true = rng.uniform(2010.0, 2023.0)
                    result = estimate_knowledge_date(simulate(true, eps, noise, coverage, rng), grid, resamples=1)
                    if result is None or result.estimate.value is None or result.naive.value is None:
                        continue
                    mle.append(abs(result.estimate.value - true))
                    naive.append(abs(result.naive.value - true))
                    closer += mle[-1] < naive[-1] - 1e-9
                    worse += naive[-1] < mle[-1] - 1e-9
                print(
                    f"| {noise} | {eps} | {coverage} | {np.mean(mle):.2f} | {np.mean(naive):.2f} | {closer} / {len(mle) - closer - worse} / {worse} |"
                )


if __name__ == "__main__":
    main()
