from __future__ import annotations

import pytest

from chronoprobe.datasets.recency_taxonomy import (
    CLASSES,
    LABELS,
    RecencyClass,
    Stationarity,
    parse_label,
)


def test_twelve_classes_in_paper_order() -> None:
    assert LABELS == (
        "An-Hour",
        "A-Few-Hours",
        "A-Day",
        "A-Few-Days",
        "A-Week",
        "A-Few-Weeks",
        "A-Month",
        "A-Few-Months",
        "A-Year",
        "A-Few-Years",
        "Many-Years",
        "Never",
    )
    assert [c.index for c in CLASSES] == list(range(12))
    assert RecencyClass.A_DAY < RecencyClass.A_WEEK < RecencyClass.NEVER
    assert str(RecencyClass.A_FEW_DAYS) == "A-Few-Days"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a few days", RecencyClass.A_FEW_DAYS),
        ("A-Few-Days", RecencyClass.A_FEW_DAYS),
        ("few days", RecencyClass.A_FEW_DAYS),
        ("  A_FEW_DAYS. ", RecencyClass.A_FEW_DAYS),
        ("AFewDays", RecencyClass.A_FEW_DAYS),
        ("an hour", RecencyClass.AN_HOUR),
        ("An-Hour", RecencyClass.AN_HOUR),
        ("hour", RecencyClass.AN_HOUR),
        ('"Many-Years"', RecencyClass.MANY_YEARS),
        ("many years", RecencyClass.MANY_YEARS),
        ("NEVER", RecencyClass.NEVER),
        ("within a year", RecencyClass.A_YEAR),
        ("a   few — weeks", RecencyClass.A_FEW_WEEKS),
    ],
)
def test_parse_label_is_lenient_about_spelling(text: str, expected: RecencyClass) -> None:
    assert parse_label(text) is expected
    assert RecencyClass.parse(text) is expected


@pytest.mark.parametrize("text", ["", "soon", "a few", "days and weeks", "A-Decade", None])
def test_parse_label_rejects_non_labels(text: str | None) -> None:
    assert parse_label(text) is None


def test_every_label_round_trips() -> None:
    for cls in CLASSES:
        assert parse_label(cls.label) is cls


def test_stationarity_spellings() -> None:
    assert Stationarity.parse("Stationary") is Stationarity.STATIONARY
    assert Stationarity.parse("Non-Stationary") is Stationarity.NON_STATIONARY
    assert Stationarity.parse("non stationary") is Stationarity.NON_STATIONARY
    assert Stationarity.parse("YES") is Stationarity.STATIONARY
    assert Stationarity.parse("no") is Stationarity.NON_STATIONARY
    assert Stationarity.parse("maybe") is None
