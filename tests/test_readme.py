"""Every command in the README runs as written in a fresh shell, from the checkout.

The README's ``bash`` blocks are read as a newcomer reads them. Each command must name a program
a fresh shell finds (``./setup.sh``, ``.venv/bin/chronoprobe``, ``.venv/bin/python``: nothing that
needs an activated environment), every ``chronoprobe`` command must be a known command with
known options (a renamed flag fails here), and the cheap ones (``models``, ``snapshot list``,
``catalogue templates``, ``results``, ``card``, ``compare``) really run, in a shell whose PATH has no ``.venv``.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CHRONOPROBE = ".venv/bin/chronoprobe"
FRESH_SHELL_PROGRAMS = ("./setup.sh", CHRONOPROBE, ".venv/bin/python")
CHEAP = {("models",), ("snapshot", "list"), ("catalogue", "templates"), ("results",), ("card",), ("compare",)}
"""Commands that need no model: run for real on a small results folder."""


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.M | re.S)


def readme_commands() -> list[list[str]]:
    """Each command of the README's bash blocks as words: continuations joined, comments dropped,
    a ``<placeholder>`` kept as one word and a trailing ``...`` (more options) left out."""
    commands = []
    for block in _blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"<[^<>]*>", lambda m: m.group(0).replace(" ", "_"), line)
            words = [w for w in shlex.split(line, comments=True) if w != "..."]
            if words:
                commands.append(words)
    return commands


COMMANDS = readme_commands()


def _command(path: list[str]) -> object:
    import typer.main

    from chronoprobe.cli.main import _register, app

    _register()
    command: object = typer.main.get_command(app)
    for name in path:
        children = getattr(command, "commands", None)
        assert children is not None and name in children, f"`chronoprobe {' '.join(path)}`: no such command"
        command = children[name]
    return command


def _split(words: list[str]) -> tuple[list[str], list[str]]:
    """``chronoprobe`` words -> (the command path, its arguments)."""
    import typer.main

    from chronoprobe.cli.main import _register, app

    _register()
    command: object = typer.main.get_command(app)
    path: list[str] = []
    rest = list(words)
    while rest and rest[0] in (getattr(command, "commands", None) or {}):
        path.append(rest.pop(0))
        command = command.commands[path[-1]]  # type: ignore[attr-defined]
    return path, rest


def test_the_readme_opens_with_setup_the_check_one_question_and_the_tests() -> None:
    """``chronoprobe check`` is the first command after setup; the lens commands ask one question in depth."""
    first = [" ".join(words) for words in readme_commands()[:4]]
    assert first == [
        "./setup.sh",
        f"{CHRONOPROBE} check",
        f"{CHRONOPROBE} outdated run",
        ".venv/bin/python -m pytest -q",
    ]


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w)[:60] for w in COMMANDS])
def test_every_command_runs_in_a_fresh_shell_and_is_known(words: list[str]) -> None:
    assert words[0] in FRESH_SHELL_PROGRAMS, f"{words[0]!r} is not found in a fresh shell: spell it {CHRONOPROBE}"
    if words[0] != CHRONOPROBE:
        assert (REPO / words[0]).is_file() or words[0].startswith(".venv/"), words[0]
        return
    path, rest = _split(words[1:])
    command = _command(path)
    assert not getattr(command, "commands", None), f"`chronoprobe {' '.join(path)}` needs a subcommand"
    context = command.make_context(  # type: ignore[attr-defined]
        " ".join(["chronoprobe", *path]), ["--help"], resilient_parsing=True
    )
    parser = command.make_parser(context)  # type: ignore[attr-defined]
    _, extra, _ = parser.parse_args(rest)  # an unknown or renamed option raises here
    assert extra == [], f"`chronoprobe {' '.join(path)}`: unexpected {extra}"


def test_the_python_block_uses_the_public_api() -> None:
    import chronoprobe as cp

    [block] = _blocks("python")
    tree = ast.parse(block)
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and getattr(n.value, "id", "") == "cp"}
    assert used and used <= set(cp.__all__), used - set(cp.__all__)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out like the checkout for these commands: ``.venv`` and a ``results/`` with three runs (two of
    them the ones ``compare`` names)."""
    import chronoprobe as cp

    venv = REPO / ".venv"
    if not (venv / "bin" / "chronoprobe").is_file():
        pytest.skip(f"no {venv}/bin/chronoprobe: run ./setup.sh first")
    folder = tmp_path_factory.mktemp("checkout")
    (folder / ".venv").symlink_to(venv)
    for name, out in (("paris", "paris-run"), ("smollm2", "smollm2"), ("qwen", "qwen")):  # compare names the last two
        cp.run(
            "outdated",
            f"{name}=mock:constant={'Paris' if name == 'paris' else name}",
            limit=2,
            out=folder / "results" / "outdated" / out,
            cache=folder / "calls.sqlite",
            progress=False,
        )
    return folder


CHEAP_COMMANDS = [w for w in COMMANDS if w[0] == CHRONOPROBE and tuple(_split(w[1:])[0]) in CHEAP]


def test_the_readme_has_cheap_commands_to_run() -> None:
    assert {tuple(_split(w[1:])[0]) for w in CHEAP_COMMANDS} == CHEAP


@pytest.mark.parametrize("words", CHEAP_COMMANDS, ids=[" ".join(w) for w in CHEAP_COMMANDS])
def test_the_cheap_commands_run_as_written(words: list[str], checkout: Path) -> None:
    fresh = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",  # no .venv/bin: nothing is activated
        "HOME": os.environ.get("HOME", str(checkout)),
        "CHRONOPROBE_HOME": os.environ["CHRONOPROBE_HOME"],  # the tests' private home (conftest)
        "COLUMNS": "80",
    }
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", shlex.join(words)],
        cwd=checkout,
        env=fresh,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "…" not in done.stdout  # 80 columns, nothing cut
    if "--out" in words:
        assert (checkout / words[words.index("--out") + 1]).is_file()
