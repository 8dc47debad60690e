"""The facts to edit, in DyKnow's ``editing_dataset.json`` record shape.

One :class:`EditRecord` per fact: the edit prompt (one of the fact's questions), the new
target, the subject the editors locate in the prompt, every question kind, and the fact's
dated answers as DyKnow writes them (``Label |S: date |E: date``). The record is
self-contained: the post-edit answers are judged against its own ``answers``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from chronoprobe.knowledge.grc import fact_id, parse_answer
from chronoprobe.knowledge.types import DyknowCategory, FactAnswers

QUESTION_KINDS = ("generic", "contextualized", "rephrased_1", "rephrased_2", "rephrased_3")
"""DyKnow's question kinds; ``generic`` is asked but never scored."""

Group = Literal["Politicians", "Teams", "Positions"]
GROUPS: tuple[Group, ...] = ("Politicians", "Teams", "Positions")
GROUP_OF: dict[str, Group] = {
    "countries_byGDP": "Politicians",
    "athletes_byPayment": "Teams",
    "companies_byRevenue": "Positions",
    "organizations": "Positions",
}
"""Table 3 pools companies and organizations as "Positions"."""


def group_heading(group: str) -> str:
    """``Positions (companies_byRevenue + organizations)``: an editing group named with the audit categories in it."""
    categories = [category for category, of in GROUP_OF.items() if of == group]
    return f"{group} ({' + '.join(categories)})" if categories else group


GROUPS_TEXT = "; ".join(group_heading(g) for g in GROUPS)
"""How the audit's categories map to the editing groups, in one line for the reports."""


class EditRecord(BaseModel):
    """One fact to edit (one element of DyKnow's ``editing_dataset.json``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    prompt: str
    """The edit prompt: ``questions[prompt_type]``."""
    target: str
    """The new (current) answer the edit writes in."""
    subject: str
    """The span the editors locate in ``prompt`` (its last token is the edit's key position)."""
    domain: DyknowCategory
    element: str
    attribute: str | None = None
    prompt_type: str
    questions: dict[str, str]
    answers: list[str]
    """Every dated answer, ``Label |S: +YYYY-MM-DDT00:00:00Z |E: ...`` (the judge's gold)."""

    @model_validator(mode="after")
    def _consistent(self) -> EditRecord:
        if not self.target.strip():
            raise ValueError("empty target")
        if self.prompt_type not in self.questions:
            raise ValueError(f"prompt_type {self.prompt_type!r} is not one of its questions")
        if self.questions[self.prompt_type] != self.prompt:
            raise ValueError(f"prompt differs from questions[{self.prompt_type!r}]")
        if not self.subject or self.subject not in self.prompt:
            raise ValueError(f"subject {self.subject!r} is not in its prompt {self.prompt!r}")
        unknown = sorted(set(self.questions) - set(QUESTION_KINDS))
        if unknown:
            raise ValueError(f"unknown question kind(s) {', '.join(unknown)}")
        return self

    @property
    def fact_id(self) -> str:
        """Our fact id (``category/element[/attribute]``), as the audit names the fact."""
        return fact_id(self.domain, self.element, self.attribute)

    @property
    def group(self) -> Group:
        return GROUP_OF[self.domain]

    @property
    def paraphrase_types(self) -> list[str]:
        """The scored question kinds other than the edit prompt, in the file's order."""
        return [k for k in self.questions if k not in ("generic", self.prompt_type)]

    @property
    def scored_types(self) -> list[str]:
        """Edit prompt first, then the paraphrases: every question that counts."""
        return [self.prompt_type, *self.paraphrase_types]

    def gold(self) -> FactAnswers:
        """The dated answers as statements (statements without a start do not count)."""
        statements = tuple(parse_answer(text, f"{self.fact_id} answer {i}") for i, text in enumerate(self.answers))
        return FactAnswers(fact_id=self.fact_id, statements=statements).counted()


class EditRequest(BaseModel):
    """What a weight editor (ROME, MEMIT) is given: the exact text the model sees, the subject in it, the new target."""

    model_config = ConfigDict(frozen=True)

    prompt: str
    """The prompt as the model sees it (for a chat model: rendered with its chat template)."""
    subject: str
    """Occurs in ``prompt``; its last token is where the edit's key is read."""
    target: str
    """The new answer (a leading space is added by the editors, as DyKnow's did)."""

    @model_validator(mode="after")
    def _subject_in_prompt(self) -> EditRequest:
        if not self.subject or self.subject not in self.prompt:
            raise ValueError(f"subject {self.subject!r} is not in its prompt {self.prompt!r}")
        if not self.target.strip():
            raise ValueError("empty target")
        return self
