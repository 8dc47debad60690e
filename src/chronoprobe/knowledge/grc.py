"""Reader for DyKnow's original benchmark file (``grc_generated.json``).

Shape: ``category -> subject -> [attribute ->] {"questions": {...}, "answers": [...]}``;
athletes and companies have no attribute level. An answer string looks like
``Label |S: +2015-02-03T00:00:00Z |E: ... |P: ...`` with S = start (P580),
E = end (P582), P = point in time (P585).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from chronoprobe.errors import DataError
from chronoprobe.io import not_utf8
from chronoprobe.knowledge.types import (
    DyknowCategory,
    Fact,
    FactAnswers,
    Statement,
    WikidataDate,
)

CATEGORIES: tuple[str, ...] = get_args(DyknowCategory)
PARAPHRASE_KEYS = ("contextualized", "rephrased_1", "rephrased_2", "rephrased_3")

# Which Wikidata property each kind of question asks about.
CATEGORY_PROPERTY = {"athletes_byPayment": "P54", "companies_byRevenue": "P169"}
HEAD_OF_STATE, HEAD_OF_GOVERNMENT = "P35", "P6"
ORGANIZATION_PROPERTY = {
    "general secretary": "P3975",  # secretary general
    "chairperson": "P488",
    "director / manager": "P1037",
    "headquarters location": "P159",
}

_QUALIFIER = re.compile(r"\s\|([SEP]):\s*")
_QUALIFIER_FIELD = {"S": "start", "E": "end", "P": "point_in_time"}


def fact_id(category: str, subject: str, attribute: str | None) -> str:
    return "/".join(part for part in (category, subject, attribute) if part is not None)


def property_for(category: str, attribute: str | None, generic: str | None, where: str) -> str:
    """The Wikidata property a DyKnow question asks about."""
    if category in CATEGORY_PROPERTY:
        return CATEGORY_PROPERTY[category]
    if category == "countries_byGDP":
        text = (generic or "").lower()
        if "head of state" in text:
            return HEAD_OF_STATE
        if "head of government" in text:
            return HEAD_OF_GOVERNMENT
        raise DataError(where, f"cannot tell head of state from head of government in {generic!r}")
    if category == "organizations" and attribute in ORGANIZATION_PROPERTY:
        return ORGANIZATION_PROPERTY[attribute]
    raise DataError(where, f"no Wikidata property known for category {category!r} attribute {attribute!r}")


def parse_answer(text: Any, where: str) -> Statement:
    """Parse one ``Label |S: ... |E: ... |P: ...`` string."""
    if not isinstance(text, str):
        raise DataError(where, f"answer is not a string: {text!r}")
    pieces = _QUALIFIER.split(text)
    label = pieces[0].strip()
    if not label or "|" in label:
        raise DataError(where, f"bad answer string {text!r} (expected 'Label |S: date |E: date |P: date')")
    fields: dict[str, WikidataDate] = {}
    for key, value in zip(pieces[1::2], pieces[2::2], strict=True):
        name = _QUALIFIER_FIELD[key]
        if name in fields:
            raise DataError(where, f"bad answer string {text!r} (|{key}: given twice)")
        try:
            fields[name] = WikidataDate.parse(value)
        except ValueError:
            raise DataError(where, f"bad date {value.strip()!r} in answer string {text!r}") from None
    return Statement(label=label, **fields)


def _entry(category: str, subject: str, attribute: str | None, node: Any) -> tuple[Fact, FactAnswers]:
    where = fact_id(category, subject, attribute)
    if not isinstance(node, dict) or not isinstance(node.get("questions"), dict):
        raise DataError(where, "expected an object with 'questions' and 'answers'")
    questions = node["questions"]
    answers = node.get("answers")
    if not isinstance(answers, list):
        raise DataError(where, "'answers' must be a list of answer strings")
    templates = tuple(str(questions[key]) for key in questions if key in PARAPHRASE_KEYS)
    unknown = [key for key in questions if key != "generic" and key not in PARAPHRASE_KEYS]
    if unknown:
        raise DataError(where, f"unknown question keys {unknown}")
    if not templates:
        raise DataError(where, "no paraphrase questions (contextualized / rephrased_N)")
    generic = questions.get("generic")
    prop = property_for(category, attribute, generic, where)
    try:
        fact = Fact(
            fact_id=where,
            category=category,
            subject=subject,
            attribute=attribute,
            property=prop,
            templates=templates,
            generic=generic,
        )
    except ValidationError as exc:
        raise DataError(where, exc.errors()[0]["msg"]) from None
    statements = tuple(parse_answer(text, f"{where} answer {i}") for i, text in enumerate(answers))
    return fact, FactAnswers(fact_id=where, statements=statements)


def load_grc(path: Path) -> tuple[list[Fact], dict[str, FactAnswers]]:
    """Facts (templates = the three paraphrases) and every answer as given in the file.

    Statements without a start are kept here; ``FactAnswers.counted()`` drops them.
    A point in time (P585) stays a point in time (the original code read it as an end date).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise not_utf8(str(path), exc) from None
    except (OSError, ValueError) as exc:
        raise DataError(str(path), f"cannot read DyKnow JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DataError(str(path), "top level must be an object keyed by category")
    facts: list[Fact] = []
    answers: dict[str, FactAnswers] = {}
    for category, subjects in data.items():
        if category not in CATEGORIES:
            raise DataError(f"{path}: {category}", f"unknown category (expected one of {', '.join(CATEGORIES)})")
        if not isinstance(subjects, dict):
            raise DataError(f"{path}: {category}", "expected an object keyed by subject")
        for subject, node in subjects.items():
            if isinstance(node, dict) and "questions" in node:
                entries = [(None, node)]
            elif isinstance(node, dict) and node:
                entries = list(node.items())
            else:
                raise DataError(f"{path}: {category}/{subject}", "expected questions/answers or attributes")
            for attribute, leaf in entries:
                try:
                    fact, fact_answers = _entry(category, subject, attribute, leaf)
                except DataError as exc:
                    raise DataError(f"{path}: {exc.where}", exc.problem) from None
                facts.append(fact)
                answers[fact.fact_id] = fact_answers
    return facts, answers
