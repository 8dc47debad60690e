"""Modules that moved in 0.3, under their old names for one release, with a DeprecationWarning naming the new one.

``from chronoprobe.outdated.audit import AuditConfig`` still works and gives the same objects as
``chronoprobe.lenses.outdated.audit``: the lenses moved under ``chronoprobe/lenses/``, the run contract
(lens, tool, runner, publish, run log) under ``chronoprobe/contract/``, and a few modules took names that say
what they hold. A package's old name covers its modules (``chronoprobe.outdated.<module>``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

MOVED: dict[str, str] = {
    "chronoprobe.checkup.gate": "chronoprobe.checkup.thresholds",
    "chronoprobe.cli.progress_display": "chronoprobe.cli.console",
    "chronoprobe.conflicts": "chronoprobe.lenses.conflicts",
    "chronoprobe.conflicts.records": "chronoprobe.lenses.conflicts.metric_records",
    "chronoprobe.conflicts.words": "chronoprobe.lenses.conflicts.plain_words",
    "chronoprobe.editing": "chronoprobe.lenses.editing",
    "chronoprobe.editing.records": "chronoprobe.lenses.editing.metric_records",
    "chronoprobe.editing.words": "chronoprobe.lenses.editing.plain_words",
    "chronoprobe.lens": "chronoprobe.contract.lens",
    "chronoprobe.outdated": "chronoprobe.lenses.outdated",
    "chronoprobe.outdated.records": "chronoprobe.lenses.outdated.metric_records",
    "chronoprobe.outdated.words": "chronoprobe.lenses.outdated.plain_words",
    "chronoprobe.progress": "chronoprobe.progress_lines",
    "chronoprobe.publish": "chronoprobe.contract.publish",
    "chronoprobe.recency": "chronoprobe.lenses.recency",
    "chronoprobe.recency.records": "chronoprobe.lenses.recency.metric_records",
    "chronoprobe.recency.words": "chronoprobe.lenses.recency.plain_words",
    "chronoprobe.reports.tidy": "chronoprobe.reports.tidy_table",
    "chronoprobe.reports.tidy_output": "chronoprobe.reports.tidy_formats",
    "chronoprobe.reports.words": "chronoprobe.reports.plain_words",
    "chronoprobe.runlog": "chronoprobe.contract.runlog",
    "chronoprobe.runner": "chronoprobe.contract.runner",
    "chronoprobe.tool": "chronoprobe.contract.tool",
}
"""Old module name -> its new name (a package's entry covers its modules)."""
_LONGEST_FIRST = sorted(MOVED, key=len, reverse=True)


def new_name(old: str) -> str | None:
    """Where the module once called ``old`` lives now; None when it did not move."""
    for name in _LONGEST_FIRST:
        if old == name or old.startswith(name + "."):
            return MOVED[name] + old[len(name) :]
    return None


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module under its new name (one module object, whichever name imported it)."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} is now {self.new}; the old name goes in the next release", DeprecationWarning, stacklevel=2
        )
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module under its new name is already loaded."""


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname) if fullname.startswith("chronoprobe.") else None
        return None if new is None else importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put the old names' finder first on ``sys.meta_path`` (once): before the path finder, which would load a
    moved module a second time under its old name."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
