"""The lens contract: a small core every lens gives, and optional parts the features that read them define.

A lens must give only the core (``load``, ``run``, ``summarise``, ``report``); a
plug-in written for 0.2.0, which declared its card and check members on the lens itself, still works with one
warning until 0.4.0."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

import chronoprobe as cp
from chronoprobe.contract.check_part import NO_CHECK, CheckContext, ItemUnits, RecordClasses, check_part
from chronoprobe.contract.lens import LENSES, Lens, lens_class
from chronoprobe.contract.released_hooks import RELEASED_MEMBERS
from chronoprobe.contract.sizing import Sizing
from chronoprobe.lenses.outdated.audit import AuditConfig
from chronoprobe.records.runlog import Summary
from chronoprobe.reports.lens_card import CardPart, card_of
from chronoprobe.version import SHIMS_REMOVED_IN
from toy_lens import QUESTIONS, ToyConfig, ToyLens

SUMMARY = Summary(lens="toy", models=["m"], headline={})


def test_a_lens_must_give_only_the_core() -> None:
    core = {"load", "run", "summarise", "report"}
    assert Lens.__abstractmethods__ == core
    assert not set(RELEASED_MEMBERS) & set(vars(Lens))  # the parts' fields are no members of the lens


def test_a_lens_without_parts_has_an_empty_card_and_no_check_sizes() -> None:
    card = card_of(ToyLens)
    assert (card.question, card.about, card.by_group, card.sentences(SUMMARY, "m")) == ("", "", None, [])
    assert card_of(object) == CardPart("")  # a class that is no lens at all: nothing to read either
    check = check_part(ToyLens)
    assert (check.sizes, check.needs, check.sizing, check.metric_patterns) == ({}, (), None, ())
    assert check.options(CheckContext(ToyConfig())) == {}
    lens = ToyLens(ToyConfig())
    assert not isinstance(lens, ItemUnits) and not isinstance(lens, RecordClasses)


def test_the_outdated_lens_tells_its_items_and_classes_before_the_run() -> None:
    lens = lens_class("outdated")(AuditConfig(limit=3))
    assert isinstance(lens, ItemUnits) and isinstance(lens, RecordClasses)
    units, classes = lens.item_units(), lens.record_classes()
    assert units is not None and len(units) == 3
    assert classes is not None and classes[0] == "all" and len(classes) >= 2


def _released_lens() -> type[Any]:
    """A plug-in's lens as 0.2.0 documented it: its card and check members on the lens itself."""

    class Released(ToyLens):  # type: ignore[misc]  # tests/toy_lens.py is imported by file name, untyped here
        question = "Does it name a year?"
        about = "Years in answers."
        card_by_group: ClassVar[tuple[str, str]] = ("year_pct", "Years per group")
        sizes: ClassVar[dict[str, dict[str, Any]]] = {"quick": {"limit": 2}}
        needs = ("outdated",)
        sizing = Sizing(metric="year_pct", option="limit", unit="questions")
        metric_patterns = ("year_pct",)

        @classmethod
        def plain_words(cls, summary: Summary, model: str) -> list[str]:
            return [f"{cls.name} about {model}"]

        @classmethod
        def check_options(cls, context: CheckContext) -> dict[str, Any]:
            return {"limit": len(context.runs)}

    return Released


def test_a_lens_written_for_0_2_0_gets_its_parts_with_one_warning() -> None:
    with pytest.warns(DeprecationWarning) as warned:
        released = _released_lens()
    [warning] = warned
    text = str(warning.message)
    assert text.startswith(
        "Released declares question, about, card_by_group, plain_words, sizes, needs, sizing, metric_patterns, "
        "check_options as 0.2.0 did"
    )
    assert f"read until {SHIMS_REMOVED_IN}" in text
    assert "card = CardPart(question=..., about=..., by_group=..., words=...)" in text
    assert "checkup = CheckPart(sizes=..., needs=..., sizing=..., metric_patterns=..., options=...)" in text
    assert warning.filename == __file__  # the plug-in's line, where Python shows it by default
    card = card_of(released)
    assert (card.question, card.about, card.by_group) == ("Does it name a year?", "Years in answers.", card.by_group)
    assert card.by_group == ("year_pct", "Years per group")
    assert card.sentences(SUMMARY, "m") == ["toy about m"]
    check = check_part(released)
    assert (check.sizes, check.needs, check.metric_patterns) == ({"quick": {"limit": 2}}, ("outdated",), ("year_pct",))
    assert check.sizing is not None and check.sizing.metric == "year_pct"
    assert check.options(CheckContext(ToyConfig(), runs={"outdated": Path("o")})) == {"limit": 1}
    assert card_of(ToyLens) == CardPart("") and check_part(ToyLens) is NO_CHECK  # the parent is left as it was


def test_a_subclass_of_a_released_lens_inherits_its_parts_without_another_warning() -> None:
    with pytest.warns(DeprecationWarning):
        released = _released_lens()

    class Child(released):  # type: ignore[misc,valid-type]  # made in a function: untyped here
        pass

    assert card_of(Child).question == "Does it name a year?"


def test_a_check_runs_a_lens_written_for_0_2_0_by_its_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.warns(DeprecationWarning):

        class Checked(ToyLens):  # type: ignore[misc]  # tests/toy_lens.py is imported by file name, untyped here
            name = "released"
            sizes: ClassVar[dict[str, dict[str, Any]]] = {"quick": {"limit": 2}}

            @classmethod
            def plain_words(cls, summary: Summary, model: str) -> list[str]:
                return [f"{cls.name} about {model}"]

    monkeypatch.setattr(sys.modules[__name__], "Checked", Checked, raising=False)
    monkeypatch.setitem(LENSES, "released", f"{__name__}:Checked")
    result = cp.check("year=mock:constant=In 2019.", lens=["released"], out=tmp_path / "check", cache=tmp_path / "c")
    [outcome] = result.lenses
    assert (outcome.lens, outcome.status, outcome.calls_made) == ("released", "ran", 2)
    assert [row.question for row in result.runs["released"].rows] == list(QUESTIONS[:2])  # its quick size: limit 2
    assert result.paragraphs == {"year": "released about year"}  # its plain_words, as the card part's words
