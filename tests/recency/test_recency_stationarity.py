"""Each of the four consistency rules of RecencyQA section 4.2.2, and the vote that feeds them."""

from __future__ import annotations

import pytest

from chronoprobe.datasets.recency_taxonomy import Stationarity
from chronoprobe.lenses.recency.stationarity import (
    apply_rules,
    decide,
    preliminary_label,
    rule_1,
    rule_2,
    rule_3,
    rule_4,
)

S, NS = Stationarity.STATIONARY, Stationarity.NON_STATIONARY


def test_rule_1_single_class_and_stationary_vote_keeps_stationary() -> None:
    assert rule_1(1, S) is S
    assert rule_1(1, NS) is None and rule_1(2, S) is None
    assert apply_rules(1, S) == (1, S)


def test_rule_2_several_classes_and_non_stationary_vote_keeps_non_stationary() -> None:
    assert rule_2(3, NS) is NS
    assert rule_2(1, NS) is None and rule_2(3, S) is None
    assert apply_rules(2, NS) == (2, NS)


def test_rule_3_several_classes_override_a_stationary_vote() -> None:
    assert rule_3(2, S) is NS
    assert rule_3(1, S) is None and rule_3(2, NS) is None
    assert apply_rules(4, S) == (3, NS)


def test_rule_4_single_class_with_non_stationary_vote_is_discarded() -> None:
    assert rule_4(1, NS) == "discard"
    assert rule_4(2, NS) is None and rule_4(1, S) is None
    assert apply_rules(1, NS) == (4, "discard")
    decision = decide([NS, NS, S], distinct_classes=1)
    assert decision.discarded and decision.rule == 4 and decision.final is None


def test_exactly_one_rule_applies_to_every_case() -> None:
    for distinct in (1, 2, 5):
        for vote in (S, NS):
            applying = [r for r in (rule_1, rule_2, rule_3, rule_4) if r(distinct, vote) is not None]
            assert len(applying) == 1
    with pytest.raises(ValueError):
        apply_rules(0, S)


def test_preliminary_label_is_the_majority_of_valid_votes() -> None:
    assert preliminary_label([S, NS, S], 2) == (S, "vote")
    assert preliminary_label([NS, None, NS], 1) == (NS, "vote")
    assert preliminary_label([S], 3) == (S, "vote")
    # a tie or no valid vote follows the distribution instead of discarding on a coin flip
    assert preliminary_label([S, NS], 1) == (S, "tie-follows-distribution")
    assert preliminary_label([None], 2) == (NS, "tie-follows-distribution")


def test_decide_records_votes_and_rule() -> None:
    decision = decide([S, S, NS], distinct_classes=3)
    assert decision.preliminary is S and decision.rule == 3 and decision.final is NS
    assert decision.votes == ["Stationary", "Stationary", "Non-Stationary"]
