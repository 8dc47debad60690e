"""Bytes the call cache stores per model call and per item, for every lens on the embedded models, before and after.

"Before" is the layout releases before 0.4 wrote (each array ``np.save``'d, then zlib level 1); "after" is
today's (:mod:`chronoprobe.cache_admin`: the array's bytes shuffled, then zlib). Each lens runs at a small size
into a cache of its own, so that every byte is the lens's; each stored answer is then measured in both layouts
(its JSON answer, plus its array where it has one) and checked to come back bit for bit from both. The lens's
items are the rows of its run. Usage:

    python benchmarks/cache_bytes.py [--model smollm2 --model gemma3-270m] [--lens outdated,conflicts,recency,editing]
                                     [--size 3] [--cache PATH ...]

``--cache PATH`` measures caches written already (per namespace, no items) instead of running the lenses.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import chronoprobe as cp
from chronoprobe.cache_admin import decode_array, encode_array, encode_array_before_0_4

SMALL: dict[str, Any] = {
    "outdated": lambda size: {"limit": size},
    "conflicts": lambda size: {"dataset": "dynamicqa", "balanced_limit": size},
    "recency": lambda size: {"sample": size, "strategy": ("zero-shot",)},
    "editing": lambda size: {
        "method": ("ike-null",),
        "balanced_limit": size,
        "select": "not-up-to-date",  # a small audit may hold no outdated answer at all
        "locality": False,
        "fluency": False,
    },
}
"""Each lens's options at ``--size`` (facts, questions or items); editing edits the facts of the model's outdated
run (run first when asked, else here)."""


@dataclass
class Tally:
    calls: int = 0
    with_array: int = 0
    before: int = 0
    after: int = 0
    array_before: int = 0
    array_after: int = 0

    def add(self, payload: bytes, blob: bytes | None) -> None:
        array = decode_array(blob)
        old, new = encode_array_before_0_4(array), encode_array(array)
        if array is not None:  # both layouts give back the array bit for bit
            for encoded in (old, new):
                back = decode_array(encoded)
                assert back is not None and back.dtype == array.dtype and back.tobytes() == array.tobytes()
        self.calls += 1
        self.with_array += array is not None
        self.before += len(payload) + len(old or b"")
        self.after += len(payload) + len(new or b"")
        self.array_before += len(old or b"")
        self.array_after += len(new or b"")


def measure(cache: Path) -> dict[str, Tally]:
    """Every stored answer of ``cache`` in both layouts, per namespace."""
    tallies: dict[str, Tally] = {}
    connection = sqlite3.connect(f"{cache.resolve().as_uri()}?mode=ro", uri=True)
    try:
        for namespace, payload, blob in connection.execute("SELECT namespace, payload, array FROM calls"):
            tallies.setdefault(str(namespace), Tally()).add(str(payload).encode("utf-8"), blob)
    finally:
        connection.close()
    return tallies


def _kb(count: float) -> str:
    return f"{count / 1e3:9.1f}"


def print_header(first: str) -> None:
    print(
        f"{first:44s} {'calls':>6s} {'arrays':>6s} {'kB/call before':>15s} {'after':>9s} {'after/before':>12s} "
        f"{'array kB before':>15s} {'after':>9s} {'kB/item before':>15s} {'after':>9s}"
    )


def print_row(label: str, tally: Tally, items: int | None) -> None:
    calls = max(tally.calls, 1)
    arrays = max(tally.with_array, 1)
    share = f"{100 * tally.after / tally.before:11.1f}%" if tally.before else f"{'-':>12s}"
    per_item = f"{_kb(tally.before / items):>15s} {_kb(tally.after / items)}" if items else f"{'-':>15s} {'-':>9s}"
    array = (
        f"{_kb(tally.array_before / arrays):>15s} {_kb(tally.array_after / arrays)}"
        if tally.with_array
        else f"{'-':>15s} {'-':>9s}"
    )
    print(
        f"{label:44.44s} {tally.calls:6d} {tally.with_array:6d} {_kb(tally.before / calls):>15s} "
        f"{_kb(tally.after / calls)} {share} {array} {per_item}",
        flush=True,
    )


def run_lenses(models: list[str], lenses: list[str], size: int) -> int:
    print_header("lens / model (model calls only; judges apart)")
    with tempfile.TemporaryDirectory(prefix="cache-bytes-") as scratch:
        for lens in lenses:
            for position, model in enumerate(models):
                cache = Path(scratch) / f"{lens}-{position}.sqlite"  # a spec may be a path: named by position
                started = time.perf_counter()
                options = SMALL[lens](size)
                if lens == "editing":  # its facts come from an outdated run of the same model
                    audit = Path(scratch) / f"outdated-{position}"
                    if not audit.is_dir():
                        elsewhere = Path(scratch) / f"audit-{position}.sqlite"  # not counted as the edits' bytes
                        cp.run("outdated", model, out=audit, cache=elsewhere, progress=False, **SMALL["outdated"](size))
                    options["from_"] = audit
                try:
                    run = cp.run(
                        lens, model, out=Path(scratch) / f"{lens}-{position}", cache=cache, progress=False, **options
                    )
                except cp.ChronoprobeError as exc:  # one lens that cannot run at this size leaves the others
                    print(f"{lens} / {model}: not measured ({exc})", flush=True)
                    continue
                items = len(run.rows)
                tallies = measure(cache)
                model_calls = Tally()
                for namespace, tally in tallies.items():
                    if namespace.startswith("model:"):
                        for field in vars(model_calls):
                            setattr(model_calls, field, getattr(model_calls, field) + getattr(tally, field))
                print_row(f"{lens} / {model} ({time.perf_counter() - started:.0f} s)", model_calls, items)
                for namespace, tally in sorted(tallies.items()):
                    if not namespace.startswith("model:"):
                        print_row(f"  {namespace}", tally, None)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", help="model spec (repeatable; default: both embedded models)")
    parser.add_argument("--lens", default="outdated,conflicts,recency,editing", help="comma list of lenses")
    parser.add_argument("--size", type=int, default=3, help="facts, questions or items per lens (default 3)")
    parser.add_argument("--cache", type=Path, action="append", help="measure this cache instead (repeatable)")
    args = parser.parse_args()
    if args.cache:
        print_header("cache / namespace")
        for cache in args.cache:
            for namespace, tally in sorted(measure(cache).items()):
                print_row(f"{cache.name} / {namespace}", tally, None)
        return 0
    lenses = [name.strip() for name in args.lens.split(",") if name.strip()]
    unknown = sorted(set(lenses) - set(SMALL))
    if unknown:
        print(f"error: --lens: {', '.join(unknown)} not one of {', '.join(SMALL)}", file=sys.stderr)
        return 2
    return run_lenses(args.model or ["smollm2", "gemma3-270m"], lenses, args.size)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
