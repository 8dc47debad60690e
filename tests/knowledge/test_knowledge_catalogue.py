"""The shipped DyKnow fact catalogue and the catalogue loader's error messages."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from chronoprobe.errors import DataError
from chronoprobe.knowledge.catalogue import load_catalogue, shipped_catalogue
from chronoprobe.knowledge.grc import load_grc

GRC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "dyknow" / "grc_generated.json"


def test_shipped_catalogue() -> None:
    facts = load_catalogue()
    assert len(facts) == 130
    assert len({f.fact_id for f in facts}) == 130
    assert Counter(f.category for f in facts) == {
        "countries_byGDP": 78,
        "athletes_byPayment": 28,
        "companies_byRevenue": 18,
        "organizations": 6,
    }
    assert Counter(f.property for f in facts) == {
        "P35": 46,
        "P6": 32,
        "P54": 28,
        "P169": 18,
        "P3975": 2,
        "P488": 2,
        "P1037": 1,
        "P159": 1,
    }
    assert all(f.subject_qid and len(f.templates) == 3 for f in facts)
    by_id = {f.fact_id: f for f in facts}
    italy = by_id["countries_byGDP/Italy/President of Italy"]
    assert (italy.subject_qid, italy.property) == ("Q38", "P35")
    assert by_id["companies_byRevenue/Walmart"].subject_qid == "Q483551"
    assert by_id["athletes_byPayment/Cristiano Ronaldo"].subject_qid == "Q11571"
    # one QID per subject
    qids: dict[str, set[str]] = {}
    for f in facts:
        qids.setdefault(f.subject, set()).add(f.subject_qid or "")
    assert all(len(v) == 1 for v in qids.values())
    assert len({next(iter(v)) for v in qids.values()}) == len(qids)


def test_templates_are_our_own_wording() -> None:
    if not GRC.is_file():
        pytest.skip("shared DyKnow data not present")
    grc_facts, _ = load_grc(GRC)
    originals = {t.lower() for f in grc_facts for t in (*f.templates, f.generic or "")}
    for fact in load_catalogue():
        assert not {t.lower() for t in fact.templates} & originals, fact.fact_id
    generic = {f.fact_id: f.generic for f in grc_facts}
    assert {f.fact_id: f.generic for f in load_catalogue()} == generic


def write(tmp_path: Path, rows: list[Any]) -> Path:
    path = tmp_path / "cat.json"
    path.write_text(json.dumps({"name": "t", "facts": rows}))
    return path


def good_row(**changes: Any) -> dict[str, Any]:
    row = {
        "fact_id": "companies_byRevenue/Walmart",
        "category": "companies_byRevenue",
        "subject": "Walmart",
        "subject_qid": "Q483551",
        "attribute": None,
        "property": "P169",
        "templates": ["The CEO of Walmart is"],
    }
    row.update(changes)
    return row


def test_custom_catalogue_loads(tmp_path: Path) -> None:
    facts = load_catalogue(write(tmp_path, [good_row(qid_confidence="low")]))
    assert facts[0].qid_confidence == "low" and facts[0].templates == ("The CEO of Walmart is",)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (good_row(subject_qid="W1"), "row 1 \\(companies_byRevenue/Walmart\\): subject_qid: Value error, invalid QID"),
        (good_row(subject_qid=None), "row 1 .*missing subject_qid"),
        (good_row(property="169"), "row 1 .*property: Value error, invalid property id"),
        (good_row(templates=[]), "row 1 .*templates"),
        (good_row(templates=["  "]), "row 1 .*empty template"),
        (good_row(category="planets"), "row 1 .*category"),
        (good_row(fact_id="Walmart"), "row 1 .*should be 'companies_byRevenue/Walmart'"),
        (good_row(colour="red"), "row 1 .*unknown field\\(s\\) colour"),
        (good_row(qid_confidence="maybe"), "row 1 .*qid_confidence"),
        ("not an object", "row 1: expected an object"),
    ],
)
def test_malformed_rows(tmp_path: Path, row: Any, message: str) -> None:
    first = good_row(fact_id="companies_byRevenue/Apple", subject="Apple", subject_qid="Q312")
    path = write(tmp_path, [first, row])
    with pytest.raises(DataError, match=f"^{path} {message}"):
        load_catalogue(path)


def test_duplicate_fact_id(tmp_path: Path) -> None:
    path = write(tmp_path, [good_row(), good_row()])
    with pytest.raises(DataError, match=f"^{path} row 1 .*duplicate fact_id"):
        load_catalogue(path)


def test_unreadable_catalogue(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read catalogue"):
        load_catalogue(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    with pytest.raises(DataError, match="not valid JSON"):
        load_catalogue(bad)
    bad.write_text(json.dumps({"facts": []}))
    with pytest.raises(DataError, match="non-empty 'facts' list"):
        load_catalogue(bad)


def test_shipped_path_is_inside_the_package() -> None:
    assert shipped_catalogue().is_file()
    assert shipped_catalogue().parts[-3:] == ("data", "catalogue", "dyknow_facts.json")
