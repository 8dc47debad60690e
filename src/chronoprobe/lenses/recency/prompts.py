"""Prompt templates for the recency lens.

Templates are text files in the layout of the RecencyQA prompt files: an
optional ``SYSTEM PROMPT:`` section, a line of ``=`` signs, then a
``USER PROMPT ...:`` section. Placeholders are filled by plain substitution,
not ``str.format`` (the files contain literal JSON braces):

``{question}`` ``{context}`` ``{label}``  as in the original files
``{labels}``             the 12 labels, comma separated (ours)
``{label_definitions}``  one line per label with its meaning (ours)
``{label_description}``  what ``{label}`` means, e.g. "within a few days" (ours)
``{examples}``           few-shot demonstrations (ours; the original few-shot
                         files have theirs written in, and then none is added)
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from chronoprobe.datasets.recency_taxonomy import CLASSES, LABEL_LIST_TEXT, RecencyClass
from chronoprobe.errors import ConfigError
from chronoprobe.io import read_text
from chronoprobe.models.base import Prompt

PLACEHOLDERS = ("question", "context", "label", "labels", "label_definitions", "label_description", "examples")
_SEPARATOR = re.compile(r"^\s*={10,}\s*$", re.MULTILINE)
_SECTION_HEADER = re.compile(r"^\s*(SYSTEM PROMPT|USER PROMPT)[^\n]*:\s*$", re.MULTILINE)


class Template(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    user: str
    system: str | None = None

    @property
    def placeholders(self) -> set[str]:
        text = self.user + (self.system or "")
        return {p for p in PLACEHOLDERS if "{" + p + "}" in text}

    @property
    def takes_context(self) -> bool:
        return "context" in self.placeholders

    def fill(self, *, answer_prefix: str = "", **values: str) -> Prompt:
        values.setdefault("labels", LABEL_LIST_TEXT)
        values.setdefault("label_definitions", LABEL_DEFINITIONS)
        user = _substitute(self.user, values)
        system = _substitute(self.system, values) if self.system else None
        fallback = f"{system}\n\n{user}" if system else user
        return Prompt.chat(user, system=system, fallback_text=fallback, answer_prefix=answer_prefix)


def _substitute(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


LABEL_DEFINITIONS = "\n".join(f"- {c.label}: the answer changes {c.description}" for c in CLASSES)


def parse_template(text: str, name: str) -> Template:
    """Split a prompt file into its system and user sections."""
    parts = _SEPARATOR.split(text, maxsplit=1)
    if len(parts) == 2:
        system_part, user_part = parts
    else:
        system_part, user_part = "", parts[0]
    system = _SECTION_HEADER.sub("", system_part).strip() or None
    user = _SECTION_HEADER.sub("", user_part).strip()
    if not user:
        raise ConfigError(f"prompt file {name}", "the user prompt is empty")
    if "{question}" not in user:
        raise ConfigError(f"prompt file {name}", "the user prompt has no {question} placeholder")
    return Template(name=name, user=user, system=system)


def builtin(name: str) -> Template:
    """One of our prompt files in chronoprobe/data/prompts/recency/ (without .txt)."""
    resource = resources.files("chronoprobe") / "data" / "prompts" / "recency" / f"{name}.txt"
    return parse_template(resource.read_text(encoding="utf-8"), f"{name}.txt (built in)")


def load_template(path: Path) -> Template:
    path = Path(path).expanduser()
    if not path.is_file():
        raise ConfigError(f"prompt file {path}", "no such file")
    return parse_template(read_text(path, f"prompt file {path}"), str(path))


def eval_template(strategy: str, with_context: bool) -> Template:
    return builtin(f"eval_{strategy.replace('-', '_')}_{'with' if with_context else 'without'}_context")


def format_example(question: str, label: RecencyClass, context: str | None) -> str:
    lines = [f"Question: {question}"]
    if context is not None:
        lines.append(f"Context: {context}")
    lines.append(f"Label: {label.label}")
    return "\n".join(lines)
