"""The rules that keep or refuse a retrieved history, on hand-built histories."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pytest

from chronoprobe.knowledge.catalogue_query import RawStatement, RawSubject
from chronoprobe.knowledge.catalogue_rules import judge_subject
from chronoprobe.knowledge.sparql import Times
from chronoprobe.knowledge.templates import PropertyTemplate
from chronoprobe.knowledge.types import WikidataDate

TEMPLATE = PropertyTemplate.model_validate(
    {
        "name": "coaches",
        "category": "coaches",
        "description": "head coaches",
        "property": "P286",
        "paraphrases": ["The coach of {subject} is", "{subject} is coached by", "Right now {subject} has the coach"],
    }
)
ANY_CURRENT = TEMPLATE.model_copy(update={"validity": TEMPLATE.validity.model_copy(update={"current": "any"})})


def date(text: str) -> WikidataDate:
    return WikidataDate.parse(text)


def held(
    sid: str, value: str | None, label: str | None, start: str | None, end: str | None = None, **extra
) -> RawStatement:
    return RawStatement(
        statement_id=sid,
        rank=extra.pop("rank", "NormalRank"),
        value=value,
        labels={"en": label} if label else {},
        aliases=extra.pop("aliases", {}),
        times=Times(starts=[date(start)] if start else [], ends=[date(end)] if end else []),
    )


def subject(*statements: RawStatement, label: str | None = "Club") -> RawSubject:
    return RawSubject("Q1", {"en": label} if label else {}, {s.statement_id: s for s in statements})


OLD = held("s1", "Q10", "Ann", "2010-01-01", "2015-06-30")
NEW = held("s2", "Q11", "Bob", "2015-07-01")


def test_a_history_that_changed_is_kept_oldest_first() -> None:
    judged = judge_subject(subject(NEW, OLD), TEMPLATE)
    assert judged.reason is None and judged.label == "Club"
    assert [(s.label, s.qid, str(s.start), str(s.end) if s.end else None) for s in judged.statements] == [
        ("Ann", "Q10", "2010-01-01", "2015-06-30"),
        ("Bob", "Q11", "2015-07-01", None),
    ]


@pytest.mark.parametrize(
    ("statements", "label", "reason"),
    [
        ((OLD, NEW), None, "unlabelled_subject"),
        ((OLD, held("s2", "Q11", None, "2015-07-01")), "Club", "unlabelled_value"),
        ((OLD, held("s2", "Q11", "ann", "2015-07-01")), "Club", "colliding_labels"),
        ((held("s1", "Q10", "Ann", "2016-01-01", "2012-01-01"), NEW), "Club", "contradictory"),
        ((OLD, NEW, held("s3", "Q12", "Cy", "2020-01-01")), "Club", "contradictory"),
        ((OLD, NEW, held("s3", "Q12", "Cy", None)), "Club", "undated"),
        ((OLD, held("s2", "Q11", "Bob", "2015-07-01", "2019-01-01")), "Club", "no_current"),
        ((NEW,), "Club", "unchanged"),
        ((NEW, held("s3", "Q11", "Bob", "2001-01-01", "2003-01-01")), "Club", "unchanged"),
    ],
    ids=[
        "no subject label",
        "no value label",
        "one label two values",
        "ends before it starts",
        "two current values",
        "undated value may hold",
        "nothing current",
        "one value",
        "one value twice",
    ],
)
def test_refusals(statements: tuple[RawStatement, ...], label: str | None, reason: str) -> None:
    assert judge_subject(subject(*statements, label=label), TEMPLATE).reason == reason


def test_two_current_values_are_allowed_where_the_template_says_so() -> None:
    both = subject(OLD, NEW, held("s3", "Q12", "National team", "2014-01-01"))
    assert judge_subject(both, ANY_CURRENT).reason is None


def test_undated_statements_of_dated_or_ended_values_are_dropped_and_counted() -> None:
    repeat = held("s3", "Q10", "Ann", None)  # Ann is dated elsewhere
    ended = held("s4", "Q13", "Dee", None, "2009-12-31")  # no start, but over
    unknown = held("s5", None, None, "1999-01-01")  # "unknown value"
    judged = judge_subject(subject(OLD, NEW, repeat, ended, unknown), TEMPLATE)
    assert judged.reason is None
    assert [s.statement_id for s in judged.statements] == ["s1", "s2"]
    assert judged.dropped == {"undated": 2, "unknown_value": 1}


def test_as_of_reads_the_history_as_it_stood() -> None:
    later = held("s3", "Q12", "Cy", "2021-01-01")
    ended = held("s2", "Q11", "Bob", "2015-07-01", "2020-12-31")
    judged = judge_subject(subject(OLD, ended, later), TEMPLATE, as_of=dt.date(2018, 1, 1))
    assert judged.reason is None and judged.dropped == {"after_as_of": 1}
    assert [(s.label, s.end) for s in judged.statements] == [("Ann", date("2015-06-30")), ("Bob", None)]
    assert judge_subject(subject(OLD, ended, later), TEMPLATE, as_of=dt.date(2012, 1, 1)).reason == "unchanged"


def test_aliases_in_the_languages_asked_minus_those_of_another_value() -> None:
    bob = held("s2", "Q11", "Bob", "2015-07-01", aliases={"en": ["Bobby", "ann", "Bob"], "de": ["Robert"]})
    judged = judge_subject(subject(OLD, bob), TEMPLATE)
    assert judged.statements[1].aliases == ("Bobby",)
    assert judged.dropped == {"alias_of_another_value": 1}


def test_the_first_language_asked_gives_the_label() -> None:
    german_first = TEMPLATE.model_copy(
        update={"values": TEMPLATE.values.model_copy(update={"languages": ("de", "en")})}
    )
    old = held("s1", "Q10", "Ann", "2010-01-01", "2015-06-30")
    old.labels["de"] = "Anna"
    judged = judge_subject(subject(old, NEW), german_first)
    assert [s.label for s in judged.statements] == ["Anna", "Bob"]


def shaped(
    sid: str,
    value: str,
    label: str,
    starts: Sequence[str | WikidataDate] = (),
    ends: Sequence[str | WikidataDate] = (),
    **extra: Any,
) -> RawStatement:
    """A statement with its qualifiers as they come back: several dates each, an "unknown value" end."""
    return RawStatement(
        statement_id=sid,
        rank=extra.pop("rank", "NormalRank"),
        value=value,
        labels={"en": label},
        times=Times(
            starts=[d if isinstance(d, WikidataDate) else date(d) for d in starts],
            ends=[d if isinstance(d, WikidataDate) else date(d) for d in ends],
            points=[date(p) for p in extra.pop("points", ())],
            end_unknown=extra.pop("end_unknown", False),
        ),
    )


BUILT = dt.date(2024, 5, 1)
ANN = shaped("s1", "Q10", "Ann", ["2010-01-01"], ["2015-06-30"])
BOB = shaped("s2", "Q11", "Bob", ["2015-07-01"])


@pytest.mark.parametrize(
    ("statements", "reason", "current"),
    [
        ((shaped("s1", "Q10", "Ann", ["2010-01-01"], end_unknown=True), BOB), None, ["Bob"]),
        ((ANN, shaped("s2", "Q11", "Bob", ["2015-07-01"], ["2027-01-01"])), None, ["Bob"]),
        ((ANN, shaped("s2", "Q11", "Bob", ["2015-07-01"], ["2024-01-01"])), "no_current", []),
        ((shaped("s1", "Q10", "Ann", ["2012-01-01", "2010-01-01"], ["2014-01-01", "2015-06-30"]), BOB), None, ["Bob"]),
        ((shaped("s1", "Q10", "Ann", ["2010-01-01"], ["2015-06-30"], end_unknown=True), BOB), None, ["Bob"]),
        ((shaped("s1", "Q10", "Ann", ["2010-01-01"], rank="PreferredRank"), BOB), "contradictory", ["Ann", "Bob"]),
        ((shaped("s1", "Q10", "Ann", ["2010-01-01"], ["2015-06-30"], rank="PreferredRank"), BOB), None, ["Bob"]),
        ((shaped("s1", "Q10", "Ann", points=["2012-00-00T00:00:00Z"]), BOB), "undated", ["Bob"]),
        (
            (shaped("s1", "Q10", "Ann", ["-0043-03-15T00:00:00Z"], ["-0100-00-00T00:00:00Z"]), BOB),
            "contradictory",
            ["Bob"],
        ),
        (
            (shaped("s1", "Q10", "Ann", ["1995-00-00T00:00:00Z"], [WikidataDate(year=1990, precision=8)]), BOB),
            None,
            ["Bob"],
        ),
        (
            (
                ANN,
                shaped("s2", "Q11", "Bob", ["2015-07-01"], ["2025-01-20"]),
                shaped("s3", "Q12", "Cy", ["2025-01-20"]),
            ),
            None,
            ["Bob", "Cy"],
        ),
    ],
    ids=[
        "end unknown value: ended",
        "end after the build day: current",
        "end before the build day: ended",
        "several starts and ends: the widest span",
        "an end date beside an unknown one: the date",
        "preferred beside normal, both open: two current",
        "preferred but ended: past",
        "point in time without a start: may still hold",
        "before year 1: an end before the start is seen",
        "an end of the 1990s after a start of 1995",
        "a scheduled end and an announced successor: one holds",
    ],
)
def test_qualifier_shapes_as_wikidata_means_them(
    statements: tuple[RawStatement, ...], reason: str | None, current: list[str]
) -> None:
    judged = judge_subject(subject(*statements), TEMPLATE, retrieved=BUILT)
    assert judged.reason == reason, judged.detail
    assert sorted(s.label for s in judged.statements if s.current_on(BUILT)) == current


def test_an_unknown_end_stays_an_end_as_of_an_earlier_day_and_a_widest_span_is_kept() -> None:
    ann = shaped("s1", "Q10", "Ann", ["2012-01-01", "2010-01-01"], ["2014-01-01", "2015-06-30"])
    (kept, _bob) = judge_subject(subject(ann, BOB), TEMPLATE, retrieved=BUILT).statements
    assert (str(kept.start), str(kept.end)) == ("2010-01-01", "2015-06-30")
    unknown = shaped("s1", "Q10", "Ann", ["2010-01-01"], end_unknown=True)
    then = judge_subject(subject(unknown, BOB), TEMPLATE, as_of=dt.date(2012, 1, 1))
    assert then.reason == "no_current" and then.statements[0].end_unknown  # it cannot be placed after that day


def test_a_value_that_is_no_item_is_dropped_and_counted_apart_from_unknown_values() -> None:
    literal = RawStatement(statement_id="s3", rank="NormalRank", value=None, not_an_item=True)
    judged = judge_subject(subject(ANN, BOB, literal, held("s4", None, None, "1999-01-01")), TEMPLATE)
    assert judged.reason is None and judged.dropped == {"not_an_item": 1, "unknown_value": 1}
