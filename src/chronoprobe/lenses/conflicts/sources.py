"""Where the conflicts lens finds the files it cannot ship when the user gives no path.

MuLan's templates and the reproducibility study's aliases and converted templates carry
no licence, so they are not in the package. Order: ``$CHRONOPROBE_SHARED_DATA``, then
``shared/data`` next to (or above) the current directory, then next to the source
checkout. Missing files raise a one-line error naming what to pass instead. DynamicQA
itself ships with the package (``datasets.dynamicqa.default_source``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from chronoprobe.datasets.sources import SHARED_DATA_ENV, shared_root
from chronoprobe.errors import ConfigError


def shared_data_root() -> Path | None:
    candidates = []
    chosen = shared_root()  # set to something that is no folder: refused, not passed over
    if chosen is not None:
        candidates.append(chosen)
    cwd = Path.cwd()
    candidates += [cwd / "shared" / "data", cwd.parent / "shared" / "data"]
    candidates.append(Path(__file__).resolve().parents[4] / ".." / "shared" / "data")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return None


def _not_shipped(relative: str, option: str) -> str:
    return (
        f"{relative} not found; it has no licence, so chronoprobe does not ship it: pass {option} <file>, "
        f"or set {SHARED_DATA_ENV} to a folder holding {relative}"
    )


def find_shared(relative: str) -> Path | None:
    """``relative`` under the shared data folder, or None when there is none or it lacks the file."""
    root = shared_data_root()
    return root / relative if root is not None and (root / relative).exists() else None


def shared_path(relative: str, option: str) -> Path:
    found = find_shared(relative)
    if found is None:
        raise ConfigError(f"data file {relative}", _not_shipped(relative, option).split(" not found; ", 1)[1])
    return found


class Input(NamedTuple):
    """One file a command reads: the option that gives it, its value, and where it is found without one."""

    option: str
    given: Path | None
    default: str | None = None
    """Path under the shared data folder; None: the option is required (``what`` says what it is)."""
    what: str = ""


def check_inputs(inputs: Sequence[Input], command: str) -> None:
    """Every input at once: a missing one, or several, is one error naming each file and its option.

    Runs before any work, so a user who forgot three files learns it from one message."""
    missing = []
    for item in inputs:
        if item.given is not None:
            if not item.given.expanduser().exists():
                missing.append(f"{item.option} {item.given}: no such file or folder")
        elif item.default is not None:
            if find_shared(item.default) is None:
                missing.append(f"{item.option}: {_not_shipped(item.default, item.option)}")
        else:
            missing.append(f"{item.option}: {item.what}")
    if missing:
        raise ConfigError(command, f"{len(missing)} input(s) missing: " + "; ".join(missing))
