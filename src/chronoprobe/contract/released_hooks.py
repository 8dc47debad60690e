"""0.2.0's spelling of a lens's optional parts, read until 0.4.0 with a warning.

0.2.0 released a lens's card and check declarations as members of the lens itself (``question = ...``,
``sizes = ...``, ``def plain_words(cls, summary, model)`` ...). They are now optional parts that the features
reading them define (:class:`~chronoprobe.reports.lens_card.CardPart`, the lens's ``card``;
:class:`~chronoprobe.contract.check_part.CheckPart`, its ``checkup``). A plug-in written
for 0.2.0 keeps working: when its class is made, each such member it declares becomes its part's field, and a
DeprecationWarning names the members and the part to give instead.
"""

from __future__ import annotations

import dataclasses

from chronoprobe.contract.check_part import check_part
from chronoprobe.provenance import Provenance
from chronoprobe.records.runlog import Summary
from chronoprobe.renames import warn_deprecated
from chronoprobe.reports.lens_card import card_of
from chronoprobe.version import SHIMS_REMOVED_IN

__all__ = ["CARD_MEMBERS", "CHECK_MEMBERS", "RELEASED_MEMBERS", "adopt_released_members", "released_dataset_label"]

CARD_MEMBERS = {"question": "question", "about": "about", "card_by_group": "by_group", "plain_words": "words"}
"""0.2.0's lens member -> the field of its ``card`` (:class:`~chronoprobe.reports.lens_card.CardPart`)."""
CHECK_MEMBERS = {
    "sizes": "sizes",
    "needs": "needs",
    "sizing": "sizing",
    "metric_patterns": "metric_patterns",
    "check_options": "options",
}
"""0.2.0's lens member -> the field of its ``checkup`` (:class:`~chronoprobe.contract.check_part.CheckPart`)."""
RELEASED_MEMBERS = (*CARD_MEMBERS, *CHECK_MEMBERS)
"""Every member 0.2.0 released that a lens now gives through a part."""


def adopt_released_members(lens: type) -> None:
    """The 0.2.0 members ``lens`` declares itself, as the fields of its parts, with one warning naming them."""
    own = [name for name in RELEASED_MEMBERS if name in vars(lens)]
    if not own:
        return
    card = {CARD_MEMBERS[name]: getattr(lens, name) for name in own if name in CARD_MEMBERS}
    check = {CHECK_MEMBERS[name]: getattr(lens, name) for name in own if name in CHECK_MEMBERS}
    given = []
    if card:
        lens.card = dataclasses.replace(card_of(lens), **card)  # type: ignore[attr-defined]  # a Lens: it has a card
        given.append(f"card = CardPart({', '.join(f'{k}=...' for k in card)}) (chronoprobe.reports.lens_card)")
    if check:
        lens.checkup = dataclasses.replace(check_part(lens), **check)  # type: ignore[attr-defined]  # a Lens
        given.append(f"checkup = CheckPart({', '.join(f'{k}=...' for k in check)}) (chronoprobe.contract.check_part)")
    warn_deprecated(
        f"{lens.__name__} declares {', '.join(own)} as 0.2.0 did; they are read until {SHIMS_REMOVED_IN}: give "
        + " and ".join(given)
    )


def released_dataset_label(lens: object, summary: Summary, provenance: Provenance) -> str | None:
    """A plug-in written for 0.2.0 labels its dataset with its own ``dataset_label(summary, provenance)`` hook:
    called, with a warning, until 0.4.0 (a lens now sets its summary's ``dataset``); None for a lens without it."""
    hook = getattr(type(lens), "dataset_label", None)
    if hook is None:
        return None
    warn_deprecated(
        f"{type(lens).__name__}.dataset_label is 0.2.0's hook; it is called until {SHIMS_REMOVED_IN}: set the "
        "dataset on the Summary that summarise() returns"
    )
    return str(hook(summary, provenance))
