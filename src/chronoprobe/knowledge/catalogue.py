"""The fact catalogue: which (subject, property) questions the outdated audit asks.

File format (JSON): ``{"name": ..., "facts": [row, ...]}``; each row has
``fact_id`` (``category/subject[/attribute]``), ``category``, ``subject``,
``subject_qid``, ``attribute`` (or null), ``property``, ``templates`` (completion
prefixes), optional ``generic`` and ``qid_confidence``.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chronoprobe.errors import DataError
from chronoprobe.io import not_utf8
from chronoprobe.knowledge.grc import fact_id as make_fact_id
from chronoprobe.knowledge.types import Fact

_ALLOWED = set(Fact.model_fields)


def shipped_catalogue() -> Path:
    return Path(str(files("chronoprobe") / "data" / "catalogue" / "dyknow_facts.json"))


def _row(row: Any, where: str) -> Fact:
    if not isinstance(row, dict):
        raise DataError(where, f"expected an object, got {type(row).__name__}")
    unknown = sorted(set(row) - _ALLOWED)
    if unknown:
        raise DataError(where, f"unknown field(s) {', '.join(unknown)}")
    if row.get("subject_qid") is None:
        raise DataError(where, "missing subject_qid (the Wikidata item the fact is about)")
    try:
        fact = Fact.model_validate(row)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "row"
        raise DataError(where, f"{field}: {error['msg']}") from None
    expected = make_fact_id(fact.category, fact.subject, fact.attribute)
    if fact.fact_id != expected:
        raise DataError(where, f"fact_id {fact.fact_id!r} should be {expected!r} (category/subject[/attribute])")
    if any(not template.strip() for template in fact.templates):
        raise DataError(where, "empty template")
    return fact


def load_catalogue(path: Path | None = None) -> list[Fact]:
    """Load and validate a catalogue (None = the shipped DyKnow one)."""
    path = Path(path) if path is not None else shipped_catalogue()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise not_utf8(str(path), exc) from None
    except OSError as exc:
        raise DataError(str(path), f"cannot read catalogue: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise DataError(str(path), f"not valid JSON: {exc}") from None
    rows = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        raise DataError(str(path), "expected an object with a non-empty 'facts' list")
    facts: list[Fact] = []
    seen: set[str] = set()
    for index, row in enumerate(rows):
        label = row.get("fact_id") if isinstance(row, dict) else None
        where = f"{path} row {index}" + (f" ({label})" if label else "")
        fact = _row(row, where)
        if fact.fact_id in seen:
            raise DataError(where, f"duplicate fact_id {fact.fact_id!r}")
        seen.add(fact.fact_id)
        facts.append(fact)
    return facts
