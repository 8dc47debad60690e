"""Prompts for the outdated audit, in our own wording.

A chat model gets an instruction to answer with the name only, rendered with
its own chat template; a base model (or a chat model with the template turned
off) gets the bare sentence prefix to complete, as DyKnow asked base models.
"""

from __future__ import annotations

from chronoprobe.knowledge.types import Fact
from chronoprobe.models.base import DecodingParams, Prompt

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


CUTOFF_QUESTIONS: tuple[tuple[str, str], ...] = (
    (
        "Up to what date does your knowledge go? Answer with a month and a year.",
        "My knowledge goes up to",
    ),
    (
        "When does your training data end? Give the month and year of your knowledge cutoff.",
        "My training data ends in",
    ),
    (
        "What is the most recent month and year you have knowledge of?",
        "The most recent month and year I know about is",
    ),
)
"""Three paraphrases of "what is your knowledge cutoff date?" (our own wording): the question a chat model is
asked, and the sentence a base model (or a chat model with its template off) continues, as for the facts."""
CUTOFF_NEW_TOKENS = 48
"""Tokens to generate per cutoff answer: room for a model that hedges before it names a date."""


def cutoff_prompts() -> list[Prompt]:
    """One prompt per paraphrase of the cutoff question, in :data:`CUTOFF_QUESTIONS` order."""
    return [Prompt.chat(question, fallback_text=sentence) for question, sentence in CUTOFF_QUESTIONS]


def cutoff_decoding() -> DecodingParams:
    """Greedy, as every answer of the audit."""
    return DecodingParams(max_new_tokens=CUTOFF_NEW_TOKENS, temperature=0.0, seed=0)
