"""A ``--model`` value is parsed once per command: by its config's ``models`` field, and never again on the way
to the model (the folder's name, the pre-flight, the load key, the load, the lens's runs in a check).

Every module that holds ``models.registry.parse_model`` gets a counting stand-in for the test, so a parse
anywhere is seen, from the CLI and from Python alike.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import chronoprobe as cp
from chronoprobe.models import registry
from chronoprobe.models.registry import default_models
from cli_driver import run_main

pytestmark = pytest.mark.e2e

SPEC = "mock:constant=Mario Draghi"
GATE = "mock:constant=A-Year"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """Every value handed to ``parse_model`` while the test runs (the embedded default is parsed once per process,
    before: its request is shared)."""
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    default_models()
    original = registry.parse_model
    seen: list[str] = []

    def counted(value: Any) -> Any:
        if not isinstance(value, registry.ModelRequest):  # a request goes through as it is: no parse
            seen.append(str(value))
        return original(value)

    for module in list(sys.modules.values()):
        if getattr(module, "parse_model", None) is original:
            monkeypatch.setattr(module, "parse_model", counted)
    yield seen


COMMANDS: dict[str, tuple[str, ...]] = {
    "outdated run": ("outdated", "run", "-m", SPEC, "--limit", "2", "--out", "run"),
    "a tool with --model": ("recency", "gate", "Who is the CEO of Apple?", "-m", GATE),
    "check": ("check", "-m", SPEC, "--lens", "outdated", "--out", "check"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_cli_parses_the_spec_once(
    parsed: list[str], command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_main(monkeypatch, capsys, *COMMANDS[command], "--cache", "c.sqlite")
    assert ran.code == 0, ran.text
    assert parsed == [COMMANDS[command][COMMANDS[command].index("-m") + 1]]


PYTHON: dict[str, tuple[str, Callable[[], object]]] = {
    "cp.run": (SPEC, lambda: cp.run("outdated", SPEC, limit=2, out="run", cache="c.sqlite", progress=False)),
    "cp.produce": (
        GATE,
        lambda: cp.produce("recency.gate", question="Who?", models=GATE, cache="c.sqlite", progress=False),
    ),
    "cp.check": (SPEC, lambda: cp.check(SPEC, lens="outdated", out="check", cache="c.sqlite", progress=False)),
}


@pytest.mark.parametrize("call", sorted(PYTHON))
def test_python_parses_the_spec_once(parsed: list[str], call: str) -> None:
    spec, made = PYTHON[call]
    made()
    assert parsed == [spec]


def test_two_models_are_two_parses(parsed: list[str]) -> None:
    cp.run("outdated", [SPEC, f"b={GATE}"], limit=1, out="two", cache="c.sqlite", progress=False)
    assert parsed == [SPEC, f"b={GATE}"]


def test_a_request_goes_through_parse_model_as_it_is() -> None:
    """Why no caller tests for a request first: ``parse_model`` returns one unchanged, the same object."""
    request = registry.parse_model(f"b={GATE}")
    assert registry.parse_model(request) is request
    assert (request.name, request.spec.raw) == ("b", GATE)
