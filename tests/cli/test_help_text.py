"""Every command's --help: literal brackets survive rich markup, and no Python type stands in for a value."""

from __future__ import annotations

import re
import sys

import pytest

from chronoprobe.cli.main import _register, app, main

pytestmark = pytest.mark.e2e


def _commands() -> list[list[str]]:
    import typer.main

    _register()
    found: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        children = getattr(command, "commands", None)
        if children:
            for name, child in children.items():
                walk(child, [*path, name])
        else:
            found.append(path)

    walk(typer.main.get_command(app), [])
    return found


def _params(path: list[str]) -> list[object]:
    import typer.main

    command: object = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return list(command.params)  # type: ignore[attr-defined]


def _help(path: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *path, "--help"])
    capsys.readouterr()
    try:
        main()
    except SystemExit as stopped:
        assert stopped.code in (0, None)
    return " ".join(capsys.readouterr().out.replace("│", " ").split())


COMMANDS = _commands()


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_help_keeps_brackets_and_shows_no_python_types(
    path: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(path, monkeypatch, capsys)
    assert "Usage:" in text
    assert "<bool>" not in text and "<list[" not in text, text
    for param in _params(path):
        written = getattr(param, "help", None) or ""
        for fragment in re.findall(r"\[[^\]\s]*\]", written.replace("\\[", "[")):
            assert fragment in text, f"{' '.join(path)} {param.name}: {fragment} is missing from the help"  # type: ignore[attr-defined]


def test_extras_and_revisions_are_printed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(["outdated", "run"], monkeypatch, capsys)
    for shown in ("pip install 'chronoprobe[ray]'", "pip install 'chronoprobe[quant]'", "hf:<id>[@rev]"):
        assert shown in text, shown
    assert "--chat-template --no-chat-template Apply" in text  # a flag shows no value placeholder


def test_python_dash_m_runs_the_same_command_line() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "chronoprobe", "outdated", "run", "--bogus"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stderr.startswith("error: No such option: --bogus")


def _raw_help(
    path: list[str], columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *path, "--help"])
    capsys.readouterr()
    try:
        main()
    except SystemExit as stopped:
        assert stopped.code in (0, None)
    return capsys.readouterr().out


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_help_at_80_columns_cuts_no_option_name(
    path: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every name and every word of every description survives whole, in lines of at most 80 columns."""
    text = _raw_help(path, 80, monkeypatch, capsys)
    assert "…" not in text, text
    assert max(len(line) for line in text.splitlines()) <= 80
    words = set(text.replace("│", " ").split())
    for param in _params(path):
        if getattr(param, "hidden", False):  # an older spelling kept until 0.4.0: not listed
            continue
        for name in [*param.opts, *param.secondary_opts]:  # type: ignore[attr-defined]
            if name.startswith("-"):
                assert name in words or f"{name}," in words, f"{' '.join(path)}: {name} is cut or missing"


def test_a_large_help_page_puts_each_description_under_its_option(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [line.strip("│ ") for line in _raw_help(["editing", "run"], 80, monkeypatch, capsys).splitlines()]
    at = lines.index("--serac-counterfactual <str>")
    assert lines[at + 1].startswith("Who answers SERAC*'s in-scope questions: base-with-context (the model")
    assert len(lines) < 120  # typer's table took 227 lines at this width
    wide = _raw_help(["editing", "run"], 250, monkeypatch, capsys)
    assert any("--serac-counterfactual" in line and "Who answers" in line for line in wide.splitlines())
