"""The rules that keep or refuse a retrieved history, on hand-built histories."""

from __future__ import annotations

import datetime as dt

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
