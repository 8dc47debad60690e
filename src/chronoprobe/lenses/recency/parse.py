"""Reading a recency label out of a model's answer (JSON or free text).

The rules, in order (docs/recency.md repeats them):

1. The whole answer (or its first line) is a label: take it.
2. Explicit markers: ``"RecencyLabel": "..."``, ``"label": ...``, ``Label: ...``,
   ``Final label: ...``, ``Answer: ...`` (JSON, broken JSON or plain text).
   Chain-of-thought takes the last marker, the other strategies the first.
3. Free text: every label mention ("a few days", "A-Few-Days", "few days"...).
   Chain-of-thought takes the last mention, the other strategies the first.

Before 2 and 3, a copy of the label list (three or more labels in taxonomy
order separated only by commas, "or" and spaces, or a list cut short after
"An-Hour, A-Few-Hours") is ignored, and so are copied lines of the definition
list ("An-Hour: the answer changes within an hour", when two or more appear): a
model that echoes the list has not chosen. For non-CoT answers the text is cut where the model starts
a new example (``Question:``). Nothing found means unparseable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel

from chronoprobe.datasets.recency_taxonomy import (
    ALIASES,
    RecencyClass,
    Stationarity,
    normalise,
    parse_label,
)

Method = Literal["whole", "marker", "free-text", "none"]


class ParsedLabel(BaseModel):
    label: RecencyClass | None
    method: Method

    @property
    def ok(self) -> bool:
        return self.label is not None


# Multi-word (or squashed) forms only: a bare "day" or "year" inside prose is too ambiguous.
_MENTION_FORMS = sorted(
    {k for k in ALIASES if " " in k} | {"never"} | {normalise(c.label).replace(" ", "") for c in RecencyClass},
    key=len,
    reverse=True,
)
_MENTION = re.compile(r"(?<![a-z0-9])(" + "|".join(re.escape(f) for f in _MENTION_FORMS) + r")(?![a-z0-9])")
_MARKER = re.compile(
    r"(?:recency\s*label|final\s*label|final\s*answer|label|answer|prediction|recency)\s*[\"'*]*\s*[:=]\s*[\"'\[*]*\s*",
)
# Lines of the labelling prompt's definition list ("A-Day: the answer changes within a day"), copied back.
_DEFINITION_ECHOES = tuple(f"{normalise(c.label)}: the answer changes {c.description}" for c in RecencyClass)
_NEW_EXAMPLE = re.compile(r"\n\s*question\s*:", re.IGNORECASE)
_LIST_GAP = re.compile(r"^[\s,;/|]*(?:or)?[\s,;/|]*$")


def _mentions(text: str) -> list[tuple[int, int, RecencyClass]]:
    found = []
    for match in _MENTION.finditer(text):
        cls = ALIASES[match.group(1)]
        found.append((match.start(), match.end(), cls))
    return found


def _drop_list_echoes(text: str, mentions: list[tuple[int, int, RecencyClass]]) -> list[tuple[int, int, RecencyClass]]:
    """Remove echoed label lists: consecutive classes in taxonomy order separated only by list punctuation."""
    keep = [True] * len(mentions)
    start = 0
    while start < len(mentions):
        end = start
        while (
            end + 1 < len(mentions)
            and mentions[end + 1][2] == mentions[end][2] + 1
            and _LIST_GAP.match(text[mentions[end][1] : mentions[end + 1][0]])
        ):
            end += 1
        run = end - start + 1
        if run >= 3 or (run == 2 and mentions[start][2] == RecencyClass.AN_HOUR):
            for i in range(start, end + 1):
                keep[i] = False
        start = end + 1
    return [m for m, k in zip(mentions, keep, strict=True) if k]


def parse_recency_answer(text: str, *, last: bool = False) -> ParsedLabel:
    """Parse a model answer; ``last=True`` for chain-of-thought answers."""
    if not last:
        cut = _NEW_EXAMPLE.search(text)
        if cut and cut.start() > 0:
            text = text[: cut.start()]
    stripped = text.strip()
    whole = parse_label(stripped) or parse_label(stripped.splitlines()[0] if stripped else "")
    if whole is not None:
        return ParsedLabel(label=whole, method="whole")

    norm = normalise_keep_layout(text)
    echoed = [echo for echo in _DEFINITION_ECHOES if echo in norm]
    if len(echoed) >= 2:  # one such line alone is an answer in that format
        for echo in echoed:
            norm = norm.replace(echo, " " * len(echo))
    mentions = _drop_list_echoes(norm, _mentions(norm))
    marked = []
    for marker in _MARKER.finditer(norm):
        after = [m for m in mentions if m[0] == marker.end()]
        if after:
            marked.append(after[0][2])
    if marked:
        return ParsedLabel(label=marked[-1] if last else marked[0], method="marker")
    if mentions:
        return ParsedLabel(label=mentions[-1][2] if last else mentions[0][2], method="free-text")
    return ParsedLabel(label=None, method="none")


def normalise_keep_layout(text: str) -> str:
    """Lower case with hyphens/underscores as spaces and camel case split, other characters kept."""
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)  # RecencyLabel -> Recency Label, AFewDays -> A Few Days
    text = text.lower()
    text = re.sub(r"[-_\u2010-\u2014]", " ", text)
    return re.sub(r"[ \t]+", " ", text)


_YES = re.compile(r"(?<![a-z])(non ?stationary|not stationary|stationary|yes|no)(?![a-z])")
_STATIONARY_KEY = re.compile(r"stationary\s*[\"']?\s*[:=]\s*[\"']?\s*(yes|no|true|false|stationary|non ?stationary)")


def parse_stationarity_vote(text: str) -> Stationarity | None:
    """A YES/NO (or Stationary/Non-Stationary) vote; the JSON field wins, else the first mention."""
    norm = normalise_keep_layout(text)
    keyed = _STATIONARY_KEY.search(norm)
    if keyed:
        return Stationarity.parse(keyed.group(1))
    first = _YES.search(norm)
    return Stationarity.parse(first.group(1)) if first else None


def parse_contexts(text: str) -> list[str]:
    """Context sentences from a generation: a JSON list/object with a "context" field, else the first paragraph."""
    contexts: list[str] = []
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text[match.start() :])
        except json.JSONDecodeError:
            continue
        for entry in value if isinstance(value, list) else [value]:
            if isinstance(entry, dict):
                for key, field in entry.items():
                    if normalise(str(key)) == "context" and isinstance(field, str) and field.strip():
                        contexts.append(field.strip())
            elif isinstance(entry, str) and entry.strip():
                contexts.append(entry.strip())
        if contexts:
            return _unique(contexts)
    quoted = re.findall(r"\"context\"\s*:\s*\"([^\"]{10,})\"", text, flags=re.IGNORECASE)
    if quoted:
        return _unique(q.strip() for q in quoted)
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    paragraph = re.sub(r"^\s*(context\s*:\s*)", "", paragraph, flags=re.IGNORECASE).strip().strip("\"'")
    paragraph = " ".join(paragraph.split())
    return [paragraph] if len(paragraph.split()) >= 4 else []


def _unique(values: Iterable[object]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        seen.setdefault(" ".join(str(value).split()), None)
    return list(seen)
