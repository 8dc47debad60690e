"""chronoprobe: audit how language models handle time-sensitive knowledge.

The public surface is ``__all__``; everything is imported on first use, so ``import chronoprobe``
stays fast. See docs/api.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from chronoprobe.moved import install as _install_old_names
from chronoprobe.threads import prepare_openmp as _prepare_openmp
from chronoprobe.version import __version__

_prepare_openmp()  # before anything imports torch: OpenMP reads its wait policy once
_install_old_names()  # chronoprobe.outdated, chronoprobe.lens ...: the names 0.1.0 released, until 0.4.0

__all__ = [
    "CapabilityError",
    "CheckResult",
    "ChronoprobeError",
    "ConfigError",
    "DataError",
    "EndpointError",
    "Model",
    "PluginError",
    "Run",
    "__version__",
    "check",
    "compare",
    "knowledge_date",
    "lenses",
    "load",
    "model",
    "produce",
    "recency_gate",
    "recency_gate_many",
    "route",
    "run",
    "staleness",
    "tools",
]

_LAZY = {
    "run": "chronoprobe.api",
    "check": "chronoprobe.api",
    "compare": "chronoprobe.api",
    "CheckResult": "chronoprobe.checkup",
    "load": "chronoprobe.api",
    "model": "chronoprobe.api",
    "lenses": "chronoprobe.api",
    "produce": "chronoprobe.api",
    "tools": "chronoprobe.api",
    "knowledge_date": "chronoprobe.lenses.outdated.frames",
    "staleness": "chronoprobe.lenses.outdated.frames",
    "Model": "chronoprobe.api",
    "Run": "chronoprobe.records.runlog",
    "recency_gate": "chronoprobe.lenses.recency.gate",
    "recency_gate_many": "chronoprobe.lenses.recency.gate",
    "route": "chronoprobe.router.route",
    "ChronoprobeError": "chronoprobe.errors",
    "ConfigError": "chronoprobe.errors",
    "DataError": "chronoprobe.errors",
    "CapabilityError": "chronoprobe.errors",
    "EndpointError": "chronoprobe.errors",
    "PluginError": "chronoprobe.errors",
}

if TYPE_CHECKING:
    from chronoprobe.api import Model, Run, check, compare, lenses, load, model, produce, run, tools
    from chronoprobe.checkup import CheckResult
    from chronoprobe.errors import (
        CapabilityError,
        ChronoprobeError,
        ConfigError,
        DataError,
        EndpointError,
        PluginError,
    )
    from chronoprobe.lenses.outdated.frames import knowledge_date, staleness
    from chronoprobe.lenses.recency.gate import recency_gate, recency_gate_many
    from chronoprobe.router.route import route


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'chronoprobe' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
