"""Figures drawn once per content: a rerun with the same data copies the files it drew before.

Drawing a report's figures (importing matplotlib, laying out and saving each as PNG and SVG)
took more time than everything else in a rerun whose answers all came from the call cache. The
files are a pure function of the figure's data, the code that draws it and matplotlib's version
(both formats are saved reproducibly: fixed SVG ids, no dates), so they are kept under
``CHRONOPROBE_HOME/figures`` by a hash of those and copied from there when they match; the
copies are the same bytes a new drawing would give. The newest :data:`KEEP` figures are kept.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from chronoprobe.io import staging_dir
from chronoprobe.paths import home
from chronoprobe.version import __version__

KEEP = 256
"""Figures kept in the cache; older ones are removed when a new one is stored."""


def figure_cache_dir() -> Path:

    return home() / "figures"


def _key(name: str, data: Any, code: Sequence[ModuleType]) -> str:
    try:
        matplotlib = importlib.metadata.version("matplotlib")
    except importlib.metadata.PackageNotFoundError:
        matplotlib = None
    sources = [hashlib.sha256(inspect.getsource(module).encode("utf-8")).hexdigest() for module in code]
    blob = {"figure": name, "data": data, "matplotlib": matplotlib, "chronoprobe": __version__, "code": sources}
    text = json.dumps(blob, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def saved_figure(
    path: Path, name: str, data: Any, draw: Callable[[Path], list[Path]], code: Sequence[ModuleType]
) -> list[Path]:
    """The files ``draw(path)`` writes (``path`` and siblings with other suffixes), copied from the cache when
    the same ``data`` was drawn by the same ``code`` before; ``name`` tells figures of one data apart."""
    try:
        entry = figure_cache_dir() / _key(name, data, code)
        kept = sorted(entry.iterdir()) if entry.is_dir() else []
    except (OSError, TypeError, ValueError):  # no cache to use: draw
        return draw(path)
    if kept:
        copies = [path.with_suffix(file.suffix) for file in kept]
        for file, copy in zip(kept, copies, strict=True):
            shutil.copyfile(file, copy)
        os.utime(entry)
        return copies
    files = draw(path)
    _keep(entry, files)
    return files


def _keep(entry: Path, files: Sequence[Path]) -> None:
    try:
        staging = staging_dir(entry)
        for file in files:
            shutil.copyfile(file, staging / f"figure{file.suffix}")
        try:
            staging.rename(entry)
        except OSError:  # another run stored it first
            shutil.rmtree(staging, ignore_errors=True)
        _prune(entry.parent)
    except OSError:
        return  # a cache that cannot be written only costs the next run a drawing


def _prune(root: Path) -> None:
    entries = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if len(entries) <= KEEP:
        return
    entries.sort(key=lambda p: p.stat().st_mtime)
    for old in entries[: len(entries) - KEEP]:
        shutil.rmtree(old, ignore_errors=True)
