"""Publishing result folders: never lost, never mixed, never someone else's.

Every command that writes a results folder goes through here:

1. :class:`OutputClaim` (taken by the CLI before any model loads) checks the path,
   creates missing parents, takes an exclusive lock (``.<name>.lock`` beside the
   folder, ``fcntl.flock``), recovers from an earlier killed publish, and refuses
   a folder that is not a chronoprobe report.
2. :func:`staged` yields an empty staging folder ``.<name>.staging-<pid>-<hex>``
   beside the target. The writer fills it; the marker file ``.chronoprobe-run`` is
   written last, so a staging folder with a marker is complete.
3. Publishing swaps the staging folder with the target in one
   ``renameat2(RENAME_EXCHANGE)`` call (Linux >= 3.15, most local filesystems), so
   the path holds the whole old report or the whole new one at every instant; the
   old one is then deleted. Where the exchange is unsupported, the fallback is
   rename ``out -> .<name>.old-<pid>-<hex>``, rename ``staging -> out``, delete old.
   A kill between those two renames leaves no ``out``; the next claim notices the
   ``.old-*`` sibling and renames it back, so the next run always starts from a
   whole report (old or new) and never refuses.

Stale staging and old folders are only ever touched under the lock, so they can
belong to nobody alive and are deleted at the next claim.

Commands that write single files (a table, a card, a dataset and its record) go through
:func:`staged_files`: the same lock and staging folder, then each file is renamed into place.
Every writer refuses an output that is, lies inside or holds an input of the same command
(:func:`check_not_input`), a folder holding another kind of report, and a file it did not
write; folders a claim created are removed again if the command fails.

An :class:`Output` declares one thing a command writes with the rule that says when an existing
one is its own to replace: a :class:`ResultFolder` of one kind, or a :class:`RecordedFile` whose
JSON record beside it marks it as written by that command. A :class:`~chronoprobe.contract.tool.Tool`
declares its output this way, and the runner checks, claims and stages it.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import strip_url_credentials
from chronoprobe.records.runlog import MARKER as MARKER  # re-exported: older code and tests import it from here
from chronoprobe.records.runlog import RUN_LOG, SUMMARY

"""File in every folder chronoprobe publishes; its presence marks the folder as ours."""

_held: dict[Path, tuple[OutputClaim, int]] = {}
_held_guard = threading.Lock()
_sigterm_before: Any = None
"""The SIGTERM handler before the first claim installed ours (restored when the last claim is released)."""


class Terminated(SystemExit):
    """Raised in the main thread on SIGTERM while a claim is held, so every claim unwinds (lock, staging, parents)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated(128 + signum)


def _guard_sigterm() -> None:
    """While a claim is held, SIGTERM unwinds like Ctrl-C instead of killing the process where it stands,
    so no lock file or staging folder is left behind. Only where nobody else handles SIGTERM (the main
    thread, the default handler): a host program's own handler is left alone."""
    global _sigterm_before
    if _sigterm_before is not None or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return
    _sigterm_before = signal.signal(signal.SIGTERM, _on_sigterm)


def _release_sigterm() -> None:
    global _sigterm_before
    if _sigterm_before is None or _held or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
        signal.signal(signal.SIGTERM, _sigterm_before)
    _sigterm_before = None


def _key(path: Path) -> Path:
    return Path(os.path.abspath(path))


def _lock_path(out: Path) -> Path:
    return out.parent / f".{out.name}.lock"


def _sibling_pattern(out: Path) -> re.Pattern[str]:
    return re.compile(rf"^\.{re.escape(out.name)}\.(staging|old)-\d+-[0-9a-f]+$")


def _new_sibling(out: Path, kind: str) -> Path:
    return out.parent / f".{out.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"


def is_report_folder(path: Path) -> bool:
    """A folder chronoprobe wrote: it has our marker, or (older versions) a summary.json with provenance."""
    if (path / MARKER).is_file():
        return True
    summary = path / SUMMARY
    if not summary.is_file():
        return False
    try:
        data = json.loads(summary.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("provenance"), dict)


def _nearest_existing(path: Path) -> Path:
    current = path
    while not os.path.lexists(current) and current != current.parent:
        current = current.parent
    return current


def _ensure_parent(path: Path, option: str) -> list[Path]:
    """Create ``path``'s missing parents, returning them deepest first; one-line ConfigError if that cannot work."""
    where = f"{option} {path}"
    existing = _nearest_existing(path.parent)
    if not existing.is_dir():
        raise ConfigError(where, f"{existing} is a file, not a folder")
    missing = []
    current = path.parent
    while current != existing and current != current.parent:
        missing.append(current)
        current = current.parent
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _remove_empty(missing)
        raise ConfigError(where, f"cannot create folder {path.parent} ({exc.strerror})") from None
    return missing


def _remove_empty(folders: Sequence[Path]) -> None:
    """Remove ``folders`` (deepest first) while they are empty: what a failed command created goes again."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _check_parent(path: Path, where: str) -> None:
    """Read-only: ``path``'s nearest existing ancestor is a folder we can write in (nothing is created)."""
    existing = _nearest_existing(path.parent)
    if not existing.is_dir():
        raise ConfigError(where, f"{existing} is a file, not a folder")
    _probe_writable(existing, where)


def _probe_writable(folder: Path, where: str) -> None:
    """Create and remove a file in ``folder``: the only check that also holds for root and read-only mounts."""
    probe = folder / f".chronoprobe-probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        probe.touch(exist_ok=False)
        probe.unlink()
    except OSError as exc:
        raise ConfigError(where, f"cannot write in {folder} ({exc.strerror})") from None


def check_output_file(
    path: Path,
    option: str = "--out",
    *,
    ours: Callable[[Path], bool] | None = None,
    what: str = "a file chronoprobe wrote",
) -> None:
    """Before any work: ``path`` can be written as a file. Read-only: missing folders are created at publish time.

    With ``ours``, an existing file is replaced only if ``ours(path)`` says this command wrote it.
    """
    path = Path(path)
    where = f"{option} {path}"
    _check_file_target(path, option, ours, what)
    _check_parent(path, where)
    for folder in Path(os.path.abspath(path)).parents:
        if is_report_folder(folder):  # a rerun replaces that folder whole, and this file with it
            raise ConfigError(where, f"{folder} is a result folder; write the file somewhere else")


def _check_file_target(path: Path, option: str, ours: Callable[[Path], bool] | None, what: str) -> None:
    where = f"{option} {path}"
    if path.is_dir():
        raise ConfigError(where, "is a folder; give a file path")
    if ours is not None and os.path.lexists(path) and not ours(path):
        raise ConfigError(
            where, f"exists and is not {what}; refusing to overwrite it (move it away or give another {option})"
        )


def check_output_folder(path: Path, option: str = "--output-dir") -> None:
    """Before any work: ``path`` is (or can be created as) a folder we can write files in; nothing is created."""
    path = Path(path)
    where = f"{option} {path}"
    if os.path.lexists(path) and not path.is_dir():
        raise ConfigError(where, "is a file, not a folder")
    if path.is_dir():
        _probe_writable(path, where)
    else:
        _check_parent(path, where)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


Inputs = Mapping[str, Path | None] | Iterable[tuple[str, Path | None]]
"""What a command reads, by how the user named it: ``{"--from": path}`` or ``[("RUN_DIR", path), ...]``."""


def check_not_input(outputs: Path | Sequence[Path], inputs: Inputs, option: str = "--out") -> None:
    """Refuse an output that is an input of the same command, lies inside one, or holds one.

    ``inputs`` maps how the user named each input (``--from``, ``RUN_DIR``) to its path; ``outputs``
    are the paths the command writes, ``--out`` first. A folder output is replaced whole, so one
    holding an input would delete it; a file output inside an input folder would change it.
    """
    written = [Path(outputs)] if isinstance(outputs, (str, os.PathLike)) else [Path(p) for p in outputs]
    where = f"{option} {written[0]}"
    pairs = list(inputs.items() if isinstance(inputs, Mapping) else inputs)
    for output in written:
        target = _real(output)
        for label, given in pairs:
            if given is None:
                continue
            source = _real(Path(given))
            problem = _overlap(target, source, f"the {label} input {given}", option)
            if problem is None:
                continue
            if output != written[0]:
                problem = f"would also write {output}, which {problem.removeprefix('is ')}"
            raise ConfigError(where, problem)


def check_outside(out: Path, others: Sequence[tuple[str, Path]], option: str = "--out") -> None:
    """Refuse another output of the same command that is ``out`` or lies inside it: the report replaces
    ``out`` whole, so what was written there (edited weights ...) would be deleted with the old report."""
    target = _real(out)
    for label, given in others:
        written = _real(Path(given))
        if written == target or written.is_relative_to(target):
            raise ConfigError(
                f"{label} {given}", f"lies in {option} {out}, which the report replaces whole; write it elsewhere"
            )


def _overlap(target: Path, source: Path, named: str, option: str) -> str | None:
    if target == source:
        return f"is {named}; refusing to replace what this command reads"
    if target.is_relative_to(source):
        return f"lies inside {named}; write somewhere else"
    if source.is_relative_to(target):
        return f"holds {named}, which replacing it would delete; give another {option}"
    return None


def report_kind(folder: Path) -> str | None:
    """What wrote a report folder (``outdated run``, ``conflicts run`` ...): its marker, else its run.json; None if unknown."""
    for name in (MARKER, RUN_LOG):
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("kind"), str):
            return str(data["kind"])
    return None


def _check_target(out: Path, option: str, kind: str | None = None) -> None:
    if not os.path.lexists(out):
        return
    if not out.is_dir():
        raise ConfigError(f"{option} {out}", "is a file, not a folder")
    if not any(out.iterdir()):
        return
    if not is_report_folder(out):
        raise ConfigError(
            f"{option} {out}", "exists and does not hold an earlier chronoprobe report; refusing to replace it"
        )
    found = report_kind(out)
    if kind is not None and found is not None and found != kind:
        raise ConfigError(
            f"{option} {out}",
            f"holds a report from `{found}`; `{kind}` refuses to replace it (give another {option})",
        )


def check_output_dir(out: Path, option: str = "--out", kind: str | None = None) -> None:
    """Read-only check: ``out`` is missing, empty or an earlier report (of ``kind``), and its parents can hold it."""
    out = Path(out)
    existing = _nearest_existing(out.parent)
    if not existing.is_dir():
        raise ConfigError(f"{option} {out}", f"{existing} is a file, not a folder")
    _check_target(out, option, kind)


def holds_runs(folder: Path) -> bool:
    """A folder whose marker says it holds run folders and is never replaced whole (a ``chronoprobe check``
    folder): a run folder may be written inside it."""
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("holds_runs") is True


def check_not_in_report(out: Path, option: str = "--out") -> None:
    """Refuse an output inside a folder chronoprobe wrote (a run folder, an exported task): a rerun there
    replaces that folder whole, and ``out`` with it. :class:`OutputClaim` checks it before taking the lock."""
    for folder in Path(os.path.abspath(out)).parents:
        if is_report_folder(folder) and not holds_runs(folder):
            raise ConfigError(
                f"{option} {out}",
                f"lies inside {folder}, a folder chronoprobe wrote, which a rerun replaces whole; write somewhere else",
            )


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def recover(out: Path) -> None:
    """Undo what a killed publish left beside ``out``; call with the lock held.

    A missing ``out`` with an ``.old-*`` sibling is the fallback path killed between its
    two renames: the old report goes back. Every other staging or old sibling is stale.
    """
    if not out.parent.is_dir():
        return
    pattern = _sibling_pattern(out)
    siblings = [p for p in out.parent.iterdir() if pattern.match(p.name)]
    if not os.path.lexists(out):
        olds = [p for p in siblings if ".old-" in p.name and p.is_dir() and not p.is_symlink()]
        if olds:
            newest = max(olds, key=lambda p: p.stat().st_ctime)
            os.rename(newest, out)
            siblings.remove(newest)
    for sibling in siblings:
        _remove(sibling)


class OutputClaim:
    """Exclusive right to (re)write one results folder, from the first check until publishing.

    Taken twice in one process (the CLI claims early, the writer again at publish time)
    it is shared; in another process or thread it fails with a one-line ConfigError.
    ``kind`` refuses a folder holding another kind of report; ``check`` replaces the folder
    check (file outputs). An output inside a folder chronoprobe wrote is refused (a rerun there
    would replace it whole). Parent folders the claim created are removed again on release
    if nothing was published in them.
    """

    def __init__(
        self,
        out: Path,
        option: str = "--out",
        kind: str | None = None,
        *,
        check: Callable[[Path], None] | None = None,
    ) -> None:
        self.out = _key(Path(out))
        self.shown = Path(out)
        self.option = option
        self._check = check or (lambda path: _check_target(path, option, kind))
        self._fd: int | None = None
        self._created: list[Path] = []

    def __enter__(self) -> OutputClaim:
        with _held_guard:
            held = _held.get(self.out)
            if held is not None:
                if held[1] != threading.get_ident():
                    raise ConfigError(self.option, f"another chronoprobe run is writing {self.shown}")
                self._fd = None  # shared: the first claim keeps the lock
                self._check(self.shown)
                return self
            check_not_in_report(self.shown, self.option)  # before the lock file goes beside it
            self._acquire()
            _held[self.out] = (self, threading.get_ident())
            _guard_sigterm()
        try:
            recover(self.out)
            self._check(self.shown)
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._release()

    def _acquire(self) -> None:
        where = f"{self.option} {self.shown}"
        self._created = _ensure_parent(self.out, self.option)
        lock = _lock_path(self.out)
        while True:
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as exc:
                _remove_empty(self._created)
                raise ConfigError(where, f"cannot write in {self.out.parent} ({exc.strerror})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                _remove_empty(self._created)
                raise ConfigError(self.option, f"another chronoprobe run is writing {self.shown}") from None
            # The holder before us may have unlinked the lock file on release: then ours is stale.
            try:
                same = os.stat(lock).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._fd = fd
                return
            os.close(fd)

    def _release(self) -> None:
        if self._fd is None:
            return
        with _held_guard:
            _held.pop(self.out, None)
            try:
                _lock_path(self.out).unlink(missing_ok=True)  # while still locked, see _acquire
            finally:
                os.close(self._fd)
                self._fd = None
                _release_sigterm()
        _remove_empty(self._created)  # a failed command leaves no folder it created
        self._created = []


USE_EXCHANGE = True
"""Tests set this False to exercise the two-rename fallback."""
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _libc_renameat2() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    func = getattr(libc, "renameat2", None)
    if func is not None:
        func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        func.restype = ctypes.c_int
    return func


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap two existing paths; False where the system or filesystem cannot."""
    func = _libc_renameat2()
    if func is None:
        return False
    result = func(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def publish(staging: Path, out: Path) -> None:
    """Move a complete staging folder to ``out``, replacing what is there; call with the lock held."""
    if not os.path.lexists(out):
        os.rename(staging, out)
        return
    if USE_EXCHANGE and exchange(staging, out):
        _remove(staging)  # now holds the old report
        return
    old = _new_sibling(out, "old")
    os.rename(out, old)
    os.rename(staging, out)
    _remove(old)


def _write_marker(folder: Path, kind: str) -> None:

    record = {
        "kind": kind,
        "written": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": strip_url_credentials(" ".join(sys.argv)),
    }
    (folder / MARKER).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


@contextmanager
def staged(out: Path, kind: str, option: str = "--out") -> Iterator[Path]:
    """Yield an empty folder to write a results folder in; publish it as ``out`` if the block succeeds.

    If the block raises, ``out`` keeps what it held and the staging folder is removed. A folder
    holding another kind of report is refused.
    """
    out = Path(out)
    with OutputClaim(out, option, kind) as claim:
        staging = _new_sibling(claim.out, "staging")
        staging.mkdir()
        try:
            yield staging
            _write_marker(staging, kind)
            publish(staging, claim.out)
        finally:
            if os.path.lexists(staging):
                _remove(staging)


@contextmanager
def staged_files(
    out: Path,
    option: str = "--out",
    *,
    ours: Callable[[Path], bool] | None = None,
    what: str = "a file chronoprobe wrote",
) -> Iterator[Path]:
    """Yield an empty staging folder for a command that writes files; publish them beside ``out``.

    Write ``out.name`` (and companions such as ``<stem>.report.json``) into the yielded folder. If
    the block succeeds, each file is renamed into ``out``'s folder, ``out`` itself last; if it
    raises, nothing is written and folders created for ``out`` are removed. Claimed like a results
    folder, so two commands never write the same file; ``ours`` refuses a file this command did not write.
    """
    out = Path(out)
    with OutputClaim(out, option, check=lambda path: _check_file_target(path, option, ours, what)) as claim:
        staging = _new_sibling(claim.out, "staging")
        staging.mkdir()
        try:
            yield staging
            names = sorted(p.name for p in staging.iterdir())
            for name in sorted(names, key=lambda n: n == claim.out.name):
                os.replace(staging / name, claim.out.parent / name)
        finally:
            if os.path.lexists(staging):
                _remove(staging)


# --- what a command writes, and when an existing one is its own to replace -------------------------


def text_digest(text: str) -> str:
    """The SHA-256 of ``text`` as UTF-8: what a :class:`RecordedFile` record with a checksum holds."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _json_object(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return record if isinstance(record, dict) else None


@dataclass(frozen=True)
class ResultFolder:
    """A results folder, staged and swapped in whole. An existing folder is replaced only when it is
    empty or holds an earlier report of the same ``kind`` (its marker says so)."""

    kind: str

    def companions(self, path: Path) -> list[Path]:
        return []

    def check(self, path: Path, option: str) -> None:
        check_output_dir(path, option)  # a user's folder is named as that; another kind of report at the claim

    def claim(self, path: Path, option: str) -> OutputClaim:
        return OutputClaim(path, option, self.kind)

    def staged(self, path: Path, option: str) -> AbstractContextManager[Path]:
        return staged(path, self.kind, option)


@dataclass(frozen=True)
class OpenFolder:
    """A folder a command writes in place as it goes, and resumes (``chronoprobe check``: each lens's run folder
    published inside it as it finishes), never swapped in whole: an existing one is taken when it is empty or
    holds an earlier report of the same ``kind``. Its staging folder is itself."""

    kind: str

    def companions(self, path: Path) -> list[Path]:
        return []

    def check(self, path: Path, option: str) -> None:
        check_output_dir(path, option, kind=self.kind)

    def claim(self, path: Path, option: str) -> OutputClaim:
        return OutputClaim(path, option, self.kind)

    def staged(self, path: Path, option: str) -> AbstractContextManager[Path]:
        return nullcontext(path)


@dataclass(frozen=True)
class RecordedFile:
    """A file written with a JSON record beside it, ``<stem><suffix>`` (a provenance, a report, a build
    record): the record is what marks the file as written by this command.

    An existing file is replaced only when its record is there, is a JSON object holding ``keys`` and,
    with ``checksum``, holds the file's :func:`text_digest` as ``sha256`` (a file changed by hand is no
    longer ours); an existing record only when it holds ``keys``. Both are published together or not at all.
    """

    suffix: str
    keys: frozenset[str]
    what: str
    """What the file is, as a refusal names it: ``a dataset written by `chronoprobe recency label```."""
    record_name: str
    """What the record is, as a refusal names it: ``report`` -> ``the report of d.json``."""
    checksum: bool = False

    def record(self, path: Path) -> Path:
        return Path(path).with_name(Path(path).stem + self.suffix)

    def companions(self, path: Path) -> list[Path]:
        return [self.record(path)]

    def is_record(self, path: Path) -> bool:
        record = _json_object(path)
        return record is not None and self.keys <= set(record)

    def ours(self, path: Path) -> bool:
        """``path`` was written by this command: its record says so (and, with a checksum, still matches it)."""
        record = _json_object(self.record(path))
        if record is None or not self.keys <= set(record):
            return False
        if not self.checksum:
            return True
        try:
            return bool(record.get("sha256") == text_digest(Path(path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            return False

    def check(self, path: Path, option: str) -> None:
        check_output_file(path, option, ours=self.ours, what=self.what)
        check_output_file(
            self.record(path), option, ours=self.is_record, what=f"the {self.record_name} of {Path(path).name}"
        )

    def claim(self, path: Path, option: str) -> OutputClaim:
        return OutputClaim(path, option, check=lambda target: _check_file_target(target, option, self.ours, self.what))

    def staged(self, path: Path, option: str) -> AbstractContextManager[Path]:
        return staged_files(path, option, ours=self.ours, what=self.what)


OutputRule = ResultFolder | OpenFolder | RecordedFile


@dataclass(frozen=True)
class Output:
    """One thing a command writes: the option naming it, its path, and the rule for replacing it.

    ``check`` (read-only, before any work) refuses a path that cannot be written, is not ours to
    replace, or is, lies inside or holds an input; ``claim`` locks it for the rest of the command;
    ``staged`` yields the folder to write it in and publishes it whole when the block succeeds.
    """

    option: str
    path: Path
    rule: OutputRule

    def written(self) -> list[Path]:
        """Every path this output writes: ``path`` first, then its companions (a record)."""
        return [Path(self.path), *self.rule.companions(Path(self.path))]

    def check(self, inputs: Inputs = ()) -> None:
        self.rule.check(Path(self.path), self.option)
        check_not_input(self.written(), inputs, self.option)

    def claim(self) -> OutputClaim:
        return self.rule.claim(Path(self.path), self.option)

    def staged(self) -> AbstractContextManager[Path]:
        return self.rule.staged(Path(self.path), self.option)
