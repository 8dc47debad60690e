"""Our own prompt wording for the conflicts lens.

Users may replace each wording with a template file (``--wording``): a JSON
object with any of the keys ``qa``, ``qa_context``, ``completion``, ``update``,
``passage``; placeholders ``{question}``, ``{context}``, ``{statement}``,
``{fact}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from chronoprobe.errors import ConfigError
from chronoprobe.io import read_text
from chronoprobe.models.base import Prompt


class PromptWording(BaseModel):
    model_config = ConfigDict(frozen=True)

    qa: str = "Answer the question with one word or a short name, nothing else.\nQuestion: {question}"
    qa_context: str = (
        "Read the context, then answer the question with one word or a short name, nothing else.\n"
        "Context: {context}\nQuestion: {question}"
    )
    completion: str = "Complete the fact in as few words as possible.\n{statement} ..."
    update: str = "Complete the fact in as few words as possible.\n{statement} ..."
    passage: str = (
        "Write a short Wikipedia-style paragraph (two or three sentences) that states the following fact "
        "plainly and keeps the names exactly as written.\nFact: {fact}"
    )

    @classmethod
    def from_file(cls, path: Path | None) -> PromptWording:
        if path is None:
            return cls()
        try:
            data = json.loads(read_text(path, f"prompt file {path}"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(str(path), f"cannot read the prompt file: {exc}") from None
        if not isinstance(data, dict) or set(data) - set(cls.model_fields):
            raise ConfigError(str(path), f"expected a JSON object with keys among {sorted(cls.model_fields)}")
        return cls(**data)


def qa_prompt(wording: PromptWording, question: str, context: str | None = None) -> Prompt:
    """A one-word-answer question, with or without a context."""
    if context is None:
        user = wording.qa.format(question=question)
        fallback = f"Question: {question}\nAnswer:"
    else:
        user = wording.qa_context.format(question=question, context=context)
        fallback = f"Context: {context}\nQuestion: {question}\nAnswer:"
    return Prompt.chat(user, fallback_text=fallback)


def completion_prompt(wording: PromptWording, prefix: str, preamble: str = "") -> Prompt:
    """Fact completion: chat models see the instruction and then continue ``prefix`` in
    their own turn; base models see ``preamble + prefix`` raw."""
    statement = f"{preamble}{prefix}"
    template = wording.update if preamble else wording.completion
    return Prompt.chat(template.format(statement=statement), fallback_text=preamble, answer_prefix=prefix)


def passage_prompt(wording: PromptWording, fact: str) -> Prompt:
    return Prompt.chat(wording.passage.format(fact=fact), fallback_text=f"{fact} ")
