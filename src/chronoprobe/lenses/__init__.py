"""The built-in lenses, one package per question: ``outdated``, ``conflicts``, ``recency``, ``editing``.

Each holds its config, prompts, pipeline, metric records, report and tools, and a ``lens.py`` fitting them
to :class:`chronoprobe.contract.lens.Lens`. They are found by name through :data:`chronoprobe.plugins.LENSES`,
as a lens from another package is found through the ``chronoprobe.lenses`` entry-point group.
"""

from __future__ import annotations

import sys
import types

from chronoprobe import plugins


class _CallableLenses(types.ModuleType):
    """This package, callable as ``chronoprobe.lenses()`` still lists the registered lenses: once a lens is imported,
    the package's name on ``chronoprobe`` is this module, not the function ``chronoprobe.api.lenses``."""

    def __call__(self) -> list[str]:
        return sorted(plugins.names())


sys.modules[__name__].__class__ = _CallableLenses
