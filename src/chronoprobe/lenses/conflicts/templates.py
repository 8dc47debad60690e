"""Converting between the two benchmarks' formats.

- DynamicQA questions -> completion statements, through the 16 question templates
  and their five statement paraphrases (``dynamicqa_converted_templates.csv``).
- MuLan relations -> questions, through our own question wording per relation
  (:data:`MULAN_QUESTIONS`), for running DynamicQA's QA methodology on MuLan.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from chronoprobe.errors import DataError
from chronoprobe.io import read_text


class StatementTemplates(BaseModel):
    """One DynamicQA question template and its completion-style paraphrases."""

    model_config = ConfigDict(frozen=True)

    relation: str
    """D1 .. D16."""
    question: str
    statements: tuple[str, ...]


def load_converted_templates(path: Path) -> list[StatementTemplates]:
    """Read ``dynamicqa_converted_templates.csv`` (columns relation, question, statement)."""
    if not path.is_file():
        raise DataError(str(path), "file not found")
    grouped: dict[str, tuple[str, list[str]]] = {}
    reader = csv.DictReader(io.StringIO(read_text(path, encoding="utf-8-sig"), newline=""))
    for number, row in enumerate(reader, start=1):
        where = f"{path} row {number}"
        relation, question, statement = (row.get(k) or "" for k in ("relation", "question", "statement"))
        if not relation.strip() or "[X]" not in question or "[X]" not in statement or "[Y]" not in statement:
            raise DataError(where, "needs relation, a question with [X] and a statement with [X] and [Y]")
        entry = grouped.setdefault(relation.strip(), (question.strip(), []))
        if entry[0] != question.strip():
            raise DataError(where, f"relation {relation} has two question templates")
        entry[1].append(statement.strip())
    return [StatementTemplates(relation=r, question=q, statements=tuple(s)) for r, (q, s) in grouped.items()]


def _template_regex(template: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(template).replace(re.escape("[X]"), "(.+)") + "$")


class QuestionMatcher:
    """Finds which question template a DynamicQA question instantiates, and its subject."""

    def __init__(self, templates: list[StatementTemplates]) -> None:
        self.templates = templates
        self._patterns = [(t, _template_regex(t.question)) for t in templates]

    def match(self, question: str) -> tuple[StatementTemplates, str] | None:
        for template, pattern in self._patterns:
            found = pattern.match(question.strip())
            if found:
                return template, found.group(1).strip()
        return None


def fill(template: str, subject: str, obj: str | None = None) -> str:
    text = template.replace("[X]", subject)
    return text.replace("[Y]", obj) if obj is not None else text


def completion_prefix(template: str, subject: str) -> str:
    """The text a model completes: the template with the subject filled, cut before [Y]."""
    return fill(template.split("[Y]", 1)[0], subject).rstrip()


MULAN_QUESTIONS: dict[str, str] = {
    # immutable-1
    "P740": "Where was [X] founded?",
    "P103": "What is the native language of [X]?",
    "P19": "Where was [X] born?",
    "P20": "Where did [X] die?",
    "P30": "On which continent is [X]?",
    "P36": "What is the capital of [X]?",
    "P159": "Where is the headquarters of [X]?",
    "P449": "On which network did [X] originally air?",
    "P364": "What is the original language of [X]?",
    "P495": "In which country was [X] created?",
    "P140": "What is the religion of [X]?",
    "P138": "Who or what is [X] named after?",
    # immutable-N
    "P47": "Which country or region shares a border with [X]?",
    "P136": "What genre is [X]?",
    "P166": "Which award has [X] received?",
    "P69": "Where was [X] educated?",
    "P101": "What is the field of work of [X]?",
    "P530": "Which country has diplomatic relations with [X]?",
    "P27": "Of which country is [X] a citizen?",
    "P1412": "Which language does [X] speak?",
    "P1303": "Which instrument does [X] play?",
    "P190": "What is a twin city of [X]?",
    # mutable
    "P937": "Where does [X] work?",
    "P108": "Who is the employer of [X]?",
    "P488": "Who is the chairperson of [X]?",
    "P286": "Who is the head coach of [X]?",
    "P6": "Who is the head of government of [X]?",
    "P39": "What position does [X] hold?",
    "P54": "Which sports team does [X] play for?",
    "P264": "Which record label represents [X]?",
    "P551": "Where does [X] live?",
    "P451": "Who is [X]'s partner?",
    "P1308": "Who holds the office of [X]?",
    "P210": "Who is the party chief representative of [X]?",
    "P1037": "Who is the director or manager of [X]?",
}


def mulan_question(relation: str, subject: str) -> str:
    """The QA-format question for a MuLan fact."""
    template = MULAN_QUESTIONS.get(relation)
    if template is None:
        raise DataError(f"relation {relation}", "no question template for this relation")
    return fill(template, subject)
