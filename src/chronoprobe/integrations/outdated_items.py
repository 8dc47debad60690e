"""The outdated question, harness-neutral: one item per (fact, paraphrase), and its judge.

inspect_ai's task, the lm-eval export and the log readers all build on these, so an answer gets
the same verdict whichever harness produced it: the prompt text is the audit's
(:mod:`chronoprobe.lenses.outdated.prompts`), the judge is :func:`~chronoprobe.metrics.dyknow.classify_response`
called exactly as :func:`chronoprobe.lenses.outdated.audit.run_audit` calls it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from chronoprobe.knowledge.types import Fact, FactAnswers, Snapshot
from chronoprobe.lenses.outdated.audit import AuditConfig, ResponseRecord, facts_without_gold, load_gold
from chronoprobe.lenses.outdated.prompts import CHAT_INSTRUCTION
from chronoprobe.metrics.dyknow import Classification, classify_response

SAMPLE_ID_SEPARATOR = "#"


@dataclass(frozen=True)
class OutdatedItem:
    """One paraphrase of one fact, as a harness asks it."""

    fact: Fact
    template_index: int
    instruction: str
    """The chat instruction (``{sentence}`` filled in): the user message under a chat template."""

    @property
    def sample_id(self) -> str:
        return f"{self.fact.fact_id}{SAMPLE_ID_SEPARATOR}{self.template_index}"

    @property
    def template(self) -> str:
        return self.fact.templates[self.template_index]

    @property
    def user_message(self) -> str:
        return self.instruction.format(sentence=self.template)

    def metadata(self) -> dict[str, str | int | None]:
        """What a harness sample carries, so its log can be scored again without our prompts."""
        return {
            "fact_id": self.fact.fact_id,
            "category": self.fact.category,
            "subject": self.fact.subject,
            "attribute": self.fact.attribute,
            "template_index": self.template_index,
            "template": self.template,
            "prompt_kind": f"paraphrase {self.template_index + 1} of {len(self.fact.templates)}",
        }


def load_items(
    *,
    snapshot: str | None = None,
    facts: Path | None = None,
    limit: int | None = None,
    instruction: str = CHAT_INSTRUCTION,
) -> tuple[list[OutdatedItem], Snapshot]:
    """Every paraphrase of the first ``limit`` facts, with the snapshot that judges them.

    Facts whose gold has no dated answer are left out, as the audit leaves them out.
    """
    config = AuditConfig(facts=facts, snapshot=snapshot, limit=limit, instruction=instruction)
    fact_list, gold = load_gold(config)
    skipped = facts_without_gold(fact_list, gold)
    items = [
        OutdatedItem(fact=fact, template_index=index, instruction=instruction)
        for fact in fact_list
        if fact.fact_id not in skipped
        for index in range(len(fact.templates))
    ]
    return items, gold


def judge(
    fact: Fact,
    template_index: int,
    text: str,
    answers: FactAnswers,
    *,
    use_aliases: bool = False,
    as_of: dt.date | None = None,
) -> Classification:
    """The audit's verdict on one answer (``as_of``: against what was current on that date)."""
    return classify_response(
        text,
        answers,
        as_of=as_of,
        use_aliases=use_aliases,
        prompt=fact.templates[template_index],
        subject=fact.subject,
    )


def response_record(
    model: str,
    fact: Fact,
    template_index: int,
    text: str,
    answers: FactAnswers,
    *,
    rendered_prompt: str,
    use_aliases: bool = False,
    as_of: dt.date | None = None,
) -> ResponseRecord:
    """The row ``outdated run`` writes for this answer, so a harness's answers make the same run folder."""
    now = judge(fact, template_index, text, answers, use_aliases=use_aliases)
    then = judge(fact, template_index, text, answers, use_aliases=use_aliases, as_of=as_of) if as_of else None
    return ResponseRecord(
        model=model,
        fact_id=fact.fact_id,
        category=fact.category,
        subject=fact.subject,
        attribute=fact.attribute,
        template_index=template_index,
        template=fact.templates[template_index],
        rendered_prompt=rendered_prompt,
        response=text,
        verdict=now.verdict,
        matched=[s.label for s in now.matched],
        matched_start_years=[s.start.year for s in now.matched if s.start is not None],
        match_rule=now.rule,
        verdict_as_of=then.verdict if then is not None else None,
    )
