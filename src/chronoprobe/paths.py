"""Where chronoprobe keeps its caches. ``CHRONOPROBE_HOME`` overrides the default."""

from __future__ import annotations

import os
import re
from pathlib import Path

from platformdirs import user_cache_dir


def home_dir() -> Path:
    """Where the caches live, without creating it."""
    override = os.environ.get("CHRONOPROBE_HOME")
    return Path(override) if override else Path(user_cache_dir("chronoprobe"))


def home() -> Path:
    root = home_dir()
    root.mkdir(parents=True, exist_ok=True)
    return root


def default_call_cache() -> Path:
    return home() / "calls.sqlite"


def model_cache_dir() -> Path:
    path = home() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def snapshot_dir() -> Path:
    path = home() / "snapshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


RUN_STAMP = "%Y%m%dT%H%M%SZ"
"""The UTC timestamp a run folder's default name ends in (``results/outdated/smollm2-20261207T051200Z``)."""
_STAMPED = r"\d{8}T\d{6}Z(?:-(\d+))?"


def latest_named(path: Path) -> Path | None:
    """The newest run folder named after ``path``, when ``path`` itself does not exist: ``results/outdated/smollm2``
    names the latest ``results/outdated/smollm2-<timestamp>`` (a rerun within a second adds ``-2``, ``-3`` ...).

    How the README's ``chronoprobe compare results/outdated/smollm2 results/outdated/qwen`` finds the folders that
    ``outdated run --model qwen=...`` wrote without ``--out``. None when there is none (or ``path`` exists)."""
    if path.exists() or not path.name or not path.parent.is_dir():
        return None
    pattern = re.compile(re.escape(path.name) + "-" + _STAMPED)
    found = []
    for entry in path.parent.iterdir():
        matched = pattern.fullmatch(entry.name)
        if matched and entry.is_dir():
            stamp = entry.name[len(path.name) + 1 :][:16]
            found.append((stamp, int(matched.group(1) or 1), entry))
    return max(found)[2] if found else None
