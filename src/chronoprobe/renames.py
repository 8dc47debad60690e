"""Config fields renamed to their flags: a Python keyword 0.1.0 released keeps working until 0.4.0, with a warning.

A config declares its older keywords once, as ``renamed_fields`` (old -> new; only names a release had: a keyword
renamed again before any release shipped it has no entry), and takes them through
:func:`accept_renamed`, the last validator of its class body::

    class AuditConfig(BaseModel):
        renamed_fields: ClassVar[dict[str, str]] = {"facts_file": "facts"}
        facts: Path | None = None
        ...
        _renamed = accept_renamed()  # last: pydantic runs a class's before-validators last-declared first

``AuditConfig(facts_file=...)``, ``chronoprobe.run("outdated", facts_file=...)`` and every other way a config is
built then set ``facts`` and warn (a ``DeprecationWarning`` naming ``facts``, attributed to the caller's line);
the old and the new keyword together with different values are one :class:`~chronoprobe.errors.ConfigError`. A
config read back from a run log (``model_validate(..., context=RECORDED)``) takes its old names silently: a folder
written before the rename is not the reader's doing.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import Any

import pydantic
from pydantic import ValidationInfo, model_validator

from chronoprobe.errors import ConfigError
from chronoprobe.version import SHIMS_REMOVED_IN

__all__ = ["RECORDED", "accept_renamed", "renamed_keywords", "warn_deprecated"]

RECORDED: dict[str, Any] = {"recorded": True}
"""The validation context of a config read back from a run folder: its older names are taken without a warning."""

_OURS = (
    *(
        str(folder)
        for module in (__file__, pydantic.__file__)
        for folder in {Path(module).parent, Path(module).resolve().parent}  # as imported, and through a linked venv
    ),
    "<frozen abc>",  # ABCMeta making a lens class (chronoprobe.contract.released_hooks)
)


def warn_deprecated(message: str) -> None:
    """A DeprecationWarning attributed to the first caller outside chronoprobe and pydantic (the user's line, where
    Python shows it by default)."""
    level, frame = 2, sys._getframe(1)  # 2: the caller of this function
    caller: FrameType | None = frame
    while caller is not None and caller.f_code.co_filename.startswith(_OURS):
        level, caller = level + 1, caller.f_back
    warnings.warn(message, DeprecationWarning, stacklevel=level)


def renamed_keywords(renamed: Mapping[str, str], given: Mapping[str, Any], *, quiet: bool = False) -> dict[str, Any]:
    """``given`` with each old keyword of ``renamed`` (old -> new) as its new one, a warning for each unless
    ``quiet``; an old and a new keyword given together with different values: ConfigError naming both."""
    chosen = dict(given)
    for old, new in renamed.items():
        if old not in chosen:
            continue
        value = chosen.pop(old)
        if new in chosen and chosen[new] != value:
            raise ConfigError(f"{old}/{new}", f"give {new} only ({old} is its older name)")
        chosen[new] = value
        if not quiet:
            warn_deprecated(f"the keyword {old!r} is deprecated and removed in {SHIMS_REMOVED_IN}; use {new!r}")
    return chosen


def accept_renamed() -> Any:
    """The before-validator that takes a config's older keywords (its class's ``renamed_fields``); see the module
    docstring. Declare it last in the class body, so that the config's other validators see the new names."""

    def take_old_names(cls: Any, data: Any, info: ValidationInfo) -> Any:
        renamed: Mapping[str, str] = getattr(cls, "renamed_fields", {})
        if not renamed or not isinstance(data, Mapping):
            return data
        return renamed_keywords(renamed, data, quiet=bool(info.context and info.context.get("recorded")))

    return model_validator(mode="before")(classmethod(take_old_names))  # type: ignore[arg-type]  # a classmethod built by hand, as the decorator pair makes it
