"""Compare the numbers of two result folders of the same lens: are the summaries identical?

    python scripts/compare_summaries.py BEFORE_DIR AFTER_DIR

Reads each folder's ``summary.json``, drops what legitimately differs between two runs (the
provenance: timestamps, command, durations, new-call counts), and prints the differing paths.
Exit status 0 when the numbers are identical, 1 otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _numbers(folder: Path) -> Any:
    data = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    data.pop("provenance", None)
    for run in data.get("runs", []) if isinstance(data, dict) else []:
        run.pop("confusion_png", None)
    return data


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}/{k}: only in one" for k in sorted(set(a) ^ set(b), key=str)]
        for key in sorted(set(a) & set(b), key=str):
            out += _diff(a[key], b[key], f"{path}/{key}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} entries"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = (Path(p) for p in argv)
    differences = _diff(_numbers(before), _numbers(after))
    for line in differences:
        print(line)
    print("identical" if not differences else f"{len(differences)} difference(s)")
    return 0 if not differences else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
