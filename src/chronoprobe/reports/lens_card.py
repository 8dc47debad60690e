"""What the report card and ``chronoprobe check`` say about a lens besides its numbers: an optional part.

A lens may give one as its class attribute ``card``::

    class MyLens(Lens[MyRow]):
        card = CardPart(question="Does it name a year?", about="The share of answers with a year.", words=sentences)

The card titles the lens's section with ``question`` (the lens's name without one), shows ``about`` under it and,
with ``by_group``, a table of one metric across its classes; ``chronoprobe lenses`` lists the question and
``check`` puts it in its table and ``words``' sentences in its paragraph. A lens that gives none still runs,
reports and appears in ``results``, the card and ``check``, titled by its name and with no sentences.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chronoprobe.records.runlog import Summary

__all__ = ["CardPart", "Words", "card_of"]

Words = Callable[[Summary, str], list[str]]
"""``words(summary, model)``: sentences about ``model`` for the check's paragraph, built only from the summary's
metric records with their intervals; a sentence the numbers cannot support says so."""


@dataclass(frozen=True)
class CardPart:
    """A lens's words on the card and in ``check``."""

    question: str
    """The question the lens asks, as the card titles its section (``Is the model outdated?``)."""
    about: str = ""
    """One line under the title: the dataset and how answers are judged."""
    by_group: tuple[str, str] | None = None
    """(metric, caption): a card table of that metric across its groups (categories), when it has two or more."""
    words: Words | None = None
    """The sentences of ``check``'s paragraph about one model; None: none."""

    def sentences(self, summary: Summary, model: str) -> list[str]:
        """``words``' sentences about ``model`` (none without ``words``)."""
        return list(self.words(summary, model)) if self.words is not None else []


def card_of(lens: Any) -> CardPart:
    """The card part of the lens class ``lens`` (its ``card``); without one, an empty part (no question: the card
    titles the section with the lens's name)."""
    found = getattr(lens, "card", None)
    return found if isinstance(found, CardPart) else CardPart("")
