"""The one cache every model call goes through (SQLite in WAL mode).

A cached sample's key covers the model (backend, id, revision, dtype), the full
rendered prompt, every decoding parameter (seed included) and the sample index.
Results are written one batch per transaction, so a run killed with ``kill -9``
loses at most the batch in flight. Batches are planned from the *whole* prompt
list before the cache is consulted, so a resumed run feeds the model exactly
the batches an uninterrupted run would have, and ends with identical results.

Each answer is stored with its producer (backend, library version, device, dtype, threads,
batch size: :class:`~chronoprobe.models.base.Producer`) and when it was written, so a rerun served
from the cache can say what computed its answers. The cache also remembers, for local backends,
what each load gave (its description and its prompt renderings: :mod:`chronoprobe.models.lazy`),
so a rerun whose answers are all cached never loads the model.

Many processes share one cache file (by default one per user). A process never opens the file itself while
it holds a connection to it: closing any descriptor of a file drops every POSIX lock the process holds on it,
and with its locks gone another process's close takes itself for the last, checkpoints and deletes the WAL
this one still writes into (answers reported written, then lost; docs/scale.md). A transient SQLite error
(busy, locked, I/O) is retried a bounded number of times; one that stays is a
:class:`~chronoprobe.errors.CacheUnavailable`, one line naming the cache.

Schema changes are additive: a cache written by an earlier release gets the new column and
tables when opened (its answers keep serving, with no producer), and an earlier release still
reads and writes a cache with them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from chronoprobe.engines.base import Engine, ModelSource
from chronoprobe.engines.local import LocalEngine
from chronoprobe.errors import CacheUnavailable, ConfigError, DataError
from chronoprobe.models.base import (
    UNKEYED_SAMPLER,
    Backend,
    BackendInfo,
    Capability,
    DecodingParams,
    Generation,
    Producer,
    Prompt,
    Sample,
)
from chronoprobe.models.lazy import LazyBackend
from chronoprobe.models.registry import canonical_spec
from chronoprobe.paths import default_call_cache
from chronoprobe.retry import RetryPolicy

__all__ = [
    "SPEED_SAMPLES_KEPT",
    "AnswerSource",
    "AnswerTally",
    "CacheEntry",
    "CachedModel",
    "CallCache",
    "ProgressCallback",
    "SpeedSample",
    "Timing",
    "check_cache_file",
    "model_identity",
    "open_cache",
    "sample_key",
    "speed_subject",
    "stable_hash",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    payload TEXT NOT NULL,
    array BLOB,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS speed (
    subject TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    seconds REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS speed_samples (
    subject TEXT NOT NULL,
    count INTEGER NOT NULL,
    seconds REAL NOT NULL,
    load REAL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS speed_samples_by_subject ON speed_samples (subject);
CREATE TABLE IF NOT EXISTS producers (
    id INTEGER PRIMARY KEY,
    producer TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS loads (
    key TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS renders (
    key TEXT PRIMARY KEY,
    rendered TEXT NOT NULL
);
"""
SPEED_SAMPLES_KEPT = 200
"""The most recent timed batches kept per subject, for the spread of an estimate (the running total keeps them all)."""
_ADDED_COLUMNS = {"calls": {"producer": "INTEGER"}}
"""Columns added after the first release, with their types: added in place to older caches."""


_SQLITE_MAGIC = b"SQLite format 3\x00"
# sqlite3 result codes that mean the file itself is damaged or not a database
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26
# ... and those another process's activity can cause for a moment: busy, locked, I/O error, WAL index in flux
_TRANSIENT_CODES = frozenset({5, 6, 10, 15})
_TRANSIENT_WORDS = ("locked", "busy", "disk i/o error", "locking protocol")
BUSY_TIMEOUT_S = 30.0
"""How long SQLite itself waits for another process's lock before a statement fails as busy."""
CACHE_RETRIES = RetryPolicy(max_retries=5, backoff_s=0.5, max_backoff_s=8.0)
"""Retries of an open, a read or a write that failed transiently (0.5, 1, 2, 4, 8 s apart): bounded, then one line."""

_open_here: weakref.WeakSet[CallCache] = weakref.WeakSet()
"""The caches this process has open: their files are never opened again by hand while they are (see the module)."""


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()  # a stat opens nothing, so it cannot drop a lock
    except OSError:
        return None
    return status.st_dev, status.st_ino


def held_in_this_process(path: Path) -> bool:
    """Whether a connection of this process has ``path`` open (reading its bytes by hand would drop its locks)."""
    identity = _file_identity(path)
    return identity is not None and any(c.identity == identity and c.is_open for c in list(_open_here))


def check_cache_file(path: Path) -> None:
    """Refuse a cache path that is a folder or a file that is not SQLite, without creating anything."""
    where = f"call cache {path}"
    if path.is_dir():
        raise ConfigError(where, "is a folder; give the path of an SQLite file (it is created if missing)")
    above = next((parent for parent in path.absolute().parents if parent.exists()), None)
    if above is not None and not above.is_dir():
        raise ConfigError(where, f"cannot be created: {above} is a file, not a folder")
    if path.exists() and not held_in_this_process(path):  # one held here was checked when it was opened
        try:
            with path.open("rb") as handle:
                head = handle.read(len(_SQLITE_MAGIC))
        except OSError as exc:
            raise ConfigError(where, f"cannot read it ({exc.strerror or exc})") from None
        if head and head != _SQLITE_MAGIC:  # an empty file is a valid new database
            raise ConfigError(where, "is not an SQLite database; give another --cache path")


def _corrupt(path: Path, exc: sqlite3.DatabaseError) -> DataError:
    return DataError(
        f"call cache {path}",
        f"is damaged ({exc}); move it aside (e.g. mv {path} {path}.broken) and rerun to start a fresh cache, "
        "or pass another --cache",
    )


def _is_transient(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _TRANSIENT_CODES:
        return True
    return any(word in str(exc).lower() for word in _TRANSIENT_WORDS)


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    text = str(exc)
    return "malformed" in text or "not a database" in text


def stable_hash(obj: Any) -> str:
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _pack_array(array: np.ndarray | None) -> bytes | None:
    if array is None:
        return None
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return zlib.compress(buffer.getvalue(), level=1)


def _unpack_array(blob: bytes | None) -> np.ndarray | None:
    if blob is None:
        return None
    array: np.ndarray = np.load(io.BytesIO(zlib.decompress(blob)), allow_pickle=False)
    return array


_P = ParamSpec("_P")
_T = TypeVar("_T")


def _retried(
    doing: str,
) -> Callable[[Callable[Concatenate[CallCache, _P], _T]], Callable[Concatenate[CallCache, _P], _T]]:
    """Run the method again after a transient SQLite error (its transaction rolled back), at most
    :data:`CACHE_RETRIES` times; damage and a failure that stays become one line naming the cache."""

    def decorate(method: Callable[Concatenate[CallCache, _P], _T]) -> Callable[Concatenate[CallCache, _P], _T]:
        @wraps(method)
        def retrying(cache: CallCache, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
            return cache.retrying(lambda: method(cache, *args, **kwargs), doing)

        return retrying

    return decorate


def open_cache(path: Path | None = None) -> CallCache:
    """The call cache at ``path``, else the default one under ``CHRONOPROBE_HOME``."""

    return CallCache(path or default_call_cache())


class CallCache:
    """Key/value store of JSON payloads (plus an optional array) in SQLite WAL."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        check_cache_file(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"call cache {self.path}", f"cannot create its folder ({exc.strerror or exc})") from None
        self._lock = threading.Lock()
        self._producer_ids: dict[str, int] = {}
        self._producers: dict[int, Producer | None] = {}
        """Producers by id, as read; None for one this release cannot read (written by a later one)."""
        self.sleep: Callable[[float], None] = time.sleep
        """How a retry waits (a test may replace it)."""
        self.is_open = False
        self._conn = self.retrying(self._connect, "opened for writing")
        self.is_open = True
        self.identity = _file_identity(self.path)
        _open_here.add(self)

    def _connect(self) -> sqlite3.Connection:
        """A connection with the schema in place (one attempt: :meth:`retrying` runs it again)."""
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=BUSY_TIMEOUT_S)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # FULL: a batch reported written is on disk when put_many returns (one fsync per batch)
            conn.execute("PRAGMA synchronous=FULL")
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "calls" not in tables:
                raise ConfigError(
                    f"call cache {self.path}",
                    "is an SQLite database but not a chronoprobe call cache; give another --cache path",
                )
            conn.executescript(_SCHEMA)
            self._add_columns(conn)
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def retrying(self, attempt: Callable[[], _T], doing: str) -> _T:
        """``attempt()``, run again after a transient SQLite error up to :data:`CACHE_RETRIES` times.

        Damage is reported at once (:func:`_corrupt`); a transient error that stays is a
        :class:`~chronoprobe.errors.CacheUnavailable` naming the cache, what failed and for how long."""
        started, opening = time.monotonic(), not self.is_open
        for retry in range(CACHE_RETRIES.attempts):
            try:
                return attempt()
            except sqlite3.DatabaseError as exc:
                if _is_damage(exc):
                    raise _corrupt(self.path, exc) from None
                if not _is_transient(exc):
                    if opening and isinstance(exc, sqlite3.OperationalError):  # e.g. a read-only file or folder
                        raise ConfigError(f"call cache {self.path}", f"cannot be {doing} ({exc})") from None
                    raise
                if retry == CACHE_RETRIES.max_retries:
                    waited = time.monotonic() - started
                    raise CacheUnavailable(
                        f"call cache {self.path}",
                        f"cannot be {doing} ({exc}; {CACHE_RETRIES.attempts} attempts over {waited:.0f} s)",
                    ) from None
                self._producer_ids.clear()  # an id learned in the transaction that rolled back may be gone
                self.sleep(CACHE_RETRIES.backoff(retry + 1))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _add_columns(self, conn: sqlite3.Connection) -> None:
        for table, columns in _ADDED_COLUMNS.items():
            have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            for name, kind in columns.items():
                if name in have:
                    continue
                try:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
                except sqlite3.OperationalError as exc:
                    if "duplicate column" not in str(exc):  # another process added it first
                        raise

    def get_many(self, keys: Sequence[str]) -> dict[str, tuple[dict[str, Any], np.ndarray | None]]:
        return {key: (entry.payload, entry.array) for key, entry in self.get_entries(keys).items()}

    @_retried("read")
    def get_entries(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        """The stored entries of ``keys`` that are present, each with its producer and when it was written."""
        found: dict[str, CacheEntry] = {}
        with self._lock, self._damage_reported():
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT key, payload, array, producer, created FROM calls WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, payload, array, producer, created in rows:
                    found[key] = CacheEntry(
                        json.loads(payload), _unpack_array(array), self._producer_of(producer), float(created)
                    )
        return found

    def _producer_of(self, producer_id: int | None) -> Producer | None:
        """The producer stored under ``producer_id``; None for answers written without one (earlier releases)."""
        if producer_id is None:
            return None
        if producer_id not in self._producers:
            row = self._conn.execute("SELECT producer FROM producers WHERE id = ?", (producer_id,)).fetchone()
            try:
                self._producers[producer_id] = Producer.model_validate_json(row[0]) if row else None
            except ValueError:  # written by a later release in another shape
                self._producers[producer_id] = None
        return self._producers[producer_id]

    def _producer_id(self, producer: Producer) -> int:
        text = producer.model_dump_json()
        if text not in self._producer_ids:
            self._conn.execute("INSERT OR IGNORE INTO producers (producer) VALUES (?)", (text,))
            (found,) = self._conn.execute("SELECT id FROM producers WHERE producer = ?", (text,)).fetchone()
            self._producer_ids[text] = int(found)
        return self._producer_ids[text]

    @contextmanager
    def _damage_reported(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if _is_damage(exc):
                raise _corrupt(self.path, exc) from None
            raise

    @_retried("written")
    def put_many(
        self,
        namespace: str,
        items: Iterable[tuple[str, dict[str, Any], np.ndarray | None]],
        *,
        producer: Producer | None = None,
    ) -> None:
        now = time.time()
        rows = [
            (key, namespace, json.dumps(payload, ensure_ascii=False), _pack_array(array), now)
            for key, payload, array in items
        ]
        with self._lock, self._damage_reported(), self._conn:
            producer_id = self._producer_id(producer) if producer is not None else None
            self._conn.executemany(
                "INSERT OR REPLACE INTO calls (key, namespace, payload, array, created, producer) VALUES (?,?,?,?,?,?)",
                [(*row, producer_id) for row in rows],
            )

    # -- what local backends were and how they rendered (chronoprobe.models.lazy) --------------------

    @_retried("read")
    def get_load(self, key: str) -> dict[str, Any] | None:
        with self._lock, self._damage_reported():
            row = self._conn.execute("SELECT record FROM loads WHERE key = ?", (key,)).fetchone()
        try:
            record = json.loads(row[0]) if row else None
        except ValueError:
            return None
        return record if isinstance(record, dict) else None

    @_retried("written")
    def put_load(self, key: str, record: dict[str, Any]) -> None:
        with self._lock, self._damage_reported(), self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO loads (key, record, created) VALUES (?,?,?)",
                (key, json.dumps(record, sort_keys=True), time.time()),
            )

    @_retried("read")
    def remembered_loads(self, limit: int = 8) -> list[tuple[str, dict[str, Any]]]:
        """The most recent remembered loads (load key, description), newest first: the local models this cache
        answered for, as :mod:`chronoprobe.models.lazy` reopens them without loading."""
        with self._lock, self._damage_reported():
            rows = self._conn.execute(
                "SELECT key, record FROM loads ORDER BY created DESC LIMIT ?", (limit,)
            ).fetchall()
        found = []
        for key, record in rows:
            try:
                loaded = json.loads(record)
            except ValueError:  # a record another version wrote in another shape: not ours to read
                continue
            if isinstance(loaded, dict):
                found.append((str(key), loaded))
        return found

    @_retried("read")
    def get_renders(self, keys: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        with self._lock, self._damage_reported():
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(f"SELECT key, rendered FROM renders WHERE key IN ({marks})", chunk)
                found.update((str(key), str(rendered)) for key, rendered in rows)
        return found

    @_retried("written")
    def put_renders(self, items: Sequence[tuple[str, str]]) -> None:
        with self._lock, self._damage_reported(), self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO renders (key, rendered) VALUES (?,?)", items)

    @_retried("written")
    def add_timing(self, subject: str, count: int, seconds: float) -> None:
        """Add ``count`` timed steps (model calls, edits) that took ``seconds`` to ``subject``'s running total,
        and keep them as one sample with the machine's load average (:meth:`speed_samples`)."""
        if count <= 0:
            return
        with self._lock, self._damage_reported(), self._conn:
            self._conn.execute(
                "INSERT INTO speed (subject, count, seconds) VALUES (?,?,?) "
                "ON CONFLICT(subject) DO UPDATE SET count = count + excluded.count, seconds = seconds + excluded.seconds",
                (subject, count, seconds),
            )
            self._conn.execute(
                "INSERT INTO speed_samples (subject, count, seconds, load, created) VALUES (?,?,?,?,?)",
                (subject, count, seconds, _load_average(), time.time()),
            )
            self._conn.execute(
                "DELETE FROM speed_samples WHERE subject = ? AND rowid NOT IN "
                "(SELECT rowid FROM speed_samples WHERE subject = ? ORDER BY rowid DESC LIMIT ?)",
                (subject, subject, SPEED_SAMPLES_KEPT),
            )

    @_retried("read")
    def speed_samples(self, subject: str) -> list[SpeedSample]:
        """The most recent timed batches of ``subject``, oldest first (none for timings recorded before the samples were kept)."""
        with self._lock, self._damage_reported():
            rows = self._conn.execute(
                "SELECT count, seconds, load FROM speed_samples WHERE subject = ? AND count > 0 ORDER BY rowid",
                (subject,),
            ).fetchall()
        return [
            SpeedSample(count=int(c), seconds=float(s), load=None if load is None else float(load))
            for c, s, load in rows
        ]

    @_retried("read")
    def timing(self, subject: str) -> Timing | None:
        """What this cache measured for ``subject`` (see :func:`speed_subject`), if anything."""
        with self._lock, self._damage_reported():
            row = self._conn.execute("SELECT count, seconds FROM speed WHERE subject = ?", (subject,)).fetchone()
        return Timing(count=int(row[0]), seconds=float(row[1])) if row and row[0] > 0 else None

    @_retried("read")
    def count(self, namespace: str | None = None) -> int:
        with self._lock:
            if namespace is None:
                return int(self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
            return int(self._conn.execute("SELECT COUNT(*) FROM calls WHERE namespace = ?", (namespace,)).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self.is_open = False


@dataclass(frozen=True)
class CacheEntry:
    """One stored answer: its payload and array, what produced it (None before producers were recorded) and when."""

    payload: dict[str, Any]
    array: np.ndarray | None
    producer: Producer | None
    created: float


@dataclass(frozen=True)
class Timing:
    """Steps measured for one subject in a cache, and the seconds they took together."""

    count: int
    seconds: float

    @property
    def per_step(self) -> float:
        return self.seconds / self.count


@dataclass(frozen=True)
class SpeedSample:
    """One timed batch: its steps, their seconds, and the 1-minute load average when it ended."""

    count: int
    seconds: float
    load: float | None


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # not reported on this system
        return None


def speed_subject(spec: str, what: str = "call") -> str:
    """The speed table's key for a model spec (as given to ``--model``) and what was timed.

    A hash of the redacted spec: a key in a model URL never reaches the cache file."""

    return stable_hash({"speed": canonical_spec(spec), "what": what})


def model_identity(info: BackendInfo) -> dict[str, Any]:
    """The part of a backend's description that changes its outputs."""
    identity: dict[str, Any] = {
        "backend": info.backend,
        "model_id": info.model_id,
        "revision": info.revision,
        "dtype": info.dtype,
        "chat_template": info.chat_template,
    }
    if info.edit is not None:  # absent for unedited models, so their keys are unchanged
        identity["edit"] = info.edit
    return identity


def sample_key(info: BackendInfo, rendered_prompt: str, params: DecodingParams, index: int) -> str:
    identity = model_identity(info)
    # Greedy answers do not depend on the sampler; the unkeyed one keeps the keys of the releases that used it.
    if info.sampler not in (None, UNKEYED_SAMPLER) and not params.greedy:
        identity["sampler"] = info.sampler
    return stable_hash(
        {
            "model": identity,
            "prompt": rendered_prompt,
            "params": params.model_dump(mode="json"),
            "sample": index,
        }
    )


ProgressCallback = Callable[[int], None]


@dataclass
class AnswerSource:
    """Answers that one producer wrote (None: written before producers were recorded), and when."""

    producer: Producer | None
    answers: int
    first_written: float
    last_written: float


class AnswerTally:
    """Where the answers a model returned came from: how many the cache served, and who wrote them when.

    Every answer a call asked for is added once, served or computed, so ``answers`` is what the run asked for
    and ``answers == from_cache + computed``."""

    def __init__(self) -> None:
        self.answers = 0
        self.from_cache = 0
        self._sources: dict[str, AnswerSource] = {}

    @property
    def computed(self) -> int:
        """Answers the model computed for this run (the rest the cache served)."""
        return self.answers - self.from_cache

    def add(self, producer: Producer | None, written: float, *, cached: bool) -> None:
        self.answers += 1
        self.from_cache += cached
        key = producer.model_dump_json() if producer is not None else ""
        source = self._sources.get(key)
        if source is None:
            self._sources[key] = AnswerSource(producer, 1, written, written)
            return
        source.answers += 1
        source.first_written = min(source.first_written, written)
        source.last_written = max(source.last_written, written)

    @property
    def sources(self) -> list[AnswerSource]:
        return sorted(self._sources.values(), key=lambda s: (s.first_written, -s.answers))


class CachedModel:
    """A backend seen through the call cache. Use this, never a bare backend.

    ``engine`` runs the batches the cache misses (:mod:`chronoprobe.engines`: the local one
    unless a run picks another); ``source`` is the spec and options the backend was built from,
    which a remote engine needs to build the same backend in its workers.

    ``backend`` may be a :class:`~chronoprobe.models.lazy.LazyBackend`: it is loaded on the first
    call the cache cannot answer, or when something asks for :attr:`backend` itself. Code that
    needs only what the model is (``info``, ``capabilities``) asks this object, which never loads it.
    """

    def __init__(
        self, backend: Backend, cache: CallCache, *, source: ModelSource | None = None, engine: Engine | None = None
    ) -> None:
        self.lazy_backend = backend
        """The backend as given: possibly not loaded yet."""
        self.cache = cache
        self.source = source
        self.engine: Engine = engine or LocalEngine()
        self.calls_made = 0
        """Prompts actually sent to the backend (cache misses) in this process."""
        self.tally = AnswerTally()
        """Where the answers returned since it was last reset came from (the runner resets it per run)."""

    @property
    def backend(self) -> Backend:
        """The backend itself, loaded now if it was not."""

        given = self.lazy_backend
        return given.load() if isinstance(given, LazyBackend) else given

    @property
    def loaded(self) -> bool:
        """Whether the backend's model is in memory (False while a lazy one has served everything from the cache)."""
        return bool(getattr(self.lazy_backend, "loaded", True))

    @property
    def info(self) -> BackendInfo:
        return self.lazy_backend.info

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self.lazy_backend.capabilities

    def generate(
        self,
        prompts: Sequence[Prompt],
        params: DecodingParams,
        *,
        progress: ProgressCallback | None = None,
    ) -> list[Generation]:
        served = self._served_whole(prompts, params)
        if served is not None:  # every answer cached: no batch is planned, no model loaded
            if progress is not None and prompts:
                progress(len(prompts))
            return served
        return self._generate(self.backend, prompts, params, progress)

    def _keys(
        self, backend: Backend, prompts: Sequence[Prompt], params: DecodingParams
    ) -> tuple[list[str], list[list[str]]]:
        info = backend.info
        rendered = backend.render_many(prompts)
        return rendered, [[sample_key(info, r, params, i) for i in range(params.n)] for r in rendered]

    def _served_whole(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation] | None:
        """Every generation from the cache, or None if any sample is missing."""
        rendered, keys = self._keys(self.lazy_backend, prompts, params)
        wanted = [k for row in keys for k in row]
        entries = self.cache.get_entries(wanted)
        if len(entries) < len(set(wanted)):
            return None
        for key in wanted:
            self.tally.add(entries[key].producer, entries[key].created, cached=True)
        return [
            Generation(
                rendered_prompt=text, samples=[_sample_from_cache(entries[k].payload, entries[k].array) for k in row]
            )
            for text, row in zip(rendered, keys, strict=True)
        ]

    def _producer(self, backend: Backend) -> Producer:
        producer = backend.producer()
        if self.engine.local:
            return producer
        return producer.model_copy(update={"engine": self.engine.label, "threads": None})  # the workers' own

    def _generate(
        self, backend: Backend, prompts: Sequence[Prompt], params: DecodingParams, progress: ProgressCallback | None
    ) -> list[Generation]:
        rendered, keys = self._keys(backend, prompts, params)
        request = _Request(self, backend, prompts, params, rendered, keys, progress)
        plan = backend.plan_batches(rendered, params)
        if self.engine.local:  # look up, then run, one batch after another
            for batch in plan:
                if request.from_cache(batch):
                    request.run([batch])
            return request.results()
        if backend.info.edit is not None:
            raise ConfigError(
                f"--engine {self.engine.label}", "edited weights live in this process only; use --engine local"
            )
        # Every lookup first, then one remote run for all the misses. A batch whose missing samples
        # an earlier missed batch will produce waits for them, as it would in the local order.
        pending: list[list[int]] = []
        waiting: list[list[int]] = []
        coming: set[str] = set()
        for batch in plan:
            missing = request.from_cache(batch)
            if missing and missing <= coming:
                waiting.append(batch)
            elif missing:
                pending.append(batch)
                coming.update(k for i in batch for k in keys[i])
        request.run(pending)
        request.run([batch for batch in waiting if request.from_cache(batch)])
        return request.results()


class _Request:
    """One :meth:`CachedModel.generate` call: its prompts' keys, what the cache held for them, the answers so far."""

    def __init__(
        self,
        model: CachedModel,
        backend: Backend,
        prompts: Sequence[Prompt],
        params: DecodingParams,
        rendered: list[str],
        keys: list[list[str]],
        progress: ProgressCallback | None,
    ) -> None:
        self.model, self.backend, self.prompts, self.params = model, backend, prompts, params
        self.rendered, self.keys, self.progress = rendered, keys, progress
        self.found: list[Generation | None] = [None] * len(prompts)
        self.known: dict[str, CacheEntry] = {}
        """What the cache held for the keys looked up: an answer once cached stays the answer, even where its batch
        runs again for a sample it lacks (a sampled answer depends on its batch)."""

    def results(self) -> list[Generation]:
        return [r for r in self.found if r is not None]

    def from_cache(self, batch: list[int]) -> set[str]:
        """The batch's missing keys; none missing: its results are filled in and its progress ticked."""
        batch_keys = [k for i in batch for k in self.keys[i]]
        cached = self.model.cache.get_entries(batch_keys)
        self.known.update(cached)
        missing = set(batch_keys) - set(cached)
        if not missing:
            for i in batch:
                samples = [_sample_from_cache(cached[k].payload, cached[k].array) for k in self.keys[i]]
                self.found[i] = Generation(rendered_prompt=self.rendered[i], samples=samples)
            for key in batch_keys:
                self.model.tally.add(cached[key].producer, cached[key].created, cached=True)
            if self.progress is not None:
                self.progress(len(batch))
        return missing

    def store(self, batch: list[int], fresh: list[Generation]) -> None:
        """A batch's fresh answers, kept where the cache held none for their key, in one transaction."""
        model = self.model
        model.calls_made += len(batch)
        producer = model._producer(self.backend)
        to_store = []
        for i, generation in zip(batch, fresh, strict=True):
            samples = []
            for key, sample in zip(self.keys[i], generation.samples, strict=True):
                earlier = self.known.get(key)
                if earlier is not None:
                    samples.append(_sample_from_cache(earlier.payload, earlier.array))
                    model.tally.add(earlier.producer, earlier.created, cached=True)  # asked for, and served
                    continue
                samples.append(sample)
                payload = sample.model_dump(mode="json", exclude={"mean_distribution"})
                to_store.append((key, payload, sample.mean_distribution))
            self.found[i] = generation.model_copy(update={"samples": samples})
        # one transaction per batch: a kill loses at most this one
        model.cache.put_many(f"model:{self.backend.info.model_id}", to_store, producer=producer)
        now = time.time()
        for _ in to_store:
            model.tally.add(producer, now, cached=False)
        if self.progress is not None:
            self.progress(len(batch))

    def run(self, batches: list[list[int]]) -> None:
        """The batches on the model's engine, each stored as it comes back, with its share of the time."""
        model = self.model
        speed = speed_subject(model.source.request.spec.raw if model.source else self.backend.info.spec)
        started = time.perf_counter()
        runs = model.engine.run(
            self.backend, model.source, [[self.prompts[i] for i in b] for b in batches], self.params
        )
        for position, fresh in runs:
            self.store(batches[position], fresh)
            finished = time.perf_counter()  # the time since the previous batch: its share of the work
            model.cache.add_timing(speed, len(batches[position]), finished - started)
            started = finished


def _sample_from_cache(payload: dict[str, Any], array: np.ndarray | None) -> Sample:
    return Sample(**payload, mean_distribution=array)
