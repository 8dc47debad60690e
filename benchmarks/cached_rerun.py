"""A rerun on a warm call cache against the cold run before it: same command, same machine, one run.

``chronoprobe outdated run`` (the README's main job) runs twice in fresh processes, with a call
cache and a CHRONOPROBE_HOME of this script's own (the models ``./setup.sh`` prepared are linked in,
so neither run converts one): cold, every answer computed; then warm, every answer in the cache.
Prints both wall times, their ratio (the warm run must take at most 5% of the cold one), the
1-minute load average around each run, whether the two runs' numbers are identical
(``scripts/compare_summaries.py``; the answers too, ``responses.jsonl`` and ``items.jsonl``) and what the warm run's provenance says produced its answers.
Usage:

    python benchmarks/cached_rerun.py [--model smollm2] [--limit N] [--max-ratio 0.05] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def private_home(root: Path) -> Path:
    """A CHRONOPROBE_HOME whose models are links to the prepared ones (read only), with nothing else in it."""
    from chronoprobe import paths

    home = root / "home"
    models = home / "models"
    models.mkdir(parents=True)
    prepared = paths.home_dir() / "models"
    for entry in prepared.iterdir() if prepared.is_dir() else []:
        if entry.name == "assembled" or (entry / "config.json").is_file():
            (models / entry.name).symlink_to(entry)
        elif entry.is_file():
            shutil.copy2(entry, models / entry.name)
    return home


def timed_run(args: argparse.Namespace, root: Path, name: str, env: dict[str, str]) -> float:
    command = [sys.executable, "-m", "chronoprobe", "outdated", "run", "--model", args.model]
    command += ["--cache", str(root / "calls.sqlite"), "--out", str(root / name)]
    command += ["--limit", str(args.limit)] if args.limit else []
    print(f"{name}: {load()}", flush=True)
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    print(f"{name}: {seconds:.2f} s, then {load()}", flush=True)
    return seconds


def answers_line(folder: Path) -> list[str]:
    provenance = json.loads((folder / "run.json").read_text(encoding="utf-8"))["provenance"]
    from chronoprobe.reports.markdown import answers_text

    return [f"{label}: {answers_text(record)}" for label, record in provenance.get("answers", {}).items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--limit", type=int, default=0, help="facts to ask (0: all, as the README's main job)")
    parser.add_argument("--max-ratio", type=float, default=0.05, help="fail when warm/cold is above this")
    parser.add_argument("--keep", type=Path, default=None, help="keep both run folders and the cache here")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="cached-rerun-")) if args.keep is None else args.keep
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CHRONOPROBE_HOME": str(private_home(root)), "COLUMNS": "200"}
    try:
        cold = timed_run(args, root, "cold", env)
        warm = timed_run(args, root, "warm", env)
        compared = subprocess.run(
            [sys.executable, str(REPO / "scripts" / "compare_summaries.py"), str(root / "cold"), str(root / "warm")],
            capture_output=True,
            text=True,
        )
        same_answers = all(
            (root / "cold" / name).read_bytes() == (root / "warm" / name).read_bytes()
            for name in ("responses.jsonl", "items.jsonl")
        )
        identical = compared.returncode == 0 and same_answers
        ratio = warm / cold
        print(f"model {args.model}, {'all facts' if not args.limit else f'{args.limit} facts'}")
        print(f"cold {cold:.2f} s, warm {warm:.2f} s: warm/cold = {ratio:.1%} (at most {args.max_ratio:.0%} wanted)")
        print(f"answers identical (responses.jsonl, items.jsonl): {same_answers}")
        print(f"numbers identical (scripts/compare_summaries.py): {compared.returncode == 0}")
        for line in answers_line(root / "warm"):
            print(f"warm run's answers: {line}")
        if not identical:
            print(compared.stdout + compared.stderr)
        if not identical or ratio > args.max_ratio:
            raise SystemExit(1)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
