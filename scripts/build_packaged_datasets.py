"""Compress DynamicQA's and RecencyQA's files into src/chronoprobe/data/ (both MIT-licensed).

Usage: python scripts/build_packaged_datasets.py [path/to/shared/data]

Each file is gzipped unchanged (no name or time in the gzip header), so the output is
deterministic and ``gunzip`` gives back the authors' bytes: the git blob ids in each
folder's SOURCE.md still check. ``tests/datasets/test_packaged.py`` checks both.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

from chronoprobe.io import write_bytes_atomic

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = ROOT / ".." / "shared" / "data"
OUT = ROOT / "src" / "chronoprobe" / "data"
FILES = {
    "dynamicqa": ("Static_final.csv", "Temporal_final.csv", "Disputable_final.csv"),
    "recencyqa": ("RecencyQA.json",),
}


def compressed(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def main(shared: Path) -> None:
    for dataset, names in FILES.items():
        for name in names:
            write_bytes_atomic(OUT / dataset / f"{name}.gz", compressed((shared / dataset / name).read_bytes()))
            print(f"wrote {OUT / dataset / name}.gz")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SHARED)
