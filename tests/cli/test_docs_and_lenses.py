"""``chronoprobe docs`` and ``chronoprobe lenses``: the shipped pages, and every lens that can run with where it
comes from; no help text points at a ``docs/`` file a pip user does not have."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe import plugins
from chronoprobe.checkup.listing import LensEntry, budget_text
from chronoprobe.docs_pages import docs_folder, page_text, topics
from chronoprobe.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"


def test_the_package_ships_every_docs_page() -> None:
    """The package's docs are the checkout's: the same pages, word for word (the wheel copies them)."""
    assert topics() == sorted(p.stem for p in (REPO / "docs").glob("*.md"))
    assert page_text("check") == (REPO / "docs" / "check.md").read_text(encoding="utf-8")
    assert page_text("docs/check.md") == page_text("check")
    assert docs_folder().name == "docs"


def test_docs_prints_a_page_or_lists_them_and_names_the_topics_for_an_unknown_one() -> None:
    assert cp.produce("docs", topic="statistics") == page_text("statistics").rstrip("\n")
    listing = cp.produce("docs").splitlines()
    assert listing[0].split()[0] == "api" and len(listing) == len(topics()) + 1
    with pytest.raises(ConfigError, match=r"^docs topic 'nope': no such page; topics: api, architecture, "):
        cp.produce("docs", topic="nope")


def _help_texts() -> list[tuple[str, str]]:
    import typer.main

    from chronoprobe.cli.main import _register, app

    _register()
    found: list[tuple[str, str]] = []

    def walk(command: object, path: str) -> None:
        found.append((path, getattr(command, "help", None) or ""))
        found.extend((f"{path} {p.name}", getattr(p, "help", None) or "") for p in getattr(command, "params", []))
        for name, child in (getattr(command, "commands", None) or {}).items():
            walk(child, f"{path} {name}")

    walk(typer.main.get_command(app), "chronoprobe")
    return found


@pytest.mark.e2e  # every command's --help through main()
def test_no_help_text_points_at_a_docs_file_or_setup() -> None:
    """A pip user has no docs/ folder and no ./setup.sh: help names `chronoprobe docs TOPIC` instead."""
    stale = [(where, text) for where, text in _help_texts() if re.search(r"\bdocs/[\w-]+\.md|setup\.sh", text)]
    assert stale == []
    named = {m for _, text in _help_texts() for m in re.findall(r"chronoprobe docs ([\w-]+)", text)}
    assert named and named <= set(topics()), named - set(topics())


def test_lenses_lists_each_lens_with_its_data_budgets_and_origin() -> None:
    entries: list[LensEntry] = cp.produce("lenses")
    assert [e.name for e in entries] == ["outdated", "conflicts", "recency", "editing"]
    recency = entries[2]
    assert recency.question == "Does it know how fresh an answer must be?"
    assert recency.command == "chronoprobe recency eval"
    assert recency.origin == "built in (chronoprobe.lenses.recency.lens:RecencyLens)"
    assert recency.budgets.startswith("quick: sample 40, strategy zero-shot; standard: sample 200")


def test_budget_text_reads_each_budget() -> None:
    assert budget_text({}) == "no budgets (chronoprobe check skips it)"
    sizes = {"quick": {"limit": 2, "locality": False}, "full": {}}
    assert budget_text(sizes) == "quick: limit 2, locality false; standard: skipped; full: every item"


def test_lenses_lists_a_plug_in_with_its_distribution_and_one_that_fails_with_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    info = site / "toy_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n", encoding="utf-8")
    entries = f"[{plugins.ENTRY_POINT_GROUP}]\ntoy = toy_parts:FullToyLens\nbroken = no_such_module_here:Lens\n"
    (info / "entry_points.txt").write_text(entries, encoding="utf-8")
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.syspath_prepend(str(site))
    listed = {e.name: e for e in cp.produce("lenses")}
    assert listed["toy"].origin == "plug-in from toy-plugin 0.1 (toy_parts:FullToyLens)"
    assert listed["toy"].question == "Does it name a year?" and listed["toy"].budgets.startswith("quick: limit 2")
    assert listed["broken"].question == "" and "failed to import" in listed["broken"].problem


def test_off_a_terminal_the_commands_turn_tqdm_bars_off_and_leave_a_users_choice(monkeypatch) -> None:
    """transformers' GGUF conversion draws a tqdm bar, which a log receives as one line per refresh."""
    import io
    import os
    import sys

    from chronoprobe.cli import main as cli_main

    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a pipe, a CI log
    cli_main._quiet_libraries()
    assert os.environ["TQDM_DISABLE"] == "1"
    monkeypatch.setenv("TQDM_DISABLE", "0")  # the user's own setting wins
    cli_main._quiet_libraries()
    assert os.environ["TQDM_DISABLE"] == "0"
