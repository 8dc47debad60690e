"""DyKnow's original file format: answer strings and the whole grc_generated.json."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from chronoprobe.errors import DataError
from chronoprobe.knowledge.grc import load_grc, parse_answer
from chronoprobe.knowledge.types import WikidataDate

GRC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "dyknow" / "grc_generated.json"


def test_parse_answer_full() -> None:
    s = parse_answer(
        "Portugal national association football team |S: +2003-00-00T00:00:00Z |P: +2021-06-27T00:00:00Z", "w"
    )
    assert s.label == "Portugal national association football team"
    assert s.start == WikidataDate(year=2003)
    assert s.start.earliest() == dt.date(2003, 1, 1)
    assert s.point_in_time == WikidataDate(year=2021, month=6, day=27)
    assert s.end is None  # the original read P585 as an end date
    assert s.is_current


def test_parse_answer_month_precision_and_end() -> None:
    s = parse_answer("Al-Nassr |S: +2023-01-00T00:00:00Z", "w")
    assert s.start == WikidataDate(year=2023, month=1)
    s = parse_answer("Massimo D'Alema |S: +1999-12-22T00:00:00Z |E: +2000-04-25T00:00:00Z", "w")
    assert (s.label, str(s.start), str(s.end)) == ("Massimo D'Alema", "1999-12-22", "2000-04-25")
    s = parse_answer("George V |E: +1936-01-20T00:00:00Z", "w")
    assert s.start is None and not s.is_current
    s = parse_answer("Peter Carington, 6th Baron Carrington", "w")
    assert s.label == "Peter Carington, 6th Baron Carrington" and s.start is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (" |S: +2003-00-00T00:00:00Z", "bad answer string"),
        ("X |S: +2003-00-00T00:00:00Z |S: +2004-00-00T00:00:00Z", "given twice"),
        ("X |S: yesterday", "bad date 'yesterday'"),
        ("X |Q: +2003-00-00T00:00:00Z", "bad answer string 'X \\|Q: "),
        (42, "not a string"),
    ],
)
def test_parse_answer_errors(text: Any, message: str) -> None:
    with pytest.raises(DataError, match=f"^cat/subj answer 3: .*{message}"):
        parse_answer(text, "cat/subj answer 3")


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "grc.json"
    path.write_text(json.dumps(data))
    return path


QUESTIONS = {
    "generic": "The CEO of Acme is",
    "contextualized": "Acme's CEO is",
    "rephrased_1": "Acme is run by",
    "rephrased_2": "The boss of Acme is",
}


def test_small_file(tmp_path: Path) -> None:
    data = {
        "companies_byRevenue": {"Acme": {"questions": QUESTIONS, "answers": ["Ann |S: +2020-01-01T00:00:00Z"]}},
        "organizations": {"UN": {"general secretary": {"questions": QUESTIONS, "answers": []}}},
    }
    facts, answers = load_grc(write(tmp_path, data))
    assert [f.fact_id for f in facts] == ["companies_byRevenue/Acme", "organizations/UN/general secretary"]
    assert facts[0].templates == ("Acme's CEO is", "Acme is run by", "The boss of Acme is")
    assert facts[0].generic == "The CEO of Acme is"
    assert (facts[0].property, facts[1].property) == ("P169", "P3975")
    assert answers["companies_byRevenue/Acme"].statements[0].label == "Ann"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"planets": {}}, "planets: unknown category"),
        (
            {"companies_byRevenue": {"Acme": {"questions": QUESTIONS, "answers": ["Ann |S: 2020"]}}},
            "companies_byRevenue/Acme answer 0: bad date '2020'",
        ),
        (
            {"companies_byRevenue": {"Acme": {"questions": QUESTIONS, "answers": "Ann"}}},
            "companies_byRevenue/Acme: 'answers' must be a list",
        ),
        (
            {"companies_byRevenue": {"Acme": {"questions": {"generic": "x"}, "answers": []}}},
            "companies_byRevenue/Acme: no paraphrase questions",
        ),
        (
            {"companies_byRevenue": {"Acme": {"questions": {**QUESTIONS, "odd": "x"}, "answers": []}}},
            "companies_byRevenue/Acme: unknown question keys",
        ),
        (
            {"countries_byGDP": {"Utopia": {"Mayor": {"questions": QUESTIONS, "answers": []}}}},
            "countries_byGDP/Utopia/Mayor: cannot tell head of state",
        ),
        (
            {"organizations": {"UN": {"janitor": {"questions": QUESTIONS, "answers": []}}}},
            "organizations/UN/janitor: no Wikidata property known",
        ),
        ({"organizations": {"UN": []}}, "organizations/UN: expected questions/answers or attributes"),
    ],
)
def test_malformed_file(tmp_path: Path, data: Any, message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(DataError, match=f"^{path}: {message}"):
        load_grc(path)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read DyKnow JSON"):
        load_grc(tmp_path / "none.json")


def test_original_file() -> None:
    if not GRC.is_file():
        pytest.skip("shared DyKnow data not present")
    facts, answers = load_grc(GRC)
    assert len(facts) == 130 and len(answers) == 130
    assert sum(len(a.statements) for a in answers.values()) == 1151
    assert sum(len(a.counted().statements) for a in answers.values()) == 1147
    assert all(len(f.templates) == 3 for f in facts)
    by_id = {f.fact_id: f for f in facts}
    italy = by_id["countries_byGDP/Italy/President of Italy"]
    assert italy.templates[0] == "The President of Italy is" and italy.property == "P35"
    assert by_id["countries_byGDP/Iran/President of Iran"].property == "P6"
    assert by_id["organizations/North Atlantic Treaty Organization/headquarters location"].property == "P159"
    un = by_id["organizations/United Nations/general secretary"]
    assert un.templates[0].startswith("The position of general secretary")  # rephrased_1..3, generic excluded
    assert [s.label for s in answers[italy.fact_id].current()] == ["Sergio Mattarella"]
    ronaldo = answers["athletes_byPayment/Cristiano Ronaldo"]
    assert sum(s.point_in_time is not None for s in ronaldo.statements) == 1
    uk = answers["countries_byGDP/United Kingdom/monarch of the United Kingdom"]
    assert any(s.label == "George V" and s.start is None for s in uk.statements)
