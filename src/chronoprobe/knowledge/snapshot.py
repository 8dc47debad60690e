"""Pinned, dated snapshots of gold answers: save, load, list and compare.

A snapshot is one JSON file (the :class:`Snapshot` model). Names resolve first
in the user's snapshot directory, then among the snapshots shipped with the
package, so a user can re-fetch without losing the pinned default.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ValidationError

from chronoprobe import paths
from chronoprobe.errors import ChronoprobeError, DataError
from chronoprobe.io import read_text, write_text_atomic
from chronoprobe.knowledge.types import SNAPSHOT_FORMAT, FactAnswers, Snapshot, Statement

DEFAULT_SNAPSHOT = "dyknow-2023-12-18"
MAX_NAME_LENGTH = 120


def shipped_dir() -> Path:
    return Path(str(files("chronoprobe") / "data" / "snapshots"))


def _valid_name(name: str) -> str:
    if not name or any(ch in name for ch in "/\\") or name.startswith("."):
        raise DataError(f"snapshot name {name!r}", "must be a plain file name (no slashes, not hidden)")
    if len(name) > MAX_NAME_LENGTH:
        raise DataError(
            f"snapshot name {name[:40]!r}...", f"is {len(name)} characters long (at most {MAX_NAME_LENGTH})"
        )
    if not name.isprintable():
        raise DataError(f"snapshot name {name!r}", "must not contain control characters")
    return name


def snapshot_path(name: str, dir: Path | None = None) -> Path:
    """Where ``save_snapshot`` puts a snapshot called ``name`` (default dir: the user snapshot directory)."""
    target = Path(dir) if dir is not None else paths.snapshot_dir()
    return target / f"{_valid_name(name)}.json"


def check_snapshot_ref(value: str) -> str:
    """A snapshot name (a plain file name) or a path to a snapshot file; ValueError for one that cannot be either."""
    try:
        if value.endswith(".json") or "/" in value or "\\" in value:
            Path(value).expanduser().is_file()
        else:
            snapshot_path(value)  # validates the name
    except ChronoprobeError as exc:
        raise ValueError(f"{exc.where} {exc.problem}") from None
    except (OSError, ValueError) as exc:
        shown = value if len(value) <= 60 else value[:60] + "..."
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValueError(f"{shown!r} is not a usable file name ({reason})") from None
    return value


SnapshotRef = Annotated[str, AfterValidator(check_snapshot_ref)]
"""A config field naming a snapshot: a name or a file (:func:`check_snapshot_ref`)."""


def unused_name(base: str, dir: Path | None = None) -> str:
    """``base``, or ``base-2``, ``base-3`` ... : the first name with no snapshot file yet in ``dir``."""
    name, number = base, 1
    while snapshot_path(name, dir).exists():
        number += 1
        name = f"{base}-{number}"
    return name


def _write_new(path: Path, text: str) -> None:
    """Write ``path`` only if it does not exist yet, atomically (a hard link never replaces a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: check, then rename
            if path.exists():
                raise FileExistsError(path) from None
            os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def save_snapshot(snapshot: Snapshot, dir: Path | None = None, *, replace: bool = False) -> Path:
    """Write ``<dir>/<name>.json`` atomically (default dir: the user snapshot directory).

    An existing snapshot of that name is never overwritten unless ``replace``
    is given: ``DataError`` instead, before anything is written.
    """
    path = snapshot_path(snapshot.name, dir)
    text = json.dumps(snapshot.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False) + "\n"
    try:
        if replace:
            write_text_atomic(path, text)
        else:
            _write_new(path, text)
    except FileExistsError:
        raise DataError(
            f"snapshot {snapshot.name!r}",
            f"{path} already exists; refusing to overwrite it (use --replace, or another --name)",
        ) from None
    except OSError as exc:
        raise DataError(str(path), f"cannot write the snapshot ({exc.strerror or exc})") from None
    return path


def resolve_snapshot(name_or_path: str | None) -> Path:
    """Where a snapshot name or path points; DataError listing what exists if nowhere."""
    if name_or_path is None:
        return shipped_dir() / f"{DEFAULT_SNAPSHOT}.json"
    candidate = Path(name_or_path).expanduser()
    if candidate.suffix == ".json" or "/" in name_or_path or "\\" in name_or_path:
        if not candidate.is_file():
            raise DataError(str(candidate), "snapshot file not found")
        return candidate
    for folder in (paths.snapshot_dir(), shipped_dir()):
        path = folder / f"{name_or_path}.json"
        if path.is_file():
            return path
    known = ", ".join(name for name, _ in list_snapshots()) or "none"
    raise DataError(f"snapshot {name_or_path!r}", f"not found (known: {known})")


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"])
    return f"{field}: {error['msg']}" if field else error["msg"]


def parse_snapshot(data: Any, where: str) -> Snapshot:
    if not isinstance(data, dict):
        raise DataError(where, "a snapshot must be a JSON object")
    version = data.get("format", 1)  # files written before the format was versioned are version 1
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DataError(where, f"format {version!r} is not a snapshot format (1 to {SNAPSHOT_FORMAT})")
    if version > SNAPSHOT_FORMAT:
        raise DataError(
            where,
            f"snapshot format {version} is newer than this chronoprobe reads (1 to {SNAPSHOT_FORMAT}); upgrade it",
        )
    answers = data.get("answers")
    if not isinstance(answers, dict):
        raise DataError(where, "missing 'answers' object keyed by fact id")
    parsed: dict[str, FactAnswers] = {}
    for fact_id, entry in answers.items():
        try:
            item = FactAnswers.model_validate(entry)
        except ValidationError as exc:
            raise DataError(f"{where} fact {fact_id}", _first_error(exc)) from None
        if item.fact_id != fact_id:
            raise DataError(f"{where} fact {fact_id}", f"entry says fact_id {item.fact_id!r}")
        parsed[fact_id] = item
    try:
        snapshot = Snapshot.model_validate({**data, "format": version, "answers": parsed})
    except ValidationError as exc:
        raise DataError(where, _first_error(exc)) from None
    _check_not_future(snapshot, where)
    return snapshot


def _check_not_future(snapshot: Snapshot, where: str) -> None:
    """A snapshot records answers as they stood when retrieved: a retrieval after today (a day of slack for
    time zones) is a damaged or hand-edited file, and every "current" answer judged against it would be a guess."""
    today = dt.date.today()
    if snapshot.retrieved > today + dt.timedelta(days=1):
        raise DataError(
            where, f"retrieved {snapshot.retrieved}, after today ({today}); a snapshot cannot be dated later"
        )


def load_snapshot(name_or_path: str | None = None) -> Snapshot:
    """Load a snapshot: None = the shipped default; a name (user dir, then shipped); or a file path."""
    path = resolve_snapshot(name_or_path)
    try:
        data = json.loads(read_text(path))
    except OSError as exc:
        raise DataError(str(path), f"cannot read snapshot: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise DataError(str(path), f"not valid JSON: {exc}") from None
    return parse_snapshot(data, str(path))


def list_snapshots() -> list[tuple[str, Path]]:
    """(name, path) of every snapshot; a user snapshot hides a shipped one of the same name."""
    found: dict[str, Path] = {}
    for folder in (shipped_dir(), paths.snapshot_dir()):
        if folder.is_dir():
            for path in sorted(folder.glob("*.json")):
                found[path.stem] = path
    return sorted(found.items())


def _key(statement: Statement, by_qid: bool) -> tuple[str, str, str, str]:
    """Identity of a statement across snapshots: its value (QID, or label) and its dates."""
    return (
        statement.qid if by_qid and statement.qid else statement.label.casefold(),
        str(statement.start or ""),
        str(statement.end or ""),
        str(statement.point_in_time or ""),
    )


def _labels(statements: tuple[Statement, ...]) -> tuple[str, ...]:
    return tuple(sorted({s.label for s in statements}))


class FactDiff(BaseModel):
    fact_id: str
    old_current: tuple[str, ...]
    new_current: tuple[str, ...]
    current_changed: bool
    """The set of current values differs (compared like statements, without dates)."""
    added: tuple[Statement, ...] = ()
    removed: tuple[Statement, ...] = ()


class SnapshotDiff(BaseModel):
    old: str
    new: str
    facts: list[FactDiff]
    """Only facts present in both snapshots whose statements differ."""
    only_in_old: list[str]
    only_in_new: list[str]

    @property
    def changed_current(self) -> list[FactDiff]:
        return [fact for fact in self.facts if fact.current_changed]


def diff_snapshots(a: Snapshot, b: Snapshot) -> SnapshotDiff:
    """What changed from snapshot ``a`` (older) to ``b`` (newer), per fact.

    "Current" is the open-ended answer set (start, no end) of each snapshot.
    Statements match on value and dates: by QID when every statement of the
    fact has one on both sides, else by case-folded label.
    """
    changes = []
    for fact_id in sorted(set(a.answers) & set(b.answers)):
        old, new = a.answers[fact_id], b.answers[fact_id]
        # Compare by QID only when both sides have them (the shipped DyKnow snapshot has labels only).
        by_qid = all(s.qid for s in (*old.statements, *new.statements))
        old_keys = {_key(s, by_qid): s for s in old.statements}
        new_keys = {_key(s, by_qid): s for s in new.statements}
        added = tuple(s for k, s in new_keys.items() if k not in old_keys)
        removed = tuple(s for k, s in old_keys.items() if k not in new_keys)
        current_changed = {_key(s, by_qid)[0] for s in old.current()} != {_key(s, by_qid)[0] for s in new.current()}
        if added or removed or current_changed:
            changes.append(
                FactDiff(
                    fact_id=fact_id,
                    old_current=_labels(old.current()),
                    new_current=_labels(new.current()),
                    current_changed=current_changed,
                    added=added,
                    removed=removed,
                )
            )
    return SnapshotDiff(
        old=a.name,
        new=b.name,
        facts=changes,
        only_in_old=sorted(set(a.answers) - set(b.answers)),
        only_in_new=sorted(set(b.answers) - set(a.answers)),
    )
