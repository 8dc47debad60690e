"""Every command in the README runs as written in a fresh shell, from the checkout.

The README's ``bash`` blocks are read as a newcomer reads them. Each command must name a program
a fresh shell finds (``./setup.sh``, ``.venv/bin/chronoprobe``, ``.venv/bin/python``: nothing that
needs an activated environment), every ``chronoprobe`` command must be a known command with
known options (a renamed flag fails here), and the cheap ones (``models``, ``snapshot list``,
``catalogue templates``, ``results``, ``card``, ``compare``) really run, in a shell whose PATH has no ``.venv``.

The docs pages (``docs/*.md``) follow the same convention: every program of the environment is spelled
``.venv/bin/<program>``, every ``chronoprobe`` command (a synopsis's too) is known with known, current
options, every path into the checkout or ``../shared`` exists, and the cheap lines (those above and
mock-model runs with ``--limit``, on folders the test lays out) run as written.
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
CHEAP = {
    ("models",),
    ("snapshot", "list"),
    ("catalogue", "templates"),
    ("results",),
    ("card",),
    ("compare",),
    ("lenses",),
    ("docs",),
}
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
        ".venv/bin/python -m pytest -q --tier all -n 2",
    ]


@pytest.mark.e2e
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
    """A folder laid out like the checkout for these commands: ``.venv`` and a ``results/`` with four runs, named as
    runs without ``--out`` name theirs (``compare results/outdated/smollm2`` reads the latest ``smollm2-<timestamp>``)."""
    import chronoprobe as cp

    venv = REPO / ".venv"
    if not (venv / "bin" / "chronoprobe").is_file():
        pytest.skip(f"no {venv}/bin/chronoprobe: run ./setup.sh first")
    folder = tmp_path_factory.mktemp("checkout")
    (folder / ".venv").symlink_to(venv)
    stamped = (
        ("paris", "paris-run"),
        ("smollm2", "smollm2-20261201T090000Z"),  # an older run of the model: compare takes the latest
        ("smollm2", "smollm2-20261202T090000Z"),
        ("qwen", "qwen-20261202T100000Z"),
    )
    for name, out in stamped:
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


@pytest.mark.e2e
def test_the_readme_has_cheap_commands_to_run() -> None:
    assert {tuple(_split(w[1:])[0]) for w in CHEAP_COMMANDS} == CHEAP


@pytest.mark.e2e
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


# --- the docs pages: the README's convention, and their cheap commands run as written -----------------------

DOCS = sorted((REPO / "docs").glob("*.md"))
VENV_PROGRAMS = ("chronoprobe", "python", "pip", "inspect", "lm_eval", "ray")
"""Programs the checkout's environment installs: a doc spells them ``.venv/bin/<program>``, as the README does."""
_AT_COMMAND_START = re.compile(
    r"(?:^|[;|&]\s*|\$\(|#\s+)(\"?(?:[\w$./-]*/)?(?:" + "|".join(VENV_PROGRAMS) + r")\"?)(?=\s)"
)
SEPARATORS = {";", "|", "&&", "||"}
DOC_CHEAP = CHEAP | {("snapshot", "show")}


def doc_lines(page: Path) -> list[tuple[str, str]]:
    """(block language, line) of every line in the page's ``bash`` and unlabelled blocks, continuations
    joined; output and diagram lines (``error: ...``, box drawing) are not commands."""
    found = []
    text = page.read_text(encoding="utf-8")
    for language, block in re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.M | re.S):
        if language not in ("bash", ""):
            continue
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith(("error:", "#")) and not set(line) & set("│▼┌└─►"):
                found.append((language, line))
    return found


def _words(line: str) -> list[str]:
    line = re.sub(r"<[^<>]*>", lambda m: m.group(0).replace(" ", "_"), line)
    return [w for w in shlex.split(line, comments=True) if w != "..."]


def chronoprobe_commands(line: str, synopsis: bool) -> list[list[str]]:
    """The ``.venv/bin/chronoprobe`` commands of one line, split at ``;``, ``|``, ``&&``; redirections dropped.
    In a synopsis (an unlabelled block, or a line with ``[--``) ``[...]`` marks what is optional: its brackets
    are dropped, and ``--option ...`` stands for the option with a value."""
    if synopsis or "[--" in line:
        line = re.sub(r"(--[\w-]+)\]?\s+\.\.\.", r"\1 VALUE", line).replace("[", " ").replace("]", " ")
    commands: list[list[str]] = []
    current: list[str] = []
    words = _words(line)
    skip = False
    for word in [*words, ";"]:
        if skip:
            skip = False
        elif word in (">", ">>", "<", "2>"):
            skip = True
        elif word in SEPARATORS:
            if current and current[0] == CHRONOPROBE:
                commands.append(current)
            current = []
        else:
            current.append(word)
    return commands


DOC_LINES = [(page, language, line) for page in DOCS for language, line in doc_lines(page)]
DOC_COMMANDS = [
    (page, line, words)
    for page, language, line in DOC_LINES
    for words in chronoprobe_commands(line, synopsis=language == "")
]


def test_the_docs_have_commands() -> None:
    assert len(DOC_COMMANDS) > 60 and {page.name for page, _, _ in DOC_COMMANDS} >= {"check.md", "card.md"}


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_every_docs_command_is_spelled_as_the_readme_spells_it(page: Path) -> None:
    """No bare ``chronoprobe``, ``python``, ``pip`` ...: they need an activated environment."""
    bare = [
        line.strip()
        for _, line in doc_lines(page)
        for program in _AT_COMMAND_START.findall(line)
        if not program.strip('"').endswith(f".venv/bin/{program.strip(chr(34)).rsplit('/', 1)[-1]}")
    ]
    assert bare == [], f"{page.name}: spell these {CHRONOPROBE} (or .venv/bin/<program>): {bare}"


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("page", "line", "words"), DOC_COMMANDS, ids=[f"{p.name}: {' '.join(w[1:])[:50]}" for p, _, w in DOC_COMMANDS]
)
def test_every_docs_command_is_known(page: Path, line: str, words: list[str]) -> None:
    path, rest = _split(words[1:])
    command = _command(path)
    assert not getattr(command, "commands", None), f"{page.name}: `{line}` needs a subcommand"
    context = command.make_context(  # type: ignore[attr-defined]
        " ".join(["chronoprobe", *path]), ["--help"], resilient_parsing=True
    )
    parser = command.make_parser(context)  # type: ignore[attr-defined]
    given, extra, _ = parser.parse_args(rest)  # an unknown or renamed option raises here
    assert extra == [], f"{page.name}: `{line}`: unexpected {extra}"
    old = [name for name in given if name.startswith("deprecated_")]  # cli/deprecated.py's hidden spellings
    assert old == [], f"{page.name}: `{line}` uses a deprecated option ({old})"


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_the_files_a_docs_command_names_exist(page: Path) -> None:
    """A path into the checkout or ../shared (``tests/assets/...``, ``../shared/data/...``) is not stale."""
    named = [
        word.split("=", 1)[-1]
        for _, line in doc_lines(page)
        for word in _words(line)
        if re.match(r"^(\w+=)?(\.\./shared|tests|examples|scripts|benchmarks)/", word)
    ]
    shared = (REPO / "../shared").is_dir()  # a checkout without it (CI's): its paths cannot be checked here
    missing = [path for path in named if not (REPO / path).exists() and (shared or not path.startswith("../shared"))]
    assert missing == [], f"{page.name}: no such file in the checkout: {missing}"


def _is_cheap(words: list[str], checkout: Path) -> bool:
    """Cheap (no model but a mock, small) and runnable in the test checkout: what the command reads is there."""
    path, rest = _split(words[1:])
    if any(re.search(r"<|\b[A-Z]{1,}\b(?![-=])", w) for w in rest if not w.startswith("-")):
        return False  # a placeholder: DIR, OUT, X, <name>
    mock_run = path[-1:] == ["run"] and any(w.startswith("mock:") for w in rest) and "--limit" in rest
    if tuple(path) not in DOC_CHEAP and not mock_run:
        return False
    command = _command(path)
    context = command.make_context(  # type: ignore[attr-defined]
        " ".join(["chronoprobe", *path]), ["--help"], resilient_parsing=True
    )
    given, _, _ = command.make_parser(context).parse_args(rest)  # type: ignore[attr-defined]
    arguments = [p.name for p in command.params if p.param_type_name == "argument"]  # type: ignore[attr-defined]
    named = [value for name in arguments for value in given.get(name) or ()]
    return all((checkout / path).exists() for path in named)


def _write_generations(folder: Path) -> Path:
    """One fact's generations in DyKnow's layout (an ``outdated score`` input)."""
    import json

    prompts = {"generic": "The head of state of Italy is", "contextualized": "The President of Italy is"}
    answers = {key: f"{prompt} Sergio Mattarella" for key, prompt in prompts.items()}
    folder.mkdir(parents=True)
    data = {"Italy": {"President of Italy": {"questions": prompts, "answers": answers}}}
    (folder / "countries_byGDP_answers.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def docs_checkout(checkout: Path) -> Path:
    """The README's checkout, with what the docs' cheap commands read: a recency run, a second outdated run
    (``runs/qwen/outdated``) and scored generations (``scored/gpt2-xl``)."""
    import chronoprobe as cp

    cache = checkout / "calls.sqlite"
    cp.run(
        "recency",
        "echo=mock:echo",
        data=REPO / "tests" / "assets" / "recency_sample.json",
        sample=12,
        out=checkout / "results" / "recency" / "echo-run",
        cache=cache,
        progress=False,
    )
    cp.run(
        "outdated", "qwen=mock:constant=Rome", limit=2, out=checkout / "runs/qwen/outdated", cache=cache, progress=False
    )
    cp.produce(
        "outdated.score",
        generations=_write_generations(checkout / "generations" / "gpt2-xl"),
        out=checkout / "scored" / "gpt2-xl",
        progress=False,
    )
    return checkout


@pytest.mark.e2e
def test_the_cheap_docs_commands_run_as_written(docs_checkout: Path) -> None:
    """Each line whose every command is cheap runs, as written, in a fresh shell (a synopsis with ``[...]``
    or a placeholder is not written to run)."""
    fresh = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",  # no .venv/bin: nothing is activated
        "HOME": os.environ.get("HOME", str(docs_checkout)),
        "CHRONOPROBE_HOME": os.environ["CHRONOPROBE_HOME"],  # the tests' private home (conftest)
        "COLUMNS": "80",
    }
    ran: list[str] = []
    for page, language, line in DOC_LINES:
        commands = chronoprobe_commands(line, synopsis=False)
        synopsis = language == "" and "[" in line
        if synopsis or not commands or not all(_is_cheap(words, docs_checkout) for words in commands):
            continue
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", line],
            cwd=docs_checkout,
            env=fresh,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, f"{page.name}: `{line}`\n{done.stderr[-2000:]}"
        assert "…" not in done.stdout, f"{page.name}: `{line}` cut a cell in 80 columns"
        ran.append(f"{page.name}: {' '.join(_words(line))}")
    assert len(ran) >= 10, ran
    assert {entry.split(":")[0] for entry in ran} >= {
        "backends.md",
        "card.md",
        "harnesses.md",
        "knowledge.md",
        "outdated.md",
    }
