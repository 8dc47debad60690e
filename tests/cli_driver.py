"""Run ``chronoprobe ARGS`` in the test's own process, through the real ``main()``.

Tests import it by file name (pytest puts ``tests/`` on ``sys.path`` through the root conftest).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from chronoprobe.cli.main import main

_PROGRESS = re.compile(r"^(loading .+ \.\.\.|.+: \d[\d,]* done \d+:\d\d elapsed.*)$")
"""The lines a slow step prints in a pipe while it goes on (``progress_lines``: a model load that takes a while, a
live query's count): progress, not part of an error."""


def said_lines(err: str) -> list[str]:
    """What a command said on stderr, one entry per line: blank lines and progress lines left out."""
    return [line for line in err.splitlines() if line.strip() and not _PROGRESS.match(line.strip())]


@dataclass(frozen=True)
class Ran:
    """One command's exit code and what it printed."""

    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        """stdout then stderr."""
        return self.out + self.err


def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str, columns: int | None = None
) -> Ran:
    """``chronoprobe ARGS``: its exit code (0 when it returns, 1 for a non-numeric exit) and output."""
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *args])
    if columns is not None:
        monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    code: object = 0
    try:
        main()
    except SystemExit as stopped:
        code = 0 if stopped.code is None else stopped.code
    captured = capsys.readouterr()
    return Ran(code if isinstance(code, int) else 1, captured.out, captured.err)


def run_ok(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``chronoprobe ARGS``, which must succeed: everything it printed."""
    ran = run_main(monkeypatch, capsys, *args)
    assert ran.code == 0, ran.text
    return ran.text


def tree_state(root: Path, skip: tuple[str, ...] = ("home", "calls.sqlite")) -> dict[str, str]:
    """Every entry under ``root`` (but the top-level names in ``skip``): a file by its bytes' digest, a folder
    as ``dir``, a link by its target; two states differ when anything was written, removed or changed."""
    state: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if name.split("/")[0].startswith(skip):
            continue
        if path.is_symlink():
            state[name] = f"link -> {os.readlink(path)}"
        elif path.is_dir():
            state[name] = "dir"
        else:
            state[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What differs between two :func:`tree_state` results, one line per entry."""
    return [
        f"{name}: {'new' if name not in before else 'gone' if name not in after else 'changed'}"
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    ]
