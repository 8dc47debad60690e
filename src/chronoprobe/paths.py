"""Where chronoprobe keeps its caches. ``CHRONOPROBE_HOME`` overrides the default."""

from __future__ import annotations

import os
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
