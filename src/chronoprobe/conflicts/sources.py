"""Where the conflicts lens finds its data when the user gives no path.

Order: ``$CHRONOPROBE_SHARED_DATA``, then ``shared/data`` next to (or above) the
current directory, then next to the source checkout. Missing files raise a
one-line error naming what to pass instead.
"""

from __future__ import annotations

import os
from pathlib import Path

from chronoprobe.errors import ConfigError


def shared_data_root() -> Path | None:
    candidates = []
    if os.environ.get("CHRONOPROBE_SHARED_DATA"):
        candidates.append(Path(os.environ["CHRONOPROBE_SHARED_DATA"]))
    cwd = Path.cwd()
    candidates += [cwd / "shared" / "data", cwd.parent / "shared" / "data"]
    candidates.append(Path(__file__).resolve().parents[3] / ".." / "shared" / "data")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return None


def shared_path(relative: str, option: str) -> Path:
    root = shared_data_root()
    if root is None or not (root / relative).exists():
        raise ConfigError(
            f"data file {relative}",
            f"not found (no shared data folder; set CHRONOPROBE_SHARED_DATA or pass {option})",
        )
    return root / relative


def dynamicqa_default() -> str | Path:
    """The local DynamicQA folder if there is one, else the hub id."""
    root = shared_data_root()
    if root is not None and (root / "dynamicqa").is_dir():
        return root / "dynamicqa"
    return "copenlu/dynamicqa"
