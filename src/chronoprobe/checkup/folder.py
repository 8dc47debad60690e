"""The check folder as an earlier check left it: whose models it holds, what a kill left half-written, and a
folder that a failed first attempt started and never used.

A check folder is written in place, lens by lens (each lens folder published whole), so a later check of
the same folder must refuse other models before it keeps or replaces anything, and must find the files an
uninterrupted check would leave. Every function here is called with the folder's claim held or before it
is taken; none writes outside the check folder.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chronoprobe.checkup.report import CARD_HTML, CHECK_JSON, CHECK_KIND, CHECK_MD, read_record
from chronoprobe.errors import ConfigError
from chronoprobe.io import remove_stale_temps
from chronoprobe.records import publish
from chronoprobe.records.runlog import MARKER, RUN_LOG

WRITTEN_IN_PLACE = (MARKER, CHECK_JSON, CHECK_MD, CARD_HTML)
"""The check's own files beside the lens folders, each written atomically (a temporary file, then a rename)."""


def _lens_models(folder: Path) -> list[str]:
    """The ``--model`` values the run in ``folder`` was given (its run log's config), or none if it does not read."""
    try:
        log: Any = json.loads((folder / RUN_LOG).read_text(encoding="utf-8"))
        models = log["config"]["models"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return []
    return [str(m) for m in models] if isinstance(models, list) else []


def earlier_models(out: Path) -> list[str] | None:
    """The models an earlier check in ``out`` asked (``check.json``, else its lens folders' run logs); None
    when ``out`` is no check folder or nothing in it says."""
    if not out.is_dir() or publish.report_kind(out) != CHECK_KIND:
        return None
    record = read_record(out)
    if record is not None:
        return list(record.models)
    found: list[str] = []
    for child in sorted(out.iterdir()):
        if child.is_dir() and not child.name.startswith("."):
            found += [m for m in _lens_models(child) if m not in found]
    return found or None


def check_same_models(out: Path, models: Sequence[str], option: str = "--out") -> None:
    """Refuse a check folder that holds another set of models: a resume must never mix models (a lens this
    check does not rerun would keep the other model's folder beside this one's)."""
    earlier = earlier_models(out)
    if earlier is None or sorted(earlier) == sorted(models):
        return
    raise ConfigError(
        f"{option} {out}",
        f"holds a check of {', '.join(earlier)}, not of {', '.join(models)}; a check folder holds one set of "
        f"models (give another {option})",
    )


def check_lens_folders(out: Path, lenses: Sequence[tuple[str, str]], option: str = "--out") -> None:
    """Each lens folder the check will (re)write, ``(name, kind)``: missing, empty or an earlier run of that lens,
    never a folder of the user's; refused here, before any lens runs and before the check folder changes."""
    for name, kind in lenses:
        publish.check_output_dir(out / name, option, kind=kind)


def clear_stale_writes(out: Path) -> None:
    """Remove the temporary files a kill between write and rename left beside the check's own files."""
    for name in WRITTEN_IN_PLACE:
        remove_stale_temps(out / name)


def discard_if_unused(out: Path) -> None:
    """Remove ``out`` when it holds nothing but its marker: a check that failed before its first lens
    finished leaves no folder behind (one with a finished lens is kept, to resume)."""
    try:
        entries = [p.name for p in out.iterdir()]
    except OSError:
        return
    if entries == [MARKER]:
        (out / MARKER).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            out.rmdir()
