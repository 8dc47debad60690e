"""DynamicQA questions and MuLan queries turned into the conflicts lens's completion queries."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.datasets import dynamicqa as dq
from chronoprobe.datasets import mulan as ml
from chronoprobe.lenses.conflicts.completion import (
    dynamicqa_completion_queries,
    mulan_completion_queries,
)
from chronoprobe.lenses.conflicts.templates import (
    QuestionMatcher,
    completion_prefix,
    load_converted_templates,
    mulan_question,
)

ASSETS = Path(__file__).resolve().parents[1] / "assets"
DQ_SMALL = ASSETS / "dynamicqa_small"


def test_mulan_queries_convert_to_completions(shared_data: Path):
    queries = ml.load_queries(ASSETS / "mulan_queries.jsonl")
    templates = ml.load_templates(shared_data / "mulan" / "templates" / "clean.json")
    aliases = ml.load_aliases(ASSETS / "mulan_aliases.jsonl")
    converted = mulan_completion_queries(queries, templates, aliases)
    usa = next(c for c in converted if c.relation == "P6")
    assert usa.golds == ("Donald Trump",) and "Trump" in usa.aliases
    assert usa.prefix == "The person at the head of the government of United States is"
    assert mulan_question("P6", "United States") == "Who is the head of government of United States?"


@pytest.mark.e2e
def test_dynamicqa_questions_convert_to_statements(shared_data: Path):
    converted = load_converted_templates(shared_data / "temporal_conflicts" / "dynamicqa_converted_templates.csv")
    assert len(converted) == 16 and all(len(t.statements) == 5 for t in converted)
    matcher = QuestionMatcher(converted)
    template, subject = matcher.match("What is Herlyn Espinal's occupation?")  # type: ignore[misc]
    assert subject == "Herlyn Espinal" and template.relation == "D1"
    assert completion_prefix(template.statements[0], subject) == "Herlyn Espinal's occupation is"
    facts = dq.load_dynamicqa(shared_data / "dynamicqa", classes=("static", "temporal"))
    queries = dynamicqa_completion_queries(facts, matcher)  # every question matches one template
    assert len(queries) == 5 * (2500 + 2495)
    fixture = dynamicqa_completion_queries(dq.load_dynamicqa(DQ_SMALL, classes=("static",)), matcher)
    assert fixture[0].relation == "D16" and fixture[0].prefix == "The capital city of France is"
    assert fixture[1].prefix == "France's capital city is" and fixture[0].golds == ("Paris",)
