"""Every prompt template of the in-context editing methods, in our own wording.

A user's JSON file (``--wording FILE``: an object with some of the keys below) replaces
templates one by one, so DyKnow's original prompts can be used instead. Each template must use
exactly its placeholders (:data:`PLACEHOLDERS`); a bad file is a one-line :class:`ConfigError`.

``*_chat`` templates are the user message a chat model gets (rendered with its own chat template);
``*_text`` templates are what a base model (or a chat model with its template off) continues.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from chronoprobe.errors import ConfigError
from chronoprobe.io import not_utf8


class EditingPrompts(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rag_gold_chat: str = (
        "Read this passage:\n{context}\n\n"
        'Going by the passage, complete this sentence with a name only, no explanation: "{question} ..."'
    )
    """``rag-gold`` and ``rag-noisy``: the fact's passage (with the noise first for noisy), then the question."""
    rag_gold_text: str = "{context}\n\n{question}"
    rag_retrieved_chat: str = (
        "Here are some passages found for this question:\n{context}\n\n"
        'Using only these passages, complete this sentence with a name only, no explanation: "{question} ..."'
    )
    """``rag-retrieved``: the top-k chunks joined by a blank line, then the question."""
    rag_retrieved_text: str = "{context}\n\n{question}"
    ike_chat: str = (
        'Each example below states a new fact, then a sentence after "Prompt:" that is completed in line '
        'with that fact. Complete the last "Prompt:" line in the same way, with a name only, no explanation.'
        "\n\n{demos}{final}"
    )
    """IKE for chat models: ``demos`` is the demonstrations joined, ``final`` the last block."""
    ike_text: str = "{demos}{final}"
    """IKE for base models: the bare demonstrations and the last block, to continue."""
    ike_final: str = "New Fact: {fact}\nPrompt: {question}"
    """``ike``'s last block (the demo data format): the new fact (edit prompt + target), then the question."""
    ike_null_final: str = "New Fact: Not Available\n\nPrompt: {question}"
    """``ike-null``'s last block: no new fact (what DyKnow ran for Tables 3 and 7)."""
    serac_chat: str = (
        "Updated fact: {memory}.\n\n"
        'Taking the updated fact into account, complete this sentence with a name only, no explanation: "{question} ..."'
    )
    """SERAC on a scope hit, counterfactual = base model with the memory entry in its context."""
    serac_text: str = "{memory}.\n{question}"

    @model_validator(mode="after")
    def _placeholders(self) -> EditingPrompts:
        for key in PLACEHOLDERS:
            problem = placeholder_problem(key, getattr(self, key))
            if problem:
                raise ValueError(f"{key}: {problem}")
        return self


PLACEHOLDERS: dict[str, frozenset[str]] = {
    "rag_gold_chat": frozenset({"context", "question"}),
    "rag_gold_text": frozenset({"context", "question"}),
    "rag_retrieved_chat": frozenset({"context", "question"}),
    "rag_retrieved_text": frozenset({"context", "question"}),
    "ike_chat": frozenset({"demos", "final"}),
    "ike_text": frozenset({"demos", "final"}),
    "ike_final": frozenset({"fact", "question"}),
    "ike_null_final": frozenset({"question"}),
    "serac_chat": frozenset({"memory", "question"}),
    "serac_text": frozenset({"memory", "question"}),
}
"""The placeholders each template must use, and the only ones it may use."""


def placeholder_problem(key: str, template: str) -> str | None:
    """Why ``template`` cannot serve as ``key`` (None when it can)."""
    try:
        used = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError as exc:
        return f"not a valid template ({exc}); write a literal brace as {{{{ or }}}}"
    expected = PLACEHOLDERS[key]
    missing = sorted(expected - used)
    if missing:
        return f"missing placeholder {', '.join('{' + name + '}' for name in missing)}"
    unknown = sorted(used - expected)
    if unknown:
        allowed = ", ".join("{" + name + "}" for name in sorted(expected))
        return f"unknown placeholder {', '.join('{' + name + '}' for name in unknown)} (allowed: {allowed})"
    return None


DEFAULT_PROMPTS = EditingPrompts()


def load_prompts(path: Path | str | None) -> EditingPrompts:
    """The templates from a user's JSON file, defaults for the keys it leaves out (None = all defaults)."""
    if path is None:
        return DEFAULT_PROMPTS
    path = Path(path)
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise not_utf8(str(path), exc) from None
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read the prompts file ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ConfigError(str(path), f"not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), f"expected a JSON object of templates, got {type(data).__name__}")
    for key, template in data.items():
        where = f"{path} key {key!r}"
        if key not in PLACEHOLDERS:
            raise ConfigError(where, f"unknown template (known: {', '.join(PLACEHOLDERS)})")
        if not isinstance(template, str):
            raise ConfigError(where, f"expected a string, got {type(template).__name__}")
        problem = placeholder_problem(key, template)
        if problem:
            raise ConfigError(where, problem)
    try:
        return EditingPrompts.model_validate(data)
    except ValidationError as exc:  # every check above passed, so this is unexpected
        raise ConfigError(str(path), exc.errors()[0]["msg"]) from None
