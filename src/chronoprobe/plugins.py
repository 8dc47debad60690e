"""Where lenses are found: the built-in :data:`LENSES` table and the ``chronoprobe.lenses`` entry points.

A package outside chronoprobe adds a question by declaring, in its own ``pyproject.toml``::

    [project.entry-points."chronoprobe.lenses"]
    mylens = "mypackage.lens:MyLens"

Both sources name a class by ``module:attribute`` and it is imported only when used, so this
module imports no lens: the readers (``chronoprobe results``, the card, ``chronoprobe.load``) and
the runner find every lens here without knowing any of them.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import sys
from typing import Any

from chronoprobe.errors import ConfigError

ENTRY_POINT_GROUP = "chronoprobe.lenses"

LENSES: dict[str, str] = {
    "outdated": "chronoprobe.outdated.lens:OutdatedLens",
    "conflicts": "chronoprobe.conflicts.lens:ConflictsLens",
    "recency": "chronoprobe.recency.lens:RecencyLens",
    "editing": "chronoprobe.editing.lens:EditingLens",
}
"""Lens name -> ``module:attribute``, imported only when the lens is used; the order readers show lenses in."""


def entry_point_lenses() -> dict[str, str]:
    """Lens name -> ``module:attribute`` from the installed packages' ``chronoprobe.lenses`` entry points."""
    return dict(_scan(tuple(sys.path)))


@functools.lru_cache(maxsize=4)
def _scan(search_path: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    # Reading every installed distribution's metadata takes milliseconds, and the readers look lenses up
    # several times per run folder: scan once per search path (a folder put on sys.path is seen).
    return tuple((point.name, point.value) for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def registered() -> dict[str, str]:
    """Every lens, by name: the built-in table first, then the entry points (a built-in name wins)."""
    plugged = entry_point_lenses()
    return {**LENSES, **{name: plugged[name] for name in sorted(plugged) if name not in LENSES}}


def names() -> list[str]:
    """The registered lens names: the built-in table in its order, then the entry points by name."""
    return list(registered())


def load(name: str) -> Any:
    """The class registered as lens ``name``, imported now; ConfigError naming the known ones otherwise."""
    path = registered().get(name)
    if path is None:
        raise ConfigError("lens", f"{name!r} is not a lens; known: {', '.join(sorted(registered()))}")
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)
