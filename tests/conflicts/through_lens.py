"""A conflicts run of already loaded models through the one real path: the lens's run under ``runner.produce``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chronoprobe.cache import CachedModel
from chronoprobe.contract.lens_run import lens_tool
from chronoprobe.contract.runner import produce
from chronoprobe.contract.tool import RunSettings
from chronoprobe.lenses.conflicts.lens import ConflictsConfig, ConflictsLens
from chronoprobe.records.runlog import Run


def run_conflicts(models: Sequence[CachedModel], out: Path, **options: Any) -> Run:
    """Run the conflicts lens on ``models`` (the exact-match judge unless ``judge`` is given), published at ``out``."""
    config = ConflictsConfig(models=tuple(m.info.spec for m in models), **{"judge": "exact", **options})
    run = lens_tool(ConflictsLens).of(config, out)
    run.handles = list(models)
    result: Run = produce(run, RunSettings(cache=models[0].cache.path))
    return result
