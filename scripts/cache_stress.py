"""Many processes on one call cache at once: nothing a finished batch reported written is lost, nobody crashes.

    python scripts/cache_stress.py CACHE [--seconds 60] [--writers 4] [--readers 2] [--kill-every 3] [--checks 2]

Writers store batches of answers with distributions of the real sizes (Gemma 3 270M's 262k-token
float32 vector, about 1 MB; SmolLM2's 49k, about 185 KB), reopen the cache now and then (a second
connection in the same process, as ``chronoprobe check`` opens one per lens), and log each batch's keys
only once ``put_many`` has returned: that log is what was "reported written". Readers look keys up and
count; a checkpointer truncates the WAL over and over while it opens and closes the cache (each close
may take itself for the last connection). Every ``--kill-every`` seconds a random writer is killed with
SIGKILL and started again. ``--checks N`` adds N processes running ``chronoprobe check`` on a mock model
over two lenses, one check after another, each of which must succeed. At the end every logged key must
be in the cache with its exact distribution, and every process that was not killed must have exited 0
with nothing on stderr.

Exit status 0 when nothing was lost and nothing crashed, 1 otherwise. tests/test_cache_processes.py runs it
small; docs/scale.md gives a longer run's numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from chronoprobe.cache import CacheEntry, CallCache

SIZES = (262_144, 49_152)
"""Distribution lengths: Gemma 3 270M's vocabulary (1 MB of float32), SmolLM2's (about 185 KB)."""


def _pool(rng: np.random.Generator) -> dict[int, np.ndarray]:
    """One distribution per size, drawn once: it hardly compresses, as a real one."""
    return {size: rng.dirichlet(np.full(size, 0.5)).astype(np.float32) for size in SIZES}


def _distribution(pool: dict[int, np.ndarray], rng: np.random.Generator, size: int) -> np.ndarray:
    array = pool[size].copy()
    array[rng.integers(0, size, 8)] = rng.random(8, dtype=np.float32)  # each answer's own, cheaply
    return array


def writer(cache_path: Path, log: Path, number: int, until: float) -> None:
    rng = np.random.default_rng([number, os.getpid()])
    cache = CallCache(cache_path)
    batch, pool = 0, _pool(rng)
    reported = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    while time.time() < until:
        batch += 1
        items = []
        for index in range(int(rng.integers(1, 4))):
            array = _distribution(pool, rng, SIZES[index % 2])
            key = f"w{number}-{os.getpid()}-{batch}-{index}"
            items.append((key, {"sum": float(array.astype(np.float64).sum()), "n": array.size}, array))
        cache.put_many("stress", items)
        # one write per batch, after put_many returned: a kill leaves a batch logged whole or not at all
        os.write(reported, "".join(json.dumps([k, p]) + "\n" for k, p, _ in items).encode())
        if rng.random() < 0.2:  # a lens ends, the next opens its own cache on the same file
            cache = CallCache(cache_path)


def reader(cache_path: Path, logs: list[Path], until: float) -> None:
    rng = random.Random(os.getpid())
    while time.time() < until:
        cache = CallCache(cache_path)
        keys = [json.loads(line)[0] for log in logs if log.exists() for line in log.read_text().splitlines()[-20:]]
        cache.get_entries(rng.sample(keys, min(len(keys), 5)))
        cache.count()
        cache.close()
        time.sleep(rng.uniform(0.0, 0.5))  # a `results` or `history` now and then, not a tight loop


def checkpointer(cache_path: Path, until: float) -> None:
    while time.time() < until:
        conn = sqlite3.connect(cache_path, timeout=30)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        CallCache(cache_path).close()  # opening while another checkpoints, then closing as maybe the last
        time.sleep(0.05)


def checker(cache_path: Path, number: int, until: float) -> None:
    """``chronoprobe check`` over two lenses of a mock model, again and again: each lens opens its own cache
    while the previous one's connection is still alive, as the crashed check did. Every one must succeed."""
    runs = 0
    while time.time() < until:
        runs += 1
        out = cache_path.with_name(f"{cache_path.name}.check{number}-{runs}")
        model = f"mock:constant=answer {number}-{runs}"  # new answers: every run writes
        command = [sys.executable, "-m", "chronoprobe", "check", "-m", model, "--lens", "outdated", "--lens"]
        command += ["recency", "--budget", "quick", "--cache", str(cache_path), "--out", str(out)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            sys.stderr.write(f"check exited {done.returncode}: {done.stderr[-300:]}")
            sys.exit(1)


def _start(role: str, args: argparse.Namespace, *extra: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, __file__, str(args.cache), "--role", role, "--until", str(args.until), *extra]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _lost(cache_path: Path, logs: list[Path]) -> tuple[int, list[str]]:
    reported = dict(json.loads(line) for log in logs if log.exists() for line in log.read_text().splitlines())
    entries = CallCache(cache_path).get_entries(list(reported))
    return len(reported), [key for key, payload in reported.items() if not _intact(entries.get(key), payload)]


def _intact(entry: CacheEntry | None, payload: dict[str, float]) -> bool:
    if entry is None or entry.payload != payload or entry.array is None:
        return False
    return entry.array.size == payload["n"] and float(entry.array.astype(np.float64).sum()) == payload["sum"]


def drive(args: argparse.Namespace) -> int:
    args.until = time.time() + args.seconds
    logs = [args.cache.with_name(f"{args.cache.name}.writer{n}.log") for n in range(args.writers)]
    writers = {n: _start("writer", args, "--number", str(n), "--log", str(logs[n])) for n in range(args.writers)}
    others = [_start("reader", args, *(a for log in logs for a in ("--log", str(log)))) for _ in range(args.readers)]
    others.append(_start("checkpointer", args))
    others += [_start("checker", args, "--number", str(n)) for n in range(args.checks)]
    rng, kills, crashed = random.Random(args.seed), 0, []
    while time.time() < args.until - args.kill_every:
        time.sleep(rng.uniform(0.5, 1.5) * args.kill_every)
        victim = rng.choice(sorted(writers))
        writers[victim].send_signal(signal.SIGKILL)
        writers[victim].wait()
        kills += 1
        writers[victim] = _start("writer", args, "--number", str(victim), "--log", str(logs[victim]))
    for role, process in [
        *(("writer", w) for w in writers.values()),
        *(("reader, checkpointer or check", o) for o in others),
    ]:
        _, stderr = process.communicate(timeout=args.seconds + 120)
        if process.returncode != 0 or stderr.strip():
            crashed.append(f"a {role} exited {process.returncode}: {stderr.decode()[-300:].strip()}")
    reported, lost = _lost(args.cache, logs)
    print(json.dumps({"reported_written": reported, "lost": len(lost), "kills": kills, "crashed": crashed}))
    return 1 if lost or crashed else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cache", type=Path)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--kill-every", type=float, default=3.0)
    parser.add_argument("--checks", type=int, default=0, help="chronoprobe check processes (mock model) beside")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--role", choices=["driver", "writer", "reader", "checkpointer", "checker"], default="driver")
    parser.add_argument("--until", type=float, default=0.0)
    parser.add_argument("--number", type=int, default=0)
    parser.add_argument("--log", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    if args.role == "writer":
        writer(args.cache, args.log[0], args.number, args.until)
    elif args.role == "reader":
        reader(args.cache, args.log, args.until)
    elif args.role == "checkpointer":
        checkpointer(args.cache, args.until)
    elif args.role == "checker":
        checker(args.cache, args.number, args.until)
    else:
        return drive(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
