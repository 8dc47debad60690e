"""How long ``chronoprobe --help`` (and each lens's ``run --help``) takes, against the interpreter's own start
and the CLI's two libraries (typer and pydantic) imported alone, measured in turn in the same run.

Each command runs ``--repeats`` times in a fresh process; the median wall time is printed with its ratio to
the bare interpreter. ``--max-seconds`` fails the run (exit 1) when ``chronoprobe --help``'s median is over
it: issue 41 asks for under 1 s on an idle machine, so say the load average, which is printed beside it.

    python benchmarks/startup.py [--repeats 5] [--max-seconds 0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("chronoprobe")
CLI = [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", "chronoprobe"]
"""The console script a user types, beside this interpreter (``python -m chronoprobe`` where there is none)."""
BASELINES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import typer, pydantic": [sys.executable, "-c", "import typer, pydantic"],
}
COMMANDS = {
    "chronoprobe --help": [*CLI, "--help"],
    "chronoprobe outdated run --help": [*CLI, "outdated", "run", "--help"],
    "chronoprobe check --help": [*CLI, "check", "--help"],
}


def median_seconds(command: list[str], repeats: int) -> float:
    """The median wall time of ``command`` run ``repeats`` times, each in a new process; it must succeed."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env={**os.environ, "COLUMNS": "80"})
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-seconds", type=float, default=0.0, help="fail above this for --help (0: never)")
    args = parser.parse_args()
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    bare = median_seconds(BASELINES["python -c pass"], args.repeats)
    print(f"{'command':<36}{'median s':>10}{'x bare python':>15}")
    timed = {}
    for label, command in {**BASELINES, **COMMANDS}.items():
        timed[label] = median_seconds(command, args.repeats)
        print(f"{label:<36}{timed[label]:>10.3f}{timed[label] / bare:>15.1f}")
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.2f}")
    if args.max_seconds and timed["chronoprobe --help"] > args.max_seconds:
        print(f"chronoprobe --help took {timed['chronoprobe --help']:.2f} s, over {args.max_seconds} s")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
