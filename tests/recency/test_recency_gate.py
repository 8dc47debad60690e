from __future__ import annotations

import pytest

from chronoprobe.errors import ConfigError
from chronoprobe.recency.gate import decide_retrieval, recency_gate
from chronoprobe.recency.taxonomy import RecencyClass as R


def test_fast_changing_answer_means_retrieve() -> None:
    labels = [R.A_DAY] * 3 + [R.A_WEEK, R.NEVER]
    decision = decide_retrieval(labels, threshold=R.A_YEAR)
    assert decision.retrieve and decision.predicted_class is R.A_DAY
    assert decision.share_within_threshold == pytest.approx(0.8)
    assert decision.distribution == pytest.approx({"A-Day": 0.6, "A-Week": 0.2, "Never": 0.2})
    assert "3/5 samples" in decision.reason and "retrieve" in decision.reason


def test_stable_answer_means_no_retrieval() -> None:
    decision = decide_retrieval([R.NEVER, R.MANY_YEARS, R.NEVER, None], threshold=R.A_YEAR)
    assert not decision.retrieve and decision.predicted_class is R.NEVER and decision.unparseable == 1
    assert decision.share_within_threshold == 0.0


def test_the_threshold_class_itself_counts_as_within() -> None:
    assert decide_retrieval([R.A_YEAR], threshold=R.A_YEAR).retrieve
    assert not decide_retrieval([R.A_FEW_YEARS], threshold=R.A_YEAR).retrieve
    # a split vote: 2 of 4 within -> share 0.5 >= min_share 0.5
    split = [R.A_MONTH, R.NEVER, R.A_DAY, R.NEVER]
    assert decide_retrieval(split, R.A_YEAR).retrieve
    assert not decide_retrieval(split, R.A_YEAR, min_share=0.75).retrieve


def test_nothing_parsed_means_retrieve_to_be_safe() -> None:
    decision = decide_retrieval([None, None], threshold=R.A_YEAR)
    assert decision.retrieve and decision.predicted_class is None and "to be safe" in decision.reason


def test_bad_threshold_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="threshold"):
        recency_gate("Who is the CEO?", model=None, threshold="soonish")  # type: ignore[arg-type]
