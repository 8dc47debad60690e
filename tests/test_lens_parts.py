"""The lens contract: a small core every lens gives, and optional parts the features that read them define.

A lens must give only the core (``load``, ``run``, ``summarise`` with ``summary_from_detail``, ``report``); a
plug-in written for 0.2.0, which declared its card and check members on the lens itself, still works with one
warning until 0.4.0."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from chronoprobe.contract.lens import Lens
from chronoprobe.contract.released_hooks import RELEASED_MEMBERS
from chronoprobe.contract.runlog import Summary
from chronoprobe.reports.lens_card import CardPart, card_of
from chronoprobe.version import SHIMS_REMOVED_IN
from toy_lens import ToyLens

SUMMARY = Summary(lens="toy", models=["m"], headline={}, detail={})


def test_a_lens_must_give_only_the_core() -> None:
    assert Lens.__abstractmethods__ == {"load", "run", "summarise", "summary_from_detail", "report"}
    assert not set(RELEASED_MEMBERS) & set(vars(Lens))  # the parts' fields are no members of the lens


def test_a_lens_without_parts_has_an_empty_card() -> None:
    card = card_of(ToyLens)
    assert (card.question, card.about, card.by_group, card.sentences(SUMMARY, "m")) == ("", "", None, [])
    assert card_of(object) == CardPart("")  # a class that is no lens at all: nothing to read either


def _released_lens() -> type[Any]:
    """A plug-in's lens as 0.2.0 documented it: its card members on the lens itself."""

    class Released(ToyLens):  # type: ignore[misc]  # tests/toy_lens.py is imported by file name, untyped here
        question = "Does it name a year?"
        about = "Years in answers."
        card_by_group: ClassVar[tuple[str, str]] = ("year_pct", "Years per group")

        @classmethod
        def plain_words(cls, summary: Summary, model: str) -> list[str]:
            return [f"{cls.name} about {model}"]

    return Released


def test_a_lens_written_for_0_2_0_gets_its_parts_with_one_warning() -> None:
    with pytest.warns(DeprecationWarning) as warned:
        released = _released_lens()
    [warning] = warned
    text = str(warning.message)
    assert text.startswith("Released declares question, about, card_by_group, plain_words as 0.2.0 did")
    assert f"read until {SHIMS_REMOVED_IN}" in text and "card = CardPart(" in text
    assert warning.filename == __file__  # the plug-in's line, where Python shows it by default
    card = card_of(released)
    assert (card.question, card.about, card.by_group) == ("Does it name a year?", "Years in answers.", card.by_group)
    assert card.by_group == ("year_pct", "Years per group")
    assert card.sentences(SUMMARY, "m") == ["toy about m"]
    assert card_of(ToyLens) == CardPart("")  # the parent is left as it was


def test_a_subclass_of_a_released_lens_inherits_its_parts_without_another_warning() -> None:
    with pytest.warns(DeprecationWarning):
        released = _released_lens()

    class Child(released):  # type: ignore[misc,valid-type]  # made in a function: untyped here
        pass

    assert card_of(Child).question == "Does it name a year?"
