"""What ``chronoprobe check`` needs from a lens: an optional part.

A lens may give one as its class attribute ``checkup``::

    class MyLens(Lens[MyRow]):
        checkup = CheckPart(sizes={"quick": {"limit": 2}, "standard": {"limit": 20}, "full": {}})

The check runs a lens at its size for the budget (``sizes``), after the lenses it ``needs``, with the options
``options`` gives it from the check's own; ``check --precision`` and every plan line's power statement read
``sizing``, ``check --require`` the ``metric_patterns``. A lens that gives none still runs, reports and appears in
``results``; the check skips it and says so. Two more things a check reads only when a lens can tell them before
any model is asked are its methods, if it has them: :class:`ItemUnits` (``check --baseline``) and
:class:`RecordClasses` (``check --require``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from pydantic import BaseModel

from chronoprobe.contract.sizing import Sizing

__all__ = ["BUDGETS", "NO_CHECK", "Budget", "CheckContext", "CheckPart", "ItemUnits", "RecordClasses", "check_part"]

Budget = Literal["quick", "standard", "full"]
"""How much of each lens ``chronoprobe check`` runs: minutes, about an hour, the papers' runs."""
BUDGETS: tuple[Budget, ...] = get_args(Budget)


@dataclass(frozen=True)
class CheckContext:
    """What ``chronoprobe check`` tells each lens when it sizes the lens's run (:attr:`CheckPart.options`): the
    check's own options, as its config holds them (``context.budget``, ``context.models``, ``context.live``,
    ``context.snapshot``, ``context.endpoint``, ``context.deployed_at`` ...: every field of
    :class:`chronoprobe.checkup.tools.CheckToolConfig`, declared there once), and the folders of the lenses
    this one ``needs``."""

    check: BaseModel
    """The check's config (``chronoprobe check``'s options)."""
    runs: dict[str, Path] = field(default_factory=dict)
    """Lens name -> its run folder in this check, for each lens this one ``needs``."""

    def __getattr__(self, name: str) -> Any:  # an option of the check: context.live is context.check.live
        if name.startswith("__"):  # copy and pickle look for hooks: not options
            raise AttributeError(name)
        return getattr(self.check, name)


def no_options(context: CheckContext) -> dict[str, Any]:
    """A lens that takes nothing from the check but its size."""
    return {}


@dataclass(frozen=True)
class CheckPart:
    """A lens's run in ``chronoprobe check``."""

    sizes: dict[str, dict[str, Any]]
    """Config options per budget (``quick``, ``standard``, ``full``); a budget without an entry skips the lens."""
    needs: tuple[str, ...] = ()
    """Lenses whose run in the same check this lens reads; their folders arrive in ``CheckContext.runs``."""
    sizing: Sizing | None = None
    """The headline rate a plan line's power statement and ``check --precision`` are about, and the option that
    sets how many items a run asks; None: the plan states no power and ``--precision`` leaves the lens's size."""
    metric_patterns: tuple[str, ...] = ()
    """The metric names the lens records, ``*`` standing for any text within one dotted part: what
    ``check --require`` accepts before any model loads. Empty: any name, looked up after the run."""
    options: Callable[[CheckContext], dict[str, Any]] = no_options
    """Config options a check gives this lens besides its size: its own options (``--live`` ...) and the folders
    of the lenses this one ``needs``."""


NO_CHECK = CheckPart(sizes={})
"""The part of a lens that gives none: no sizes, so the check skips it."""


def check_part(lens: Any) -> CheckPart:
    """The check part of the lens class ``lens`` (its ``checkup``), else :data:`NO_CHECK`."""
    found = getattr(lens, "checkup", None)
    return found if isinstance(found, CheckPart) else NO_CHECK


@runtime_checkable
class ItemUnits(Protocol):
    """A lens that knows the units it will ask before any model is asked: ``check --baseline`` refuses a gated
    baseline that shares none of them. Without it, a change over no shared unit fails after the run."""

    def item_units(self) -> Collection[str] | None:
        """The units (facts, questions) it will ask, keyed as its ``comparable`` outcomes key them (may call
        ``load``); None: not known until the run."""


@runtime_checkable
class RecordClasses(Protocol):
    """A lens that knows the classes its records will be grouped by before any model is asked: ``check --require``
    refuses any other class before the run. Without it, a threshold on a class it did not record fails as not
    measured."""

    def record_classes(self) -> Sequence[str] | None:
        """The classes (``all`` among them), known from its items (may call ``load``); None: not known."""
