"""Run ``chronoprobe ARGS`` in the test's own process, through the real ``main()``.

Tests import it by file name (pytest puts ``tests/`` on ``sys.path`` through the root conftest).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest

from chronoprobe.cli.main import main


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
