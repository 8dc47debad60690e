"""Every table-printing command at 80 columns (CI logs and pipes): ``compare`` (one pair and two check folders of two
models each), ``history``, ``results``, ``check``'s summary, ``snapshot list`` and ``models``. No line is longer
than 80, and no word is broken inside: every word printed at 80 columns is a word the same command prints at 1,000
(the closing line that names the columns left out, and the short headers, aside). The folders are named as a user
in them names them: relative, as a path longer than the terminal cannot be shown whole."""

from __future__ import annotations

import re

import pytest
from world import World, register_knower

import chronoprobe as cp
from chronoprobe.cli import console as cli_console
from chronoprobe.reports.compare_output import SHORT
from chronoprobe.testing import unregister_mock
from cli_driver import Ran, run_main

pytestmark = pytest.mark.e2e

_RULES = re.compile(r"[│┃┏┓┗┛┡┩┣┫┳┻╇╋━─┼┬┴└┘┌┐╭╮╯╰]")
LEFT_OUT = "Left out to fit"


@pytest.fixture(scope="module")
def checks(tmp_path_factory: pytest.TempPathFactory):
    """Two quick checks of the same two mock models, on one call cache."""
    world = World()
    register_knower("half", world, every=2)
    register_knower("third", world, every=3)
    root = tmp_path_factory.mktemp("eighty")
    for name in ("one", "two"):
        cp.check(["mock:half", "mock:third"], out=root / name, cache=root / "calls.sqlite")
    yield root
    unregister_mock("half")
    unregister_mock("third")


@pytest.fixture
def here(checks, monkeypatch):
    """In the checks' folder: every command names them from there."""
    monkeypatch.chdir(checks)
    return checks


def _at(width: int, monkeypatch, capsys, *args: str) -> Ran:
    with monkeypatch.context() as patched:
        # The stored width, not the `width` property: undoing a patch of the property would store the width it
        # computed before (80 off a terminal), and every later test in the process would print at 80 columns.
        patched.setattr(cli_console.console, "_width", width)
        ran = run_main(patched, capsys, *args, columns=width)
    assert ran.code == 0, ran.text
    return ran


def _words(text: str) -> set[str]:
    said = (line for line in text.splitlines() if LEFT_OUT not in line and "to fit" not in line)
    return {word for line in said for word in _RULES.sub(" ", line).split()}


def _fits(monkeypatch, capsys, *args: str, reference: int = 1000) -> str:
    narrow = _at(80, monkeypatch, capsys, *args).text
    whole = _at(reference, monkeypatch, capsys, *args).text
    too_long = [line for line in narrow.splitlines() if len(line) > 80]
    assert not too_long, (args, too_long)
    broken = _words(narrow) - _words(whole) - _words(" ".join(SHORT.values()))
    assert not broken, (args, sorted(broken))
    return narrow


def test_compare_leads_with_sentences_and_its_table_fits_80_columns(here, monkeypatch, capsys) -> None:
    shown = _fits(monkeypatch, capsys, "compare", "one/outdated")
    first_table_line = next(i for i, line in enumerate(shown.splitlines()) if line.startswith("┏"))
    before = "\n".join(shown.splitlines()[:first_table_line])
    assert "gives a current answer on 16 fewer of 130 facts" in " ".join(before.split())
    assert "cannot tell" in before
    table = shown.split("┏")[1]
    assert "up-to-date" in table and "(soft" in table and "soft_constraint_pct" not in table  # readable names
    assert f"{LEFT_OUT} 80 columns: " in shown and "--wide shows them" in shown


def test_compare_wide_draws_todays_whole_table(here, monkeypatch, capsys) -> None:
    wide = _at(80, monkeypatch, capsys, "compare", "one/outdated", "--wide").out
    assert "soft_constraint_pct.up-to-date" in wide and "A only / B only" in wide and "McNemar" in wide
    assert max(len(line) for line in wide.splitlines()) > 80  # for the terminal to wrap, never squeezed


def test_two_check_folders_are_summarised_not_a_wall_of_pairs(here, monkeypatch, capsys) -> None:
    shown = _fits(monkeypatch, capsys, "compare", "one", "two")
    assert "24 pairs compared" in shown and "Every pair's table: --wide" in shown
    assert shown.count("┏") == 1  # one summary table, not 24
    assert "20 of the 24 pairs: no metric can tell the two apart." in shown
    assert len(shown.splitlines()) < 80


def test_history_results_check_snapshots_and_models_fit_80_columns(here, monkeypatch, capsys) -> None:
    history = _fits(monkeypatch, capsys, "history", "one", "--out", "history")
    assert "(43.8–60.7%)" in history and f"{LEFT_OUT} 80 columns: retrieved" in history
    # results lays its table out long below the width its one table needs: words checked against 79 columns, where
    # a word broken at 80 would break elsewhere
    _fits(monkeypatch, capsys, "results", "one", reference=79)
    check = ("check", "--model", "mock:half", "--model", "mock:third", "--out", "one", "--cache", "calls.sqlite")
    _at(1000, monkeypatch, capsys, *check)  # the check as the CLI names it, kept from then on: twice the same lines
    summary = _fits(monkeypatch, capsys, *check)
    assert "Freshness: of 130 time-sensitive facts" in summary
    _fits(monkeypatch, capsys, "snapshot", "list")
    models = _fits(monkeypatch, capsys, "models")
    assert "openai:gpt-4o@https://api.openai.com/v1" in models
