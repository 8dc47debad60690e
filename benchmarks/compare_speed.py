"""``chronoprobe compare`` on two 1,000-fact runs, start-up included, against ``chronoprobe results`` on the same two.

Two outdated run folders of ``--facts`` facts (three paraphrases each, five categories; answers drawn at random,
the second model agreeing with the first on most facts) are written once. Then, in fresh processes, each command
runs ``--repeats`` times: ``chronoprobe results A B --format csv`` (the baseline: the same folders read, every
record printed) and ``chronoprobe compare A B`` (the same reading, then every headline metric per class
compared paired: McNemar over facts, the paired bootstrap over facts for the paraphrase shares). Prints the
median wall time of each, their ratio, and fails when compare takes more than ``--max-seconds``.

    python benchmarks/compare_speed.py [--facts 1000] [--repeats 3] [--max-seconds 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from chronoprobe.records.runlog import Provenance, write_run_log
from chronoprobe.lenses.outdated.audit import AuditConfig, ResponseRecord
from chronoprobe.lenses.outdated.metric_records import run_summary
from chronoprobe.lenses.outdated.summary import ALL, summarize_model

CATEGORIES = ("leaders", "athletes", "companies", "organizations", "offices")
VERDICTS = ("up-to-date", "outdated", "irrelevant", "ambiguous")


def _rows(model: str, verdicts: np.ndarray) -> list[ResponseRecord]:
    rows = []
    for fact, per_paraphrase in enumerate(verdicts):
        for index, code in enumerate(per_paraphrase):
            verdict = VERDICTS[int(code)]
            rows.append(
                ResponseRecord(
                    model=model,
                    fact_id=f"{CATEGORIES[fact % 5]}/fact-{fact}",
                    category=CATEGORIES[fact % 5],
                    subject=f"subject {fact}",
                    attribute=None,
                    template_index=index,
                    template="Who holds it?",
                    rendered_prompt="Who holds it?",
                    response=f"answer {code}",
                    verdict=verdict,  # type: ignore[arg-type]  # one of the four verdicts
                    matched=["someone"] if verdict in ("up-to-date", "outdated") else [],
                    matched_start_years=[],
                )
            )
    return rows


def write_run(folder: Path, model: str, verdicts: np.ndarray) -> None:
    """An outdated run folder of ``verdicts`` (facts x paraphrases, verdict codes), as the runner writes one."""
    rows = _rows(model, verdicts)
    detail = {"as_of": None, "models": {model: summarize_model(rows, with_as_of=False)}, "overall_key": ALL}
    summary = run_summary(detail, {"name": "synthetic"})
    folder.mkdir(parents=True)
    write_run_log(
        folder,
        lens="outdated",
        kind="outdated run",
        config=AuditConfig(),
        summary=summary,
        provenance=Provenance.model_validate({}),
        rows=rows,
    )


def timed(command: list[str], repeats: int, env: dict[str, str]) -> float:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=2.0, help="fail when compare's median takes longer")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    first = rng.choice(4, size=(args.facts, 3), p=[0.3, 0.3, 0.35, 0.05])
    second = np.where(rng.random((args.facts, 3)) < 0.8, first, rng.choice(4, size=(args.facts, 3)))
    root = Path(tempfile.mkdtemp(prefix="compare-speed-"))
    try:
        write_run(root / "a", "model-a", first)
        write_run(root / "b", "model-b", second)
        env = {**os.environ, "COLUMNS": "200"}
        cli = [sys.executable, "-m", "chronoprobe"]
        results = timed([*cli, "results", str(root / "a"), str(root / "b"), "--format", "csv"], args.repeats, env)
        compare = timed([*cli, "compare", str(root / "a"), str(root / "b")], args.repeats, env)
        print(
            f"two outdated runs of {args.facts:,} facts (3 paraphrases each), median of {args.repeats}, start-up included"
        )
        print(f"results: {results:.2f} s; compare: {compare:.2f} s; compare/results = {compare / results:.2f}")
        print(f"compare within {args.max_seconds:g} s: {compare <= args.max_seconds}")
        if compare > args.max_seconds:
            raise SystemExit(1)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
