"""Does the paired interval cover the true difference, and is it narrower than two separate intervals?

    python scripts/paired_coverage_simulation.py [--draws 2000] [--facts 130] [--seed 0]

Two models answer the same facts. Model A is right on a fact with probability p_a, model B with p_b, and
their two outcomes on a fact are correlated (phi, the correlation of two 0/1 outcomes): a fact one model
knows, the other is more likely to know. Each draw samples the paired 2x2 table of ``--facts`` facts
(multinomial over the four cells), then computes:

- the paired interval chronoprobe prints for a rate (Newcombe's hybrid score interval for paired
  proportions, metrics/paired.py), and whether it covers the true difference p_b - p_a;
- the interval two separate runs would give (Newcombe's interval for two independent proportions, from
  each run's Wilson interval, metrics/uncertainty.py), its width beside the paired one's;
- for a mean over facts that come in clusters (three paraphrases a fact, the paired bootstrap over facts),
  whether its interval covers the true difference of the two means.

Prints the Markdown table of docs/statistics.md ("How well the intervals cover").
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np

from chronoprobe.metrics.paired import Discordance, newcombe_paired, paired_bootstrap
from chronoprobe.metrics.uncertainty import newcombe, wilson

CORRELATIONS = (0.0, 0.3, 0.5, 0.7)
P_A, P_B = 0.40, 0.48
"""A 40% and a 48% model: an 8-point difference, what 130 facts decide only when paired."""


@dataclass(frozen=True)
class Coverage:
    correlation: float
    covered: float
    """Share of draws whose paired interval holds the true difference (rates, exact pairs)."""
    paired_width: float
    """Mean width of the paired interval, in points."""
    unpaired_width: float
    """Mean width of the interval two separate runs give, in points."""
    never_wider: bool
    """In every draw whose two models' outcomes correlate positively (both x neither >= A only x B only), the paired
    interval was no wider than the unpaired one."""
    positive: float
    """Share of draws whose outcomes correlate positively."""
    decided: float
    """Share of draws where the paired interval excludes 0 (the power at this size)."""
    bootstrap_covered: float
    """Share of draws whose paired-bootstrap interval over clustered facts holds the true difference of means."""


def cells(p_a: float, p_b: float, phi: float) -> np.ndarray:
    """The paired table's cell probabilities (both, A only, B only, neither) for marginals p_a, p_b and correlation phi."""
    both = p_a * p_b + phi * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    probabilities = np.array([both, p_a - both, p_b - both, 1 - p_a - p_b + both])
    if (probabilities < 0).any():
        raise ValueError(f"no joint distribution has marginals {p_a}, {p_b} and correlation {phi}")
    return probabilities


def _clustered_means(rng: np.random.Generator, facts: int, phi: float, resamples: int) -> bool:
    """One draw of three paraphrases per fact, each a 0/1 outcome whose fact-level share is correlated between
    models: does the paired bootstrap over facts cover the true difference of the means?"""
    shared = rng.random(facts)
    a_fact = np.clip(P_A + 0.3 * (shared - 0.5), 0, 1)
    b_fact = np.clip(P_B + 0.3 * (np.where(rng.random(facts) < phi, shared, rng.random(facts)) - 0.5), 0, 1)
    a = (rng.random((facts, 3)) < a_fact[:, None]).astype(float).ravel()
    b = (rng.random((facts, 3)) < b_fact[:, None]).astype(float).ravel()
    units = np.repeat(np.arange(facts), 3)
    found = paired_bootstrap(a, b, units, resamples=resamples, seed=int(rng.integers(0, 2**31)))
    assert found.ci_low is not None and found.ci_high is not None
    return found.ci_low <= P_B - P_A <= found.ci_high


def coverage(phi: float, *, draws: int, facts: int, seed: int, resamples: int = 500) -> Coverage:
    rng = np.random.default_rng(seed)
    truth = P_B - P_A
    tables = rng.multinomial(facts, cells(P_A, P_B, phi), size=draws)
    covered = decided = 0
    paired_widths, unpaired_widths = [], []
    never_wider, positive = True, 0
    for both, a_only, b_only, neither in tables:
        table = Discordance(int(both), int(a_only), int(b_only), int(neither))
        interval = newcombe_paired(table)
        assert interval is not None
        _, low, high = interval
        covered += low <= truth <= high
        decided += low > 0 or high < 0
        separate = newcombe(wilson(table.both + table.second_only, facts), wilson(table.both + table.first_only, facts))
        assert separate.ci_low is not None and separate.ci_high is not None
        paired_widths.append(high - low)
        unpaired_widths.append(separate.ci_high - separate.ci_low)
        if both * neither >= a_only * b_only:
            positive += 1
            never_wider &= high - low <= separate.ci_high - separate.ci_low + 1e-12
    bootstrap = sum(_clustered_means(rng, facts, phi, resamples) for _ in range(draws))
    return Coverage(
        correlation=phi,
        covered=covered / draws,
        paired_width=100 * float(np.mean(paired_widths)),
        unpaired_width=100 * float(np.mean(unpaired_widths)),
        never_wider=never_wider,
        positive=positive / draws,
        decided=decided / draws,
        bootstrap_covered=bootstrap / draws,
    )


def table(results: list[Coverage], draws: int, facts: int) -> str:
    lines = [
        "| correlation | paired interval covers | its mean width | two separate intervals' width "
        "| paired never wider where the outcomes correlate positively | decides (power) "
        "| paired bootstrap covers (3 paraphrases a fact) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.correlation:.1f} | {r.covered:.1%} | {r.paired_width:.1f} points | {r.unpaired_width:.1f} points "
            f"| {'yes' if r.never_wider else 'no'} ({r.positive:.0%} of draws) | {r.decided:.0%} "
            f"| {r.bootstrap_covered:.1%} |"
        )
    lines.append("")
    lines.append(
        f"{draws:,} draws of {facts} facts each; A right with probability {P_A:.0%}, B with {P_B:.0%} "
        f"(a {100 * (P_B - P_A):.0f}-point difference)."
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--facts", type=int, default=130)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    results = [coverage(phi, draws=args.draws, facts=args.facts, seed=args.seed) for phi in CORRELATIONS]
    print(table(results, args.draws, args.facts))


if __name__ == "__main__":
    main()
