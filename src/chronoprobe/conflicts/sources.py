"""Where the conflicts lens finds the files it cannot ship when the user gives no path.

MuLan's templates and the reproducibility study's aliases and converted templates carry
no licence, so they are not in the package. Order: ``$CHRONOPROBE_SHARED_DATA``, then
``shared/data`` next to (or above) the current directory, then next to the source
checkout. Missing files raise a one-line error naming what to pass instead. DynamicQA
itself ships with the package (``datasets.dynamicqa.default_source``).
"""

from __future__ import annotations

import os
from pathlib import Path

from chronoprobe.datasets.sources import SHARED_DATA_ENV
from chronoprobe.errors import ConfigError


def shared_data_root() -> Path | None:
    candidates = []
    if os.environ.get(SHARED_DATA_ENV):
        candidates.append(Path(os.environ[SHARED_DATA_ENV]))
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
            f"not found; it has no licence, so chronoprobe does not ship it: pass {option} <file>, "
            f"or set {SHARED_DATA_ENV} to a folder holding {relative}",
        )
    return root / relative
