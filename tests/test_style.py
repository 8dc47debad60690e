"""House rules that are checked on the source text (CONTRIBUTING.md, "Set up and check")."""

from __future__ import annotations

import re
from pathlib import Path

import chronoprobe

PACKAGE = Path(chronoprobe.__file__).parent
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")
REASONED = re.compile(r"\[[a-z][a-z-]*(,\s*[a-z][a-z-]*)*\]")


def _unexplained(line: str) -> bool:
    """A ``type: ignore`` comment without an error code, or without a ``# reason`` after it."""
    found = IGNORE.search(line)
    if found is None:
        return False
    codes, rest = found["codes"] or "", found["rest"]
    return not REASONED.fullmatch(codes) or re.match(r"\s+#\s*\S", rest) is None


def test_every_type_ignore_names_its_code_and_says_why() -> None:
    offending = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if _unexplained(line)
    ]
    assert offending == []


def test_the_type_ignore_check_tells_a_reason_from_none() -> None:
    assert not _unexplained("x = f()  # type: ignore[arg-type]  # the library's stub is wrong")
    assert not _unexplained("x = f()  # type: ignore[assignment,misc]  # a stand-in class")
    assert _unexplained("x = f()  # type: ignore[arg-type]")
    assert _unexplained("x = f()  # type: ignore  # no code")
    assert _unexplained("x = f()  # type: ignore[]  # empty code")
    assert not _unexplained("x = f()  # an ordinary comment")
