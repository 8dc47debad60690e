"""Property templates: the shipped set, validation of every identifier, and the query text they give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronoprobe.errors import ConfigError, DataError
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.catalogue_query import (
    parse_selection,
    parse_statements,
    selection_query,
    statement_query,
)
from chronoprobe.knowledge.templates import (
    check_pattern,
    load_template,
    parse_template,
    resolve_templates,
    shipped_templates,
)
from chronoprobe.testing.wdqs import StubWDQS

GOOD = """
name = "club_coaches"
category = "club_coaches"
description = "Head coaches of clubs."
property = "P286"
paraphrases = ["The coach of {subject} is", "{subject} is coached by", "Right now {subject} has the coach"]

[subjects]
classes = ["Q476028"]
min_sitelinks = 10
"""


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_set_covers_dyknow_and_five_new_domains() -> None:
    templates = shipped_templates()
    assert len({t.name for t in templates}) == len(templates) == 15
    dyknow = {(f.category, f.property) for f in load_catalogue()}
    covered = {(t.subjects.include_dyknow, t.property) for t in templates if t.subjects.include_dyknow}
    assert dyknow <= covered
    new_domains = [t for t in templates if t.subjects.include_dyknow is None]
    assert len(new_domains) >= 5
    for template in templates:
        assert template.description and template.stand_in_facts, template.name
        assert template.category == template.name


def test_shipped_paraphrases_are_not_dyknows_questions(shared_data: Path) -> None:
    from chronoprobe.knowledge.grc import load_grc

    grc_facts, _ = load_grc(shared_data / "dyknow" / "grc_generated.json")
    originals = {t.lower() for f in grc_facts for t in (*f.templates, f.generic or "")}
    for template in shipped_templates():
        for fact in grc_facts:
            assert not {t.lower() for t in template.prompts(fact.subject)} & originals, template.name


def test_a_good_template_loads_and_gives_one_selection_and_one_statement_text(tmp_path: Path) -> None:
    template = load_template(write(tmp_path, GOOD))
    assert template.prompts("Aldbury Rovers") == (
        "The coach of Aldbury Rovers is",
        "Aldbury Rovers is coached by",
        "Right now Aldbury Rovers has the coach",
    )
    selection = selection_query(template, 5)
    assert "?subject wdt:P31 wd:Q476028 ." in selection and "FILTER(?sitelinks >= 10)" in selection
    assert selection.rstrip().endswith("LIMIT 5") and "SERVICE" not in selection
    page = statement_query(template, ["Q1", "Q2"])
    assert "VALUES ?subject { wd:Q1 wd:Q2 }" in page and "ps:P286 ?value" in page


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ('property = "P286"', 'property = "P28 6"'),
        ('property = "P286"', 'property = "Q286"'),
        ('classes = ["Q476028"]', 'classes = ["Q476028 } ; DELETE WHERE { ?s ?p ?o"]'),
        ('classes = ["Q476028"]', 'classes = ["Q0"]'),
        ('classes = ["Q476028"]', 'pattern = "?subject wdt:P31 wd:Q5 } SERVICE <http://evil/> {"'),
        ('classes = ["Q476028"]', 'pattern = "?subject wdt:P31 \\"x\\" ."'),
        ('classes = ["Q476028"]', 'pattern = "?subject wdt:P31 ?value ."'),
        ('classes = ["Q476028"]', 'pattern = "?other wdt:P31 wd:Q5 ."'),
        ('classes = ["Q476028"]', 'pattern = "?subject (wdt:P31 wd:Q5 ."'),
        ("min_sitelinks = 10", 'min_sitelinks = "10; DROP"'),
        ('name = "club_coaches"', 'name = "Club Coaches"'),
        ('category = "club_coaches"', 'category = "club/coaches"'),
        ('"The coach of {subject} is"', '"The coach is"'),
        ('"The coach of {subject} is"', '"The coach of {subject} is {other}"'),
        ('"Right now {subject} has the coach"', '"{subject} is coached by"'),
        ("min_sitelinks = 10", "min_sitelinks = 10\nlanguages = ['en']"),
    ],
    ids=[
        "spaced pid",
        "qid as pid",
        "brace in a class",
        "zero qid",
        "brace in a pattern",
        "string in a pattern",
        "reserved variable",
        "no ?subject",
        "unbalanced",
        "sitelinks not a number",
        "bad name",
        "bad category",
        "no placeholder",
        "other braces",
        "same paraphrase twice",
        "unknown field",
    ],
)
def test_a_bad_template_is_one_line_naming_the_file(tmp_path: Path, change: str, problem: str) -> None:
    assert change in GOOD
    path = write(tmp_path, GOOD.replace(change, problem))
    with pytest.raises(DataError) as info:
        load_template(path)
    assert info.value.where == f"template {path}" and "\n" not in str(info.value)


def test_a_pattern_in_the_grammar_is_accepted_and_queried(tmp_path: Path) -> None:
    """A pattern and a list of items run on a real SPARQL engine: DyKnow's countries with a P35 history."""
    pattern = "?subject wdt:P31 wd:Q3624078 ; wdt:P31 wd:Q6256 ."
    assert check_pattern(pattern) == pattern
    text = GOOD.replace('classes = ["Q476028"]', f'pattern = "{pattern}"\nitems = ["Q38", "Q30", "Q424242"]')
    template = load_template(write(tmp_path, text.replace('"P286"', '"P35"')))
    with StubWDQS() as wdqs:
        selected = parse_selection(json.loads(wdqs.answer(selection_query(template, 10))), "stub")
        page = parse_statements(json.loads(wdqs.answer(statement_query(template, [q for q, _ in selected]))), "stub")
    assert sorted(q for q, _ in selected) == ["Q30", "Q38"]  # the unknown item has no statement, so is not selected
    italy = page["Q38"]
    assert italy.labels == {"en": "Italy"}
    assert {s.labels["en"] for s in italy.statements.values()} >= {"Sergio Mattarella", "Giorgio Napolitano"}


def test_a_toml_syntax_error_and_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not valid TOML"):
        load_template(write(tmp_path, "name = "))
    with pytest.raises(ConfigError, match="file not found"):
        resolve_templates([str(tmp_path / "missing.toml")])
    with pytest.raises(ConfigError, match="not a shipped template"):
        resolve_templates(["no_such_template"])
    with pytest.raises(DataError, match="must be a TOML table"):
        parse_template([], "x")


def test_names_resolve_to_shipped_templates_and_must_be_unique(tmp_path: Path) -> None:
    assert [t.name for t in resolve_templates(["city_mayors", "party_leaders"])] == ["city_mayors", "party_leaders"]
    copy = write(tmp_path, GOOD.replace("club_coaches", "city_mayors"))
    with pytest.raises(ConfigError, match="given twice"):
        resolve_templates(["city_mayors", str(copy)])
