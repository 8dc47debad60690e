"""How well do the knowledge-date estimators recover a known date? A simulation on the shipped snapshot.

    python scripts/knowledge_date_simulation.py [--trials 20] [--seed 0]

A synthetic model is frozen at a true date T. For each fact it answers (with probability
``coverage``), it names the value that held at T with probability 1 - eps; otherwise it names
a noisy value: an older one (the value that held a uniform 0-8 years before T: recall of stale
text, the common failure) or any value of the fact at random. The maximum-likelihood estimate and
the naive argmax of the as-of curve are compared by their mean absolute error in years.
Prints one Markdown table (docs/outdated.md, "How it compares with the naive argmax").
"""

from __future__ import annotations

import argparse
import datetime as dt

import numpy as np

from chronoprobe.knowledge.snapshot import load_snapshot
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
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
