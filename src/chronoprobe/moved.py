"""Modules that moved since 0.1.0, under the names 0.1.0 or 0.2.0 released, until 0.4.0, with a DeprecationWarning
naming the new one.

``from chronoprobe.outdated.audit import AuditConfig`` still works and gives the same objects as
``chronoprobe.lenses.outdated.audit``: the lenses moved under ``chronoprobe/lenses/``, the run contract (lens,
runner) under ``chronoprobe/contract/``, the records it builds on (``runlog``, ``publish``, ``fields``, in
``contract/`` in 0.2.0) under ``chronoprobe/records/``, and ``reports.tidy`` took a name that says what it holds. A
package's old name covers its modules (``chronoprobe.outdated.<module>``). Only names a release had are here: a
module renamed again before any release shipped it has no alias.
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

from chronoprobe.version import SHIMS_REMOVED_IN

MOVED: dict[str, str] = {
    "chronoprobe.conflicts": "chronoprobe.lenses.conflicts",
    "chronoprobe.contract.fields": "chronoprobe.records.fields",
    "chronoprobe.contract.publish": "chronoprobe.records.publish",
    "chronoprobe.contract.runlog": "chronoprobe.records.runlog",
    "chronoprobe.editing": "chronoprobe.lenses.editing",
    "chronoprobe.lens": "chronoprobe.contract.lens",
    "chronoprobe.outdated": "chronoprobe.lenses.outdated",
    "chronoprobe.publish": "chronoprobe.records.publish",
    "chronoprobe.recency": "chronoprobe.lenses.recency",
    "chronoprobe.reports.tidy": "chronoprobe.reports.tidy_table",
    "chronoprobe.runner": "chronoprobe.contract.runner",
}
"""Old module name (as 0.1.0 or 0.2.0 released it) -> its new name (a package's entry covers its modules)."""
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
            f"{spec.name} is now {self.new}; the old name is removed in {SHIMS_REMOVED_IN}",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module under its new name is already loaded."""


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname) if fullname.startswith("chronoprobe.") else None
        if new is None or importlib.util.find_spec(new) is None:  # e.g. chronoprobe.outdated.records: never released
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put the old names' finder first on ``sys.meta_path`` (once): before the path finder, which would load a
    moved module a second time under its old name."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
