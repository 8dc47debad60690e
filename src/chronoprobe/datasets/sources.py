"""Where a dataset comes from when the user names no file.

A command's ``--data`` comes first. Without it, the first that exists wins:
``$CHRONOPROBE_SHARED_DATA/<dataset>`` (a folder laid out like ``../shared/data``), then
the copy shipped in the package, ``chronoprobe/data/<dataset>``. DynamicQA and RecencyQA
are MIT-licensed and ship gzipped; MuLan has no licence, so it comes from the hub or
``--data`` only. Nothing here reaches the network.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

from chronoprobe.errors import ConfigError

SHARED_DATA_ENV = "CHRONOPROBE_SHARED_DATA"


def packaged_root() -> Path:
    return Path(str(files("chronoprobe") / "data"))


def packaged_dir(dataset: str) -> Path:
    """The folder a shipped dataset lives in (``chronoprobe/data/<dataset>``)."""
    return packaged_root() / dataset


def shared_root() -> Path | None:
    """The folder ``$CHRONOPROBE_SHARED_DATA`` names, None when it is unset; a value that is no folder is refused
    (a typo would otherwise quietly fall back to the shipped copies)."""
    value = os.environ.get(SHARED_DATA_ENV, "").strip()
    if not value:
        return None
    root = Path(value).expanduser()
    if not root.is_dir():
        raise ConfigError(
            f"${SHARED_DATA_ENV}={value}",
            ("no such folder" if not root.exists() else "is not a folder")
            + "; point it at a folder laid out like shared/data (dynamicqa/, recencyqa/RecencyQA.json ...), "
            "or unset it to use the copies shipped with chronoprobe",
        )
    return root


def shared_copy(relative: str) -> Path | None:
    """``$CHRONOPROBE_SHARED_DATA/<relative>`` when the variable is set and that path exists."""
    root = shared_root()
    if root is None:
        return None
    path = root / relative
    return path if path.exists() else None


def describe(source: str | Path, origin: str) -> str:
    """How provenance names a data source: the shipped copy by its upstream ``origin``, anything else as given."""
    path = Path(source)
    try:
        relative = path.resolve().relative_to(packaged_root().resolve())
    except (ValueError, OSError):
        return str(source)
    return f"chronoprobe/data/{relative.as_posix()} (shipped copy of {origin})"
