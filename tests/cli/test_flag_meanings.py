"""One meaning per flag: a flag name has one type and one help meaning in every command that takes it.

Read from the same option tables as ``test_option_tables.py`` (every command, generated or written):
two commands that share a flag must give it the same value type, the same repeatability and the
same switch-ness, and their help must carry the words :data:`chronoprobe.cli.options.MEANINGS`
gives it. A flag every command takes from one declaration (the model options) is the same by
construction. Older spellings 0.1.0 released, kept until 0.4.0 (hidden), are left out: they name the new flag.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import typer.main

from chronoprobe.cli.main import _register, app
from chronoprobe.cli.model_options import MODEL_OPTIONS
from chronoprobe.cli.options import MEANINGS
from cli_driver import run_main

EDIT_SET = (
    Path(__file__).resolve().parents[1]
    / "assets/editing_results/models_editing/editing_datasets/llama2-7b-chat/editing_dataset.json"
)

SHARED_DECLARATION = {"--" + name.replace("_", "-") for name in MODEL_OPTIONS} | {"--no-chat-template", "-m"}
ALIASES = {"recency eval"}
"""Commands that are another command under an older name (``recency run``): the same declaration."""


def _flags() -> dict[str, list[tuple[str, Any]]]:
    _register()
    found: dict[str, list[tuple[str, Any]]] = defaultdict(list)

    def walk(command: Any, path: list[str]) -> None:
        children = getattr(command, "commands", None)
        if children:
            for name, child in children.items():
                walk(child, [*path, name])
            return
        if " ".join(path) in ALIASES:
            return
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                for flag in param.opts:  # a --no-x belongs to its --x
                    found[flag].append((" ".join(path), param))

    walk(typer.main.get_command(app), [])
    return found


def _shape(param: Any) -> tuple[str, bool, bool]:
    annotation = param.type_descriptor.annotation
    name = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    return name, bool(param.multiple), bool(param.is_flag)


def test_a_shared_flag_has_one_type_everywhere() -> None:
    mixed = {
        flag: sorted({(_shape(p), command) for command, p in uses})
        for flag, uses in _flags().items()
        if len({_shape(p) for _, p in uses}) > 1
    }
    assert mixed == {}


def test_a_shared_flag_has_one_declared_meaning() -> None:
    flags = _flags()
    shared = {flag for flag, uses in flags.items() if len(uses) > 1} - SHARED_DECLARATION
    assert sorted(shared - set(MEANINGS)) == [], "a flag two commands take needs its one meaning in MEANINGS"
    assert sorted(set(MEANINGS) - set(flags)) == [], "a meaning for a flag no command takes"
    wrong = [
        (flag, command, param.help)
        for flag in sorted(shared | set(MEANINGS))
        for command, param in flags[flag]
        if MEANINGS[flag] not in " ".join((param.help or "").replace("\\[", "[").split())
    ]
    assert wrong == []


def test_the_renamed_meanings_have_their_own_names() -> None:
    """The meanings the rule split apart (issue 26 §5), each under its own name now."""
    flags = _flags()
    assert {c for c, _ in flags["--sample-seed"]} == {"recency run", "conflicts contexts"}
    assert {c for c, _ in flags["--only-model"]} == {"editing score", "history"}
    assert all(_shape(p)[0] == "bool" for _, p in flags["--aliases"])
    assert {c for c, _ in flags["--balanced-limit"]} == {"conflicts run", "conflicts contexts", "editing run"}


@pytest.mark.e2e
def test_an_older_spelling_0_1_released_still_works_until_0_4_0_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    run = ("editing", "run", "-m", "mock:constant=Joe Biden", "--dataset", str(EDIT_SET), "--method", "rag-gold")
    quick = ("--no-locality", "--no-fluency", "--cache", str(tmp_path / "c.sqlite"))
    old = run_main(monkeypatch, capsys, *run, *quick, "--limit", "1", "--out", str(tmp_path / "old"))
    assert old.code == 0, old.err
    assert "warning: --limit is deprecated and removed in 0.4.0; use --balanced-limit" in old.err
    new = run_main(monkeypatch, capsys, *run, *quick, "--balanced-limit", "1", "--out", str(tmp_path / "new"))
    assert new.code == 0 and "deprecated" not in new.err
    assert _facts(tmp_path / "old") == _facts(tmp_path / "new") == 1
    both = run_main(monkeypatch, capsys, *run, *quick, "--limit", "1", "--balanced-limit", "2")
    assert both.code == 2 and both.err.startswith("error: --limit/--balanced-limit: give --balanced-limit only")


@pytest.mark.e2e
@pytest.mark.parametrize(
    "given",
    [
        ("history", "results", "--model", "m"),  # --only-model, named --model before any release
        ("catalogue", "build", "heads_of_state", "--limit", "2"),  # --per-template, likewise
    ],
)
def test_an_older_spelling_no_release_had_is_refused(
    given: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    ran = run_main(monkeypatch, capsys, *given, "--out", str(tmp_path / "never"))
    assert ran.code == 2 and "No such option" in ran.err and given[-2] in ran.err, ran.err
    assert not (tmp_path / "never").exists()


def _facts(folder: Path) -> int:
    rows = [json.loads(line) for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    return len({row["fact_id"] for row in rows})


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("given", "refused"),
    [
        (("--seed", "3", "--template-seed", "0"), "--seed/--template-seed"),  # the new one at its default: still both
        (("--template-seed", "0", "--seed", "3"), "--seed/--template-seed"),  # in either order
        (("--prompts", "a.json", "--wording", "b.json"), "--prompts/--wording"),
    ],
)
def test_an_older_and_a_newer_spelling_with_different_values_are_refused_never_resolved(
    given: tuple[str, ...],
    refused: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    out = tmp_path / "never"
    ran = run_main(
        monkeypatch, capsys, "editing", "run", "-m", "mock:echo", "--dataset", str(EDIT_SET), *given, "--out", str(out)
    )
    lines = ran.err.strip().splitlines()
    assert ran.code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {refused}: give"), ran.err
    assert not out.exists()


@pytest.mark.e2e
def test_an_older_and_a_newer_spelling_with_one_value_are_taken_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    run = ("editing", "run", "-m", "mock:constant=Joe Biden", "--dataset", str(EDIT_SET), "--method", "rag-gold")
    quick = ("--no-locality", "--no-fluency", "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "r"))
    same = run_main(monkeypatch, capsys, *run, *quick, "--limit", "1", "--balanced-limit", "1")
    assert same.code == 0 and "warning: --limit is deprecated" in same.err, same.err
