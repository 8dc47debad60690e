"""Atomic file output: a result file is either complete or absent."""

from __future__ import annotations

import glob
import gzip
import json
import os
import tempfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chronoprobe.errors import DataError


def _umask_mode() -> int:
    # mkstemp creates files 0600; result files should get the usual umask-based mode.
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove what a write of ``path`` killed between its temporary file and the rename left beside it
    (``.<name>.<random>.tmp``); returns what went. Only for a file whose writer holds the folder (its lock)."""
    if not path.parent.is_dir():
        return []
    stale = [p for p in path.parent.glob(f".{glob.escape(path.name)}.*.tmp") if p.is_file() and not p.is_symlink()]
    for found in stale:
        found.unlink(missing_ok=True)
    return stale


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def write_jsonl_atomic(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows)
    write_text_atomic(path, text)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def staging_dir(target: Path) -> Path:
    """An empty folder beside ``target`` to build it in before an atomic rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    os.chmod(path, _umask_mode() | 0o111)  # folders need the search bit
    return path


def read_text(path: Path, where: str | None = None, *, encoding: str = "utf-8") -> str:
    """A text file's contents; a file that cannot be read or is not UTF-8 is a one-line DataError.

    ``where`` names the file in the message (default: its path). A name ending in ``.gz`` is
    decompressed, with the same newline handling as a plain file.
    """
    where = where or str(path)
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding=encoding) as handle:
                return handle.read()
        return path.read_text(encoding=encoding)
    except (gzip.BadGzipFile, EOFError, zlib.error):
        raise DataError(where, "is not a readable gzip file (damaged or truncated)") from None
    except UnicodeDecodeError as exc:
        raise not_utf8(where, exc) from None
    except IsADirectoryError:
        raise DataError(where, "is a folder, not a file") from None
    except FileNotFoundError:
        raise DataError(where, "file not found") from None
    except OSError as exc:
        raise DataError(where, f"cannot read it ({exc.strerror or exc})") from None


def json_kind(value: object) -> str:
    """What a parsed JSON value is, in words, for an error message (None: an absent key or null)."""
    if value is None:
        return "missing or null"
    names = {bool: "a boolean", str: "a string", list: "a list", dict: "an object", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def not_utf8(where: str, exc: UnicodeDecodeError) -> DataError:
    """The one-line error for a file that is not UTF-8 text."""
    bad = exc.object[exc.start : exc.start + 1].hex()
    return DataError(where, f"is not UTF-8 text (byte 0x{bad} at offset {exc.start}); save it as UTF-8")
