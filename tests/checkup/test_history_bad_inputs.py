"""``chronoprobe history`` over odd folders: a bad one is one line naming it, exit 2 and the tree untouched;
an odd one that still holds audits (a damaged check.json, a symlink loop, thousands of other entries, two
models under one name) is read, says what it skipped, and writes only its ``--out`` folder.

``{tmp}/check`` is a check of ``a=mock:constant=Paris`` (outdated lens); ``{tmp}/paris``, ``{tmp}/rome``
and ``{tmp}/again`` are ``outdated run`` folders of ``a=mock:constant=Paris``, ``a=mock:constant=Rome`` (another
model, the same name) and ``b=mock:constant=Paris`` (the first model, another name); ``{tmp}/recency`` a
recency run.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from chronoprobe.cli.main import main
from cli_driver import changes, run_main, tree_state

pytestmark = pytest.mark.e2e

RUNS = {
    "check": "check -m a=mock:constant=Paris --lens outdated",
    "paris": "outdated run -m a=mock:constant=Paris --limit 2",
    "rome": "outdated run -m a=mock:constant=Rome --limit 2",
    "again": "outdated run -m b=mock:constant=Paris --limit 2",
    "recency": "recency eval -m mock:constant=Paris --sample 5",
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("audits")
    with pytest.MonkeyPatch.context() as patch:
        for name, command in RUNS.items():
            argv = [*shlex.split(command), "--out", str(root / name), "--cache", str(root / "calls.sqlite")]
            patch.setattr(sys, "argv", ["chronoprobe", *argv])
            try:
                main()
            except SystemExit as stopped:
                assert stopped.code in (0, None), argv
    return root


def _write(name: str, text: str) -> Callable[[Path], None]:
    def damage(tmp: Path) -> None:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")

    return damage


def _loop(tmp: Path) -> None:
    """``{tmp}/loop`` holds the Paris run and two links back up: to itself and to its parent's parent."""
    (tmp / "loop" / "x").mkdir(parents=True)
    shutil.copytree(tmp / "paris", tmp / "loop" / "x" / "paris")
    (tmp / "loop" / "self").symlink_to("../loop")
    (tmp / "loop" / "x" / "up").symlink_to("..")


def _both(tmp: Path) -> None:
    """``{tmp}/both``: the check, its audit damaged, beside the Paris run."""
    (tmp / "both").mkdir()
    shutil.copytree(tmp / "check", tmp / "both" / "check")
    shutil.copytree(tmp / "paris", tmp / "both" / "paris")
    (tmp / "both" / "check" / "outdated" / "run.json").write_text("{not json")


def _crowd(tmp: Path) -> None:
    """``{tmp}/crowd``: the Paris run among 3,000 empty folders and 2,000 files."""
    crowd = tmp / "crowd"
    shutil.copytree(tmp / "paris", crowd / "paris")
    for index in range(3000):
        (crowd / f"folder-{index:04d}").mkdir()
    for index in range(2000):
        (crowd / f"file-{index:04d}.txt").write_text("x")


@dataclass(frozen=True)
class Case:
    name: str
    argv: str
    expected: str
    """Text the error line must contain (bad), or the output must contain (read)."""
    damage: Callable[[Path], object] | None = None


BAD: list[Case] = [
    Case("not-a-result-folder", "history {tmp}/mine", "{tmp}/mine: not a chronoprobe result folder"),
    Case("empty-folder", "history {tmp}/folder", "{tmp}/folder: not a chronoprobe result folder"),
    Case("a-file", "history {tmp}/notes.txt", "{tmp}/notes.txt: is a file"),
    Case("missing", "history {tmp}/nope", "{tmp}/nope: no such folder"),
    Case("no-outdated-run", "history {tmp}/recency", "holds no outdated run"),
    Case(
        "only-audit-damaged",
        "history {tmp}/check",
        "{tmp}/check/outdated/run.json: is not valid JSON",
        _write("check/outdated/run.json", "{not json"),
    ),
    Case(
        "only-audit-of-no-lens",
        "history {tmp}/check",
        "{tmp}/check/outdated/run.json",
        _write("check/outdated/run.json", '{"lens": 3}'),
    ),
    Case(
        "a-damaged-audit-beside-a-good-one-named-alone",
        "history {tmp}/check {tmp}/paris",
        "{tmp}/check/outdated/run.json: is not valid JSON",
        _write("check/outdated/run.json", "{not json"),
    ),
    Case("only-model-unknown", "history {tmp}/paris --only-model nobody", "'nobody' in none of these runs"),
    Case("out-user-folder", "history {tmp}/paris --out {tmp}/mine", "does not hold an earlier chronoprobe report"),
    Case("out-file", "history {tmp}/paris --out {tmp}/notes.txt", "--out {tmp}/notes.txt: is a file"),
    Case("out-is-input", "history {tmp}/paris --out {tmp}/paris", "is the DIR input"),
    Case("out-inside-input", "history {tmp}/check --out {tmp}/check/history", "lies inside the DIR input"),
    Case("out-of-another-kind", "history {tmp}/paris --out {tmp}/rome", "holds a report from `outdated run`"),
]

READ: list[Case] = [
    Case(
        "check-json-damaged",
        "history {tmp}/check",
        "│ a     │ dyknow-2023-12-18",
        _write("check/check.json", "{not json"),
    ),
    Case("one-name-two-models", "history {tmp}/paris {tmp}/rome", "a (mock:constant=Rome)"),
    # one model under two names, both audits on one snapshot: one history, no change of a snapshot into itself
    Case("one-model-two-names", "history {tmp}/paris {tmp}/again", "history: {tmp}/out/history.md"),
    Case("symlink-loop", "history {tmp}/loop", "history: {tmp}/out/history.md", _loop),
    Case("thousands-of-entries", "history {tmp}/crowd", "skipped 3,000 folder(s) under {tmp}/crowd", _crowd),
    Case(
        "a-damaged-audit-beside-a-good-one",
        "history {tmp}/both",
        "warning: skipped {tmp}/both/check/outdated/run.json: is not valid JSON",
        _both,
    ),
]


def _prepare(tmp: Path, finished: Path) -> None:
    for name in RUNS:
        shutil.copytree(finished / name, tmp / name)
    (tmp / "notes.txt").write_text("my own notes\n")
    (tmp / "folder").mkdir()
    (tmp / "mine" / "drafts").mkdir(parents=True)
    (tmp / "mine" / "thesis.tex").write_text("\\section{Mine}\n")


def _run(
    case: Case, finished: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str, dict[str, str]]:
    monkeypatch.chdir(tmp)
    _prepare(tmp, finished)
    if case.damage is not None:
        case.damage(tmp)
    argv = shlex.split(case.argv.replace("{tmp}", str(tmp)))
    if "--out" not in argv:
        argv += ["--out", str(tmp / "out")]
    before = tree_state(tmp)
    ran = run_main(monkeypatch, capsys, *argv, columns=200)
    return ran.code, ran.text, case.expected.replace("{tmp}", str(tmp)), before


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in BAD])
def test_a_bad_history_input_is_one_line_and_touches_nothing(case, finished, tmp_path, monkeypatch, capsys) -> None:
    code, err, expected, before = _run(case, finished, tmp_path, monkeypatch, capsys)
    lines = [line for line in err.splitlines() if line.strip()]  # nothing on stdout either
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert expected in lines[0], lines[0]
    assert changes(before, tree_state(tmp_path)) == []


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in READ])
def test_an_odd_folder_of_audits_is_read_and_only_out_written(case, finished, tmp_path, monkeypatch, capsys) -> None:
    code, err, expected, before = _run(case, finished, tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert expected in err, err
    assert "Traceback" not in err
    assert {line.split(":")[0] for line in changes(before, tree_state(tmp_path))} <= {
        "out",
        *(f"out/history.{suffix}" for suffix in ("md", "json", "png", "svg")),
        "out/.chronoprobe-run",
    }


def test_two_models_of_one_name_are_two_histories_and_one_model_of_two_names_one(
    finished, tmp_path, monkeypatch, capsys
) -> None:
    _prepare(tmp_path, finished)
    for runs, out in ((("paris", "rome"), "two"), (("paris", "again"), "one")):
        args = ["history", *(str(tmp_path / r) for r in runs), "--out", str(tmp_path / out)]
        assert run_main(monkeypatch, capsys, *args).code == 0
    two = json.loads((tmp_path / "two" / "history.json").read_text())
    one = json.loads((tmp_path / "one" / "history.json").read_text())
    assert [p["spec"] for p in two["points"]] == ["mock:constant=Paris", "mock:constant=Rome"]
    assert two["changes"] == []  # never compared with each other
    assert sorted(p["name"] for p in one["points"]) == ["a", "b"]
    assert one["changes"] == []  # one model, both audits on one snapshot: nothing changed between them (issue 43)
