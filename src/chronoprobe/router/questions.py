"""Questions to route or gate: a text file (one per line) or JSONL (one {"question": ...} per line), or ``-``
for standard input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from chronoprobe.errors import DataError

STDIN = Path("-")


def read_questions(path: Path) -> list[str]:
    """The questions in ``path`` (``-``: standard input); blank lines and, in text, ``#`` lines are skipped."""
    path = Path(path)
    if path == STDIN:
        return parse_questions(sys.stdin.read(), "standard input", jsonl=None)
    if not path.is_file():
        raise DataError(str(path), "no such file" if not path.exists() else "is not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(str(path), f"is not UTF-8 text (byte {exc.start})") from None
    as_jsonl = True if path.suffix.lower() in {".jsonl", ".ndjson"} else None
    return parse_questions(text, str(path), jsonl=as_jsonl)


def parse_questions(text: str, where: str, *, jsonl: bool | None) -> list[str]:
    """The questions in ``text``; ``jsonl=None``: JSONL when the first non-blank line starts with ``{``."""
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    as_jsonl = jsonl if jsonl is not None else bool(lines) and lines[0][1].startswith("{")
    questions: list[str] = []
    for number, line in lines:
        if not as_jsonl:
            if not line.startswith("#"):
                questions.append(line)
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where} line {number}", f"invalid JSON: {exc.msg}") from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
            raise DataError(f"{where} line {number}", 'expected an object with a non-empty "question" string')
        questions.append(row["question"].strip())
    if not questions:
        raise DataError(where, "holds no questions")
    return questions
