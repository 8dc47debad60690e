from __future__ import annotations

import pytest

from chronoprobe.datasets.recency_taxonomy import RecencyClass as R
from chronoprobe.datasets.recency_taxonomy import Stationarity
from chronoprobe.lenses.recency.parse import (
    parse_contexts,
    parse_recency_answer,
    parse_stationarity_vote,
)


@pytest.mark.parametrize(
    "answer, last, label, method",
    [
        ("A-Few-Days", False, R.A_FEW_DAYS, "whole"),
        ("few days\nbecause the recall ends soon", False, R.A_FEW_DAYS, "whole"),
        ('{"RecencyLabel": "A-Day", "Justification": "weather changes daily"}', False, R.A_DAY, "marker"),
        # the original CoT format: a JSON list with a trailing comma (invalid JSON)
        ('[{"RecencyLabel": "Never", "Reasoning" : "a date of birth, fixed",}]', True, R.NEVER, "marker"),
        (
            "Step 1: prices move within a day or a few days.\nFinal label: **A-Few-Weeks**",
            True,
            R.A_FEW_WEEKS,
            "marker",
        ),
        ("The answer will probably change within a few weeks.", False, R.A_FEW_WEEKS, "free-text"),
        # CoT without a marker: the last mention wins
        ("It is not hourly. Elections come every few years, so a few years.", True, R.A_FEW_YEARS, "free-text"),
        # non-CoT: first mention; a new example started by the model is cut off
        ("A-Month\n\nQuestion: Who won?\nLabel: Never", False, R.A_MONTH, "whole"),
        ("I think a month.\nQuestion: Who won?\nLabel: Never", False, R.A_MONTH, "free-text"),
        ("RecencyLabel: A-Few-Months", False, R.A_FEW_MONTHS, "marker"),
    ],
)
def test_parse_answers(answer: str, last: bool, label: R, method: str) -> None:
    parsed = parse_recency_answer(answer, last=last)
    assert parsed.label is label
    assert parsed.method == method


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "The head coach of the team is John Smith.",
        # an echo of the label list is not a choice
        "An-Hour, A-Few-Hours, A-Day, A-Few-Days, A-Week",
        "An-Hour, A-Few-Hours, A-Day,",
        "An-Hour, A-Few-Hours",
        # a copy of the labelling prompt's definition list
        "An-Hour: the answer changes within an hour\nA-Few-Hours: the answer changes within a few hours",
    ],
)
def test_unparseable_answers(answer: str) -> None:
    parsed = parse_recency_answer(answer)
    assert parsed.label is None and parsed.method == "none" and not parsed.ok


def test_a_single_definition_line_is_an_answer() -> None:
    assert parse_recency_answer("A-Few-Weeks: the answer changes within a few weeks.").label is R.A_FEW_WEEKS


def test_a_choice_after_an_echoed_list_is_found() -> None:
    text = "Labels: An-Hour, A-Few-Hours, A-Day, A-Few-Days. My choice: A-Week"
    assert parse_recency_answer(text).label is R.A_WEEK


def test_stationarity_votes() -> None:
    assert (
        parse_stationarity_vote('[{"Stationary": "NO", "Justification": "one-off storm"}]')
        is Stationarity.NON_STATIONARY
    )
    assert parse_stationarity_vote('{"stationary": "YES"}') is Stationarity.STATIONARY
    assert parse_stationarity_vote("YES. The cycle is yearly.") is Stationarity.STATIONARY
    assert parse_stationarity_vote("The question is non-stationary.") is Stationarity.NON_STATIONARY
    assert parse_stationarity_vote("I cannot tell.") is None


def test_contexts_from_json_list_or_free_text() -> None:
    original = '[{"Context": "As the storm nears the city, travellers ask."}, {"Context": "During the final match, fans ask."}]'
    assert parse_contexts(original) == [
        "As the storm nears the city, travellers ask.",
        "During the final match, fans ask.",
    ]
    assert parse_contexts("Context: During the opening week of the festival, visitors wonder.\n\nExtra text") == [
        "During the opening week of the festival, visitors wonder."
    ]
    assert parse_contexts("Sure!") == []
