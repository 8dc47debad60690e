"""Small real result folders of every lens, written by the real commands on mock models (seconds).

Built once per session in a temporary folder with its own call cache; the fixture hands
out read-only paths, so a test that needs to change a folder copies it first.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.cli.main import main
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def dated_answers(prompt: MockPrompt, params: DecodingParams) -> str:
    """Up to date on Italy's president, outdated on the US president, irrelevant elsewhere."""
    asked = prompt.request
    if "Italy" in asked:
        return "Sergio Mattarella"
    if "United States" in asked:
        return "Donald Trump"
    return "Paris"


EDITED = ("Giorgia Meloni", "Joe Biden", "Xi Jinping")
"""The current holders of the facts the editing run edits (the audit's not-up-to-date ones)."""


def edited_answers(prompt: MockPrompt, params: DecodingParams) -> str:
    """The first current holder the prompt names (a passage, a demonstration), else the audit's answers."""
    found = [(prompt.find(name), name) for name in EDITED if name in prompt]
    return min(found)[1] if found else dated_answers(prompt, params)


def _cli(*args: str) -> None:
    saved = sys.argv
    sys.argv = ["chronoprobe", *args]
    try:
        main()
    except SystemExit as stopped:
        if stopped.code not in (0, None):
            raise AssertionError(f"chronoprobe {' '.join(args)} exited with {stopped.code}") from None
    finally:
        sys.argv = saved


def _leaf(prompts: dict[str, str], answers: dict[str, str]) -> dict[str, dict[str, str]]:
    return {"questions": prompts, "answers": {k: prompts[k] + " " + answers[k] for k in prompts}}


def write_generations(folder: Path) -> Path:
    """Another tool's generations in the DyKnow layout, for ``outdated score``."""
    folder.mkdir(parents=True)
    prompts = {
        "generic": "The head of state of Italy is",
        "contextualized": "The President of Italy is",
        "rephrased_1": "Italy's president is",
        "rephrased_2": "Italy is headed by",
    }
    answers = {
        "generic": "Sergio Mattarella",
        "contextualized": "Sergio Mattarella",
        "rephrased_1": "Giorgio Napolitano",
        "rephrased_2": "Sergio Mattarella",
    }
    data = {"Italy": {"President of Italy": _leaf(prompts, answers)}}
    (folder / "countries_byGDP_answers.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def run_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """``outdated`` (two models), ``score`` (outdated score), ``dynamicqa`` and ``mulan`` (conflicts),
    ``recency``; all under one parent folder, ``root``. Beside it, ``editing``: two prompt methods on the
    facts the outdated run's ``dated`` model got wrong."""
    base = tmp_path_factory.mktemp("runs")
    root = base / "results"
    cache = str(base / "calls.sqlite")
    register_mock("card-dated", dated_answers)
    register_mock("card-editor", edited_answers, chat_template=True)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("CHRONOPROBE_HOME", str(base / "home"))
            _cli(
                "outdated",
                "run",
                "--model",
                "dated=mock:card-dated",
                "--model",
                "paris=mock:constant=Paris",
                "--limit",
                "4",
                "--cache",
                cache,
                "--out",
                str(root / "outdated"),
            )
            _cli(
                "outdated",
                "score",
                "--generations",
                str(write_generations(base / "gen" / "other-model")),
                "--out",
                str(root / "score"),
            )
            _cli(
                "conflicts",
                "run",
                "dynamicqa",
                "--data",
                str(ASSETS / "dynamicqa_small"),
                "--balanced-limit",
                "3",
                "--samples",
                "2",
                "--judge",
                "exact",
                "--model",
                "echo=mock:echo",
                "--model",
                "paris=mock:constant=Paris",
                "--cache",
                cache,
                "--out",
                str(root / "conflicts" / "dynamicqa"),
            )
            _cli(
                "conflicts",
                "run",
                "mulan",
                "--data",
                str(ASSETS / "mulan_queries.jsonl"),
                "--aliases-file",
                str(ASSETS / "mulan_aliases.jsonl"),
                "--templates",
                str(ASSETS / "mulan_templates.json"),
                "--balanced-limit",
                "3",
                "--judge",
                "exact",
                "--model",
                "echo=mock:echo",
                "--cache",
                cache,
                "--out",
                str(root / "conflicts" / "mulan"),
            )
            _cli(
                "recency",
                "eval",
                "--data",
                str(ASSETS / "recency_sample.json"),
                "--sample",
                "12",
                "--model",
                "echo=mock:echo",
                "--model",
                "paris=mock:constant=Paris",
                "--cache",
                cache,
                "--out",
                str(root / "recency"),
            )
            dataset = base / "editing_dataset.json"
            _cli(
                "editing",
                "dataset",
                "--from",
                str(root / "outdated"),
                "--model",
                "dated",
                "--select",
                "not-up-to-date",
                "--out",
                str(dataset),
            )
            _cli(
                "editing",
                "run",
                "--dataset",
                str(dataset),
                "--model",
                "dated=mock:card-editor",
                "--method",
                "rag-gold,ike-null",
                "--no-locality",
                "--cache",
                cache,
                "--out",
                str(base / "editing"),
            )
    finally:
        unregister_mock("card-dated")
        unregister_mock("card-editor")
    yield {
        "root": root,
        "outdated": root / "outdated",
        "score": root / "score",
        "dynamicqa": root / "conflicts" / "dynamicqa",
        "mulan": root / "conflicts" / "mulan",
        "recency": root / "recency",
        "editing": base / "editing",
    }
