"""Stationarity: model votes, then the four consistency rules of RecencyQA (paper section 4.2.2).

Each rule is a pure function of (number of distinct recency classes among the
13 samples, preliminary label). It returns the outcome when it applies and
``None`` otherwise; exactly one rule applies to every input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from chronoprobe.datasets.recency_taxonomy import Stationarity

S, NS = Stationarity.STATIONARY, Stationarity.NON_STATIONARY

Outcome = Stationarity | Literal["discard"]


def rule_1(distinct_classes: int, preliminary: Stationarity) -> Outcome | None:
    """One class across all samples and voted stationary: keep stationary."""
    return S if distinct_classes == 1 and preliminary is S else None


def rule_2(distinct_classes: int, preliminary: Stationarity) -> Outcome | None:
    """Several classes and voted non-stationary: keep non-stationary."""
    return NS if distinct_classes > 1 and preliminary is NS else None


def rule_3(distinct_classes: int, preliminary: Stationarity) -> Outcome | None:
    """Several classes but voted stationary: override to non-stationary (the labels vary)."""
    return NS if distinct_classes > 1 and preliminary is S else None


def rule_4(distinct_classes: int, preliminary: Stationarity) -> Outcome | None:
    """One class but voted non-stationary: inconsistent, discard the question."""
    return "discard" if distinct_classes == 1 and preliminary is NS else None


RULES = (rule_1, rule_2, rule_3, rule_4)


class StationarityDecision(BaseModel):
    preliminary: Stationarity
    preliminary_source: Literal["vote", "tie-follows-distribution"]
    votes: list[str | None]
    rule: int
    final: Stationarity | None
    """None when the question is discarded (rule 4)."""

    @property
    def discarded(self) -> bool:
        return self.final is None


def apply_rules(distinct_classes: int, preliminary: Stationarity) -> tuple[int, Outcome]:
    """(rule number 1-4, outcome) for one question."""
    if distinct_classes < 1:
        raise ValueError("a question needs at least one parsed recency label")
    for number, rule in enumerate(RULES, start=1):
        outcome = rule(distinct_classes, preliminary)
        if outcome is not None:
            return number, outcome
    raise AssertionError("the four rules cover every case")


def preliminary_label(votes: Sequence[Stationarity | None], distinct_classes: int) -> tuple[Stationarity, str]:
    """Majority of the valid votes. A tie (or no valid vote) follows the label distribution
    (one class: stationary, several: non-stationary), so no question is discarded on a coin flip."""
    counts = Counter(v for v in votes if v is not None)
    if counts[S] != counts[NS]:
        return (S if counts[S] > counts[NS] else NS), "vote"
    return (S if distinct_classes == 1 else NS), "tie-follows-distribution"


def decide(votes: Sequence[Stationarity | None], distinct_classes: int) -> StationarityDecision:
    preliminary, source = preliminary_label(votes, distinct_classes)
    rule, outcome = apply_rules(distinct_classes, preliminary)
    return StationarityDecision(
        preliminary=preliminary,
        preliminary_source=source,
        votes=[v.value if v is not None else None for v in votes],
        rule=rule,
        final=None if outcome == "discard" else outcome,
    )
