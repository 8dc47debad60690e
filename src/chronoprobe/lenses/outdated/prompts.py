"""Prompts for the outdated audit, in our own wording.

A chat model gets an instruction to answer with the name only, rendered with
its own chat template; a base model (or a chat model with the template turned
off) gets the bare sentence prefix to complete, as DyKnow asked base models.
"""

from __future__ import annotations

from chronoprobe.knowledge.types import Fact
from chronoprobe.models.base import Prompt

CHAT_INSTRUCTION = 'Complete this sentence with a name only, no explanation: "{sentence} ..."'

CHAT_PROMPTING = "chat template + instruction"
BARE_SENTENCE = "bare sentence to continue (no chat template)"


def audit_prompt(sentence: str, instruction: str = CHAT_INSTRUCTION) -> Prompt:
    return Prompt.chat(instruction.format(sentence=sentence), fallback_text=sentence)


def fact_prompts(fact: Fact, instruction: str = CHAT_INSTRUCTION) -> list[Prompt]:
    """One prompt per paraphrase template of ``fact``, in template order."""
    return [audit_prompt(template, instruction) for template in fact.templates]


def prompting_label(*, chat_template: bool) -> str:
    """How a model was asked, for the report: the backend's recorded chat-template setting decides."""
    return CHAT_PROMPTING if chat_template else BARE_SENTENCE
