"""The call cache's file underneath: how an answer's array is stored, who has the file open, what it holds.

**Arrays.** A conflicts run stores each sample's mean next-token distribution: a float32 over the whole
vocabulary (49,152 entries for SmolLM2, 262,144 for Gemma 3). Coherent Persuasion takes KL divergences
of cluster means of these, and a KL term ``P_v ln(P_v / Q_v)`` needs ``Q_v`` to its full relative
precision wherever ``P_v`` is large, however small ``Q_v`` is: dropping or coarsening the tail moves CP
by more than 1e-6 (docs/scale.md has the measurements). So arrays are kept bit for bit. They are
written byte-shuffled (every value's first bytes, then every value's second bytes ...), which puts the
exponents side by side where zlib finds them, before the compression releases before 0.4 used
(``zlib(np.save(array))``, level 1). Both layouts are read: a blob names its layout by its first bytes.

**In use.** Every open :class:`~chronoprobe.cache.CallCache` holds a shared lock on a file beside the
cache (``<cache>.inuse``, :func:`hold_in_use`); ``chronoprobe cache prune`` deletes only under the
exclusive one, so it never runs while another process has the cache open, reading or writing.

**Usage.** :func:`usage` sums the stored bytes per namespace (``model:<model id>`` for a model's answers,
a judge's or the editing lens's own names beside them), and :func:`prune` deletes calls by namespace,
model and age in one transaction.
"""

from __future__ import annotations

import io
import os
import sqlite3
import struct
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from chronoprobe.errors import ConfigError, DataError

__all__ = [
    "NamespaceUsage",
    "Pruned",
    "decode_array",
    "encode_array",
    "encode_array_before_0_4",
    "exclusive_use",
    "hold_in_use",
    "in_use_path",
    "prune",
    "usage",
]

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; prune then relies on SQLite's own write lock alone
    fcntl = None  # type: ignore[assignment]  # a module or nothing, by platform

_SHUFFLED = b"CPS1"
"""The first bytes of a byte-shuffled array blob (an older blob is a zlib stream: its first byte is 0x78)."""
_LEVEL = 1
"""zlib level: on real distributions level 6 saves under 1% more and takes twice as long (docs/scale.md)."""
MODEL_PREFIX = "model:"
"""The namespace of a model's answers is ``model:<model id>`` (:mod:`chronoprobe.cache`)."""


def encode_array(array: np.ndarray | None) -> bytes | None:
    """``array`` as stored: its dtype and shape, then its bytes shuffled by position within a value, zlib'd."""
    if array is None:
        return None
    values = np.asarray(array)
    if not values.flags.c_contiguous:  # copied only then (np.ascontiguousarray would make a 0-d array 1-d)
        values = values.copy(order="C")
    width = values.dtype.itemsize
    kind = values.dtype.str.encode("ascii")
    header = struct.pack(f"<B{len(kind)}sB{values.ndim}Q", len(kind), kind, values.ndim, *values.shape)
    raw = values.reshape(-1).view(np.uint8)
    shuffled = raw.reshape(-1, width).T.tobytes() if width > 1 and raw.size else raw.tobytes()
    return _SHUFFLED + header + zlib.compress(shuffled, _LEVEL)


def encode_array_before_0_4(array: np.ndarray | None) -> bytes | None:
    """The layout releases before 0.4 wrote (``np.save`` then zlib level 1): still read, written by tests and
    ``benchmarks/cache_bytes.py`` only."""
    if array is None:
        return None
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return zlib.compress(buffer.getvalue(), level=1)


def decode_array(blob: bytes | None) -> np.ndarray | None:
    """The array a blob holds, in either layout, bit for bit as it was given."""
    if blob is None:
        return None
    blob = bytes(blob)
    if not blob.startswith(_SHUFFLED):
        array: np.ndarray = np.load(io.BytesIO(zlib.decompress(blob)), allow_pickle=False)
        return array
    at = len(_SHUFFLED)
    (kind_length,) = struct.unpack_from("<B", blob, at)
    (kind, ndim) = struct.unpack_from(f"<{kind_length}sB", blob, at + 1)
    at += 2 + kind_length
    shape = struct.unpack_from(f"<{ndim}Q", blob, at)
    dtype = np.dtype(kind.decode("ascii"))
    raw = np.frombuffer(zlib.decompress(blob[at + 8 * ndim :]), dtype=np.uint8)
    if dtype.itemsize > 1 and raw.size:
        raw = raw.reshape(dtype.itemsize, -1).T
    restored: np.ndarray = raw.copy(order="C").view(dtype).reshape(shape)
    return restored


# -- who has the cache open -------------------------------------------------------------------------


def in_use_path(cache: Path) -> Path:
    """The lock file beside ``cache`` that every process with the cache open holds shared."""
    return cache.with_name(cache.name + ".inuse")


def hold_in_use(cache: Path) -> IO[bytes] | None:
    """Hold ``cache``'s in-use lock shared until the returned handle is closed (None where locks are not offered
    or the folder is read-only: then a prune is not kept out, as before)."""
    if fcntl is None:
        return None
    try:
        handle = in_use_path(cache).open("ab")
    except OSError:
        return None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
    except OSError:
        handle.close()
        return None
    return handle


@contextmanager
def exclusive_use(cache: Path) -> Iterator[None]:
    """Hold ``cache``'s in-use lock alone: a ConfigError at once while another process has the cache open."""
    if fcntl is None:
        yield
        return
    with in_use_path(cache).open("ab") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ConfigError(
                f"call cache {cache}",
                "another chronoprobe process has it open (a run, a check, a notebook); prune once it has finished",
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


# -- what the cache holds -----------------------------------------------------------------------------


@dataclass(frozen=True)
class NamespaceUsage:
    """One namespace of a call cache: its calls, their stored bytes (answer and array), and when they were written."""

    namespace: str
    calls: int
    payload_bytes: int
    array_bytes: int
    oldest: float
    newest: float

    @property
    def model(self) -> str | None:
        """The model id of a model's namespace; None for a judge's or a lens's own."""
        return self.namespace.removeprefix(MODEL_PREFIX) if self.namespace.startswith(MODEL_PREFIX) else None

    @property
    def stored_bytes(self) -> int:
        return self.payload_bytes + self.array_bytes


@dataclass(frozen=True)
class Pruned:
    """What a prune removed (or, with ``dry_run``, would remove)."""

    calls: int
    stored_bytes: int
    namespaces: list[str]


def _read_only(cache: Path) -> sqlite3.Connection:
    if not cache.is_file():
        raise ConfigError(f"call cache {cache}", "does not exist (nothing has been cached there yet)")
    return sqlite3.connect(f"{cache.resolve().as_uri()}?mode=ro", uri=True, timeout=30)


def _calls_table(connection: sqlite3.Connection, cache: Path) -> None:
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise DataError(f"call cache {cache}", f"cannot be read ({exc})") from None
    if "calls" not in tables:
        raise ConfigError(f"call cache {cache}", "is an SQLite database but not a chronoprobe call cache")


_USAGE = (
    "SELECT namespace, COUNT(*), COALESCE(SUM(LENGTH(payload)), 0), COALESCE(SUM(LENGTH(array)), 0), "
    "MIN(created), MAX(created) FROM calls {where} GROUP BY namespace ORDER BY namespace"
)


def usage(cache: Path) -> list[NamespaceUsage]:
    """Every namespace of ``cache`` with its calls and stored bytes, read without writing to the file."""
    connection = _read_only(cache)
    try:
        _calls_table(connection, cache)
        rows = connection.execute(_USAGE.format(where="")).fetchall()
    except sqlite3.DatabaseError as exc:
        raise DataError(f"call cache {cache}", f"cannot be read ({exc})") from None
    finally:
        connection.close()
    return [NamespaceUsage(str(n), int(c), int(p), int(a), float(lo), float(hi)) for n, c, p, a, lo, hi in rows]


def _selection(namespaces: Sequence[str], models: Sequence[str], before: float | None) -> tuple[str, list[object]]:
    clauses: list[str] = []
    values: list[object] = []
    chosen = [*namespaces, *(MODEL_PREFIX + model for model in models)]
    if chosen:
        clauses.append(f"namespace IN ({','.join('?' * len(chosen))})")
        values.extend(chosen)
    if before is not None:
        clauses.append("created < ?")
        values.append(before)
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", values


def prune(
    cache: Path,
    *,
    namespaces: Sequence[str] = (),
    models: Sequence[str] = (),
    older_than_days: float | None = None,
    dry_run: bool = False,
) -> Pruned:
    """Delete the calls of these namespaces and models (any of them; none named: every one) written more than
    ``older_than_days`` ago (None: at any time), in one transaction, while no other process has the cache open."""
    before = None if older_than_days is None else time.time() - older_than_days * 86400
    where, values = _selection(namespaces, models, before)
    with exclusive_use(cache):
        connection = sqlite3.connect(str(cache), timeout=0.5)
        try:
            _calls_table(connection, cache)
            found = connection.execute(_USAGE.format(where=where), values).fetchall()
            removed = Pruned(
                calls=sum(int(row[1]) for row in found),
                stored_bytes=sum(int(row[2]) + int(row[3]) for row in found),
                namespaces=[str(row[0]) for row in found],
            )
            if not dry_run and removed.calls:
                with connection:  # BEGIN IMMEDIATE: refused at once while another connection writes
                    connection.execute("BEGIN IMMEDIATE")
                    connection.execute(f"DELETE FROM calls {where}", values)
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                connection.execute("VACUUM")  # give the space back to the disk
        except sqlite3.OperationalError as exc:
            raise ConfigError(f"call cache {cache}", f"cannot be pruned now ({exc}); try again") from None
        except sqlite3.DatabaseError as exc:
            raise DataError(f"call cache {cache}", f"cannot be read ({exc})") from None
        finally:
            connection.close()
    return removed


def file_bytes(cache: Path) -> int:
    """The cache's size on disk, its write-ahead log included."""
    return sum(os.path.getsize(p) for p in (cache, cache.with_name(cache.name + "-wal")) if p.is_file())
