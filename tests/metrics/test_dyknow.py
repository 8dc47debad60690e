"""Hand-computed cases for every rule of the DyKnow classifier and every aggregate."""

from __future__ import annotations

import datetime as dt

import pytest

from chronoprobe.knowledge.types import FactAnswers, Statement, WikidataDate
from chronoprobe.metrics.dyknow import (
    Classification,
    Verdict,
    ambiguous_not_edited,
    average_counts,
    classify_response,
    facts_to_edit,
    find_whole_word,
    head_noun,
    inconsistent_facts,
    is_fact_to_edit,
    not_up_to_date,
    soft_constraint,
    start_years,
    strip_affixes,
    strip_prompt,
)


def st(
    label: str,
    start: str | None = None,
    end: str | None = None,
    *,
    pit: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Statement:
    return Statement(
        label=label,
        start=WikidataDate.parse(start) if start else None,
        end=WikidataDate.parse(end) if end else None,
        point_in_time=WikidataDate.parse(pit) if pit else None,
        aliases=aliases,
    )


def gold(*statements: Statement) -> FactAnswers:
    return FactAnswers(fact_id="test/fact", statements=statements)


RONALDO = gold(
    st("Manchester United F.C.", "2003-00-00", "2009-00-00"),
    st("Real Madrid CF", "2009-00-00", "2018-00-00"),
    st("Juventus FC", "2018-00-00", "2021-08-26"),
    st("Manchester United F.C.", "2021-08-27", "2022-11-22"),
    st("Al-Nassr", "2023-01-00"),
)


# --- whole-word search and escaping --------------------------------------------------------------


def test_whole_word_case_insensitive_and_not_inside_words() -> None:
    assert find_whole_word("He met lionel messi.", "Lionel Messi") == 7
    assert find_whole_word("Lionel is here", "Li") is None
    assert find_whole_word("Mr. Li said", "Li") == 4


def test_labels_are_regex_escaped() -> None:
    # Unescaped, "Canal+" would match "Canall" and "A.S. Roma" would match "AxSx Roma".
    assert find_whole_word("He joined Canall today", "Canal+") is None
    assert find_whole_word("He joined Canal+ today", "Canal+") == 10
    assert find_whole_word("AxSx Roma", "A.S. Roma") is None
    assert find_whole_word("He plays for A.S. Roma.", "A.S. Roma") == 13
    # A label ending in punctuation still matches as a whole word (no \b after the dot).
    assert find_whole_word("Liverpool F.C. won", "Liverpool F.C.") == 0
    assert find_whole_word("He is Neymar Jr.", "Neymar Jr.") == 6
    # Parentheses in a label are literal, not a group.
    assert find_whole_word("the (new) club", "(new) club") == 4


# --- surface forms ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "stripped"),
    [
        ("Manchester City F.C.", "Manchester City"),
        ("Real Madrid CF", "Real Madrid"),
        ("Al-Hilal SFC", "Al-Hilal"),
        ("K.R.C. Genk", "Genk"),
        ("Scuderia Ferrari", "Ferrari"),
        ("Aston Martin F1 Team", "Aston Martin"),
        ("Red Bull Racing", "Red Bull"),
        ("Davidson Wildcats men's basketball", "Davidson Wildcats"),
        ("City of Brussels", "Brussels"),
        ("Apple Inc.", "Apple"),
        ("England national association football team", "England national"),
        ("Sporting CP", "Sporting CP"),
        ("Fumio Kishida", "Fumio Kishida"),
    ],
)
def test_strip_affixes(label: str, stripped: str) -> None:
    assert strip_affixes(label) == stripped


@pytest.mark.parametrize(
    ("label", "head"),
    [
        ("Fumio Kishida", "Kishida"),
        ("Luiz Inácio Lula da Silva", "Silva"),
        ("Los Angeles Lakers", "Lakers"),
        ("Charles III of the United Kingdom", "Charles III"),
        ("Carl XVI Gustaf", "Carl XVI Gustaf"),
        ("Philippe of Belgium", "Philippe"),
        ("Abdel Fattah el-Sisi", "Sisi"),
        ("William Clay Ford Jr.", "Ford"),
        ("Peter Carington, 6th Baron Carrington", "Carington"),
        ("England national", None),
        ("Naruhito", None),
    ],
)
def test_head_noun(label: str, head: str | None) -> None:
    assert head_noun(label) == head


def test_strip_prompt_only_at_the_start() -> None:
    prompt = "The current team of X is"
    assert strip_prompt("The current team of X is Juventus", prompt) == " Juventus"
    assert strip_prompt("<s> [INST] q [/INST] Juventus", "[INST] q [/INST]") == " Juventus"
    # A prompt repeated later is kept: the answer before the repeat must not be lost.
    text = "Juventus.\nThe current team of X is"
    assert strip_prompt(text, prompt) == text
    assert strip_prompt("Juventus", None) == "Juventus"


# --- the rules on a response --------------------------------------------------------------------


def test_exact_match_up_to_date_and_outdated() -> None:
    up = classify_response(
        "The current team of Cristiano Ronaldo is Al-Nassr.", RONALDO, prompt="The current team of Cristiano Ronaldo is"
    )
    assert (up.verdict, up.rule, up.matched_labels) == ("up-to-date", "exact", ("Al-Nassr",))
    assert up.searched == " Al-Nassr."
    assert up.position == 1
    old = classify_response("He plays for juventus fc now", RONALDO)
    assert (old.verdict, old.rule, old.matched_labels, old.start_years) == (
        "outdated",
        "exact",
        ("Juventus FC",),
        (2018,),
    )


def test_suffix_stripped_rule() -> None:
    c = classify_response("Ronaldo plays for Real Madrid in Spain", RONALDO)
    assert (c.verdict, c.rule, c.matched_text) == ("outdated", "suffix-stripped", ("Real Madrid",))


def test_head_noun_rule_is_case_sensitive() -> None:
    answers = gold(st("Portland Trail Blazers", "2012-01-01", "2023-09-27"), st("Milwaukee Bucks", "2023-09-27"))
    c = classify_response("a good one. The Blazers won", answers)
    assert (c.verdict, c.rule, c.matched_text) == ("outdated", "head-noun", ("Blazers",))
    city = gold(st("Manchester City F.C.", "2022-01-01"))
    assert classify_response("the club is based in the city of Oslo", city).verdict == "irrelevant"
    assert classify_response("he moved to City last year", city).verdict == "up-to-date"


def test_no_match_is_irrelevant() -> None:
    c = classify_response("the best in the world", RONALDO)
    assert (c.verdict, c.matched, c.rule, c.position) == ("irrelevant", (), None, None)


def test_earliest_position_wins() -> None:
    c = classify_response("He left Real Madrid CF for Juventus FC and then Al-Nassr", RONALDO)
    assert (c.verdict, c.matched_labels) == ("outdated", ("Real Madrid CF",))
    c = classify_response("Al-Nassr, after Juventus FC", RONALDO)
    assert c.verdict == "up-to-date"


def test_an_earlier_weak_match_beats_a_later_exact_one() -> None:
    # Per-entity cascade: Real Madrid is found (stripped) before Juventus FC (exact).
    c = classify_response("Real Madrid, then Juventus FC", RONALDO)
    assert c.matched_labels == ("Real Madrid CF",)


def test_same_position_distinct_entities_is_ambiguous() -> None:
    ford = gold(
        st("Henry Ford", "1906-01-01", "1919-01-01"),
        st("William Clay Ford Jr.", "2001-10-01", "2006-09-01"),
        st("Jim Farley", "2020-10-01"),
    )
    c = classify_response("the CEO is Mr. Ford.", ford)
    assert c.verdict == "ambiguous"
    assert set(c.matched_labels) == {"Henry Ford", "William Clay Ford Jr."}
    assert c.rule == "head-noun"


def test_subject_mentions_are_ignored_by_weak_rules() -> None:
    ford = gold(
        st("Henry Ford", "1906-01-01", "1919-01-01"),
        st("William Clay Ford Jr.", "2001-10-01", "2006-09-01"),
        st("Jim Farley", "2020-10-01"),
    )
    text = " The current CEO of Ford Motor Company is Jim Farley."
    assert classify_response(text, ford).verdict == "ambiguous"
    c = classify_response(text, ford, subject="Ford Motor Company")
    assert (c.verdict, c.matched_labels, c.rule) == ("up-to-date", ("Jim Farley",), "exact")
    # An exact label containing the subject still matches on the unmasked text.
    uk = gold(
        st("Elizabeth II of the United Kingdom", "1952-02-06", "2022-09-08"),
        st("Charles III of the United Kingdom", "2022-09-08"),
    )
    c = classify_response("It is Charles III of the United Kingdom.", uk, subject="United Kingdom")
    assert (c.verdict, c.rule) == ("up-to-date", "exact")


def test_ties_prefer_the_stronger_rule_then_the_longer_match() -> None:
    # "Madrid" is an exact label of one entity and the head noun of another.
    answers = gold(st("Madrid", "2000-01-01", "2001-01-01"), st("Atletico Madrid", "2001-01-01"))
    c = classify_response("He plays in Madrid", answers)
    assert (c.verdict, c.matched_labels, c.rule) == ("outdated", ("Madrid",), "exact")
    answers = gold(st("Real Madrid", "2000-01-01", "2001-01-01"), st("Real Madrid Castilla", "2001-01-01"))
    c = classify_response("Real Madrid Castilla", answers)
    assert (c.verdict, c.matched_labels) == ("up-to-date", ("Real Madrid Castilla",))


def test_one_label_with_several_periods_is_one_entity() -> None:
    c = classify_response("Manchester United", RONALDO)
    assert (c.verdict, c.matched_labels, c.start_years) == ("outdated", ("Manchester United F.C.",), (2021,))
    putin = gold(
        st("Vladimir Putin", "2000-05-07", "2008-05-07"),
        st("Dmitry Medvedev", "2008-05-07", "2012-05-07"),
        st("Vladimir Putin", "2012-05-07"),
    )
    c = classify_response("Vladimir Putin", putin)
    assert (c.verdict, c.start_years) == ("up-to-date", (2012,))
    c = classify_response("Vladimir Putin", putin, as_of=dt.date(2010, 1, 1))
    assert (c.verdict, c.start_years) == ("outdated", (2000,))


def test_as_of() -> None:
    when = dt.date(2020, 1, 1)
    assert classify_response("Juventus FC", RONALDO, as_of=when).verdict == "up-to-date"
    assert classify_response("Real Madrid CF", RONALDO, as_of=when).verdict == "outdated"
    # Al-Nassr only became true in 2023: not an answer anyone could give in 2020.
    assert classify_response("Al-Nassr", RONALDO, as_of=when).verdict == "irrelevant"
    assert classify_response("Al-Nassr", RONALDO).verdict == "up-to-date"


def test_point_in_time_is_not_an_end_date() -> None:
    # The original read |P: as an end date and called this team outdated.
    answers = gold(
        st("Portugal national association football team", "2003-00-00", pit="2021-06-27"), st("Al-Nassr", "2023-01-00")
    )
    c = classify_response("Portugal national association football team", answers)
    assert c.verdict == "up-to-date"


def test_aliases_switch() -> None:
    answers = gold(
        st("Manchester United F.C.", "2021-08-27", "2022-11-22", aliases=("Man Utd",)), st("Al-Nassr", "2023-01-00")
    )
    assert classify_response("He is at Man Utd", answers).verdict == "irrelevant"
    c = classify_response("He is at Man Utd", answers, use_aliases=True)
    assert (c.verdict, c.rule, c.matched_text) == ("outdated", "alias", ("Man Utd",))


# --- aggregates ---------------------------------------------------------------------------------

VERDICTS = {
    "a": ["irrelevant", "outdated", "up-to-date"],
    "b": ["irrelevant", "outdated", "outdated"],
    "c": ["irrelevant", "irrelevant", "irrelevant"],
    "d": ["ambiguous", "irrelevant", "irrelevant"],
}


def test_soft_constraint() -> None:
    assert soft_constraint(VERDICTS) == {"a": "up-to-date", "b": "outdated", "c": "irrelevant", "d": "ambiguous"}  # type: ignore[arg-type]


def test_average_counts_divides_by_facts_times_three() -> None:
    shares = average_counts(VERDICTS)  # type: ignore[arg-type]
    assert shares == pytest.approx(
        {"up-to-date": 1 / 12, "outdated": 3 / 12, "irrelevant": 7 / 12, "ambiguous": 1 / 12}
    )


def test_facts_to_edit() -> None:
    assert facts_to_edit(VERDICTS) == ["b"]  # type: ignore[arg-type]


def test_facts_to_edit_is_dyknows_rule_with_ambiguous_answers_left_out() -> None:
    """DyKnow stops on an ambiguous answer until it is fixed by hand: such a fact is not one to edit, but counted."""
    verdicts: dict[str, list[Verdict]] = {
        "outdated": ["outdated", "irrelevant", "irrelevant"],
        "ambiguous-and-outdated": ["outdated", "ambiguous", "irrelevant"],
        "ambiguous-only": ["ambiguous", "irrelevant", "irrelevant"],
        "irrelevant": ["irrelevant"] * 3,
        "known": ["outdated", "up-to-date", "ambiguous"],
    }
    assert facts_to_edit(verdicts) == ["outdated"]
    assert ambiguous_not_edited(verdicts) == ["ambiguous-and-outdated", "ambiguous-only"]
    assert not_up_to_date(verdicts) == ["outdated", "ambiguous-and-outdated", "ambiguous-only", "irrelevant"]
    assert [f for f in verdicts if is_fact_to_edit(verdicts[f])] == ["outdated"]


def _c(verdict: str, *labels_and_years: tuple[str, int]) -> Classification:
    return Classification(
        verdict=verdict, matched=tuple(st(label, f"{year}-01-01") for label, year in labels_and_years)
    )  # type: ignore[arg-type]


def test_inconsistent_facts() -> None:
    per_fact = {
        "mixed": [_c("irrelevant"), _c("outdated", ("A", 2000)), _c("outdated", ("A", 2000))],
        "different-past": [_c("outdated", ("A", 2000)), _c("outdated", ("B", 2005)), _c("outdated", ("A", 2000))],
        "same-past": [_c("outdated", ("A", 2000))] * 3,
        "all-current": [_c("up-to-date", ("C", 2010))] * 3,
        "all-irrelevant": [_c("irrelevant")] * 3,
        "ambiguous-and-irrelevant": [_c("ambiguous", ("A", 2000), ("B", 2005)), _c("irrelevant"), _c("irrelevant")],
    }
    assert inconsistent_facts(per_fact) == ["mixed", "different-past", "ambiguous-and-irrelevant"]


def test_start_years_only_for_single_matches_with_a_start() -> None:
    cs = [
        _c("up-to-date", ("C", 2010)),
        _c("outdated", ("A", 1999)),
        _c("irrelevant"),
        _c("ambiguous", ("A", 2000), ("B", 2005)),
        Classification(verdict="outdated", matched=(st("George V", None, "1936-01-20"),)),
    ]
    assert start_years(cs) == [2010, 1999]
