"""A rerun whose answers are all in the call cache loads no model and draws no figure, and its provenance
names what computed its answers (the real tiny model; ``benchmarks/cached_rerun.py`` times the full audit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_driver import run_ok

HEAVY = ("torch", "transformers", "matplotlib", "gguf", "httpx")
RERUN = """
import json, sys
from chronoprobe.cli.main import main
sys.argv = ["chronoprobe", *sys.argv[1:]]
try:
    main()
except SystemExit as exit:
    assert not exit.code, exit.code
print(json.dumps(sorted(set(sys.modules) & set({heavy}))))
"""


@pytest.mark.slow
def test_a_fully_cached_rerun_imports_no_model_library_and_says_what_made_its_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "calls.sqlite"
    args = ["outdated", "run", "--limit", "1", "--cache", str(cache)]
    run_ok(monkeypatch, capsys, *args, "--out", str(tmp_path / "cold"))
    done = subprocess.run(
        [sys.executable, "-c", RERUN.format(heavy=list(HEAVY)), *args, "--out", str(tmp_path / "warm")],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        check=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []

    cold, warm = (json.loads((tmp_path / name / "run.json").read_text()) for name in ("cold", "warm"))
    assert warm["summary"]["metrics"] == cold["summary"]["metrics"]
    for name in ("recency.png", "recency.svg", "verdicts.png", "verdicts.svg"):
        assert (tmp_path / "warm" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes()
    made, served = cold["provenance"]["answers"]["smollm2"], warm["provenance"]["answers"]["smollm2"]
    # three paraphrases of one fact, and three questions on its knowledge cutoff
    assert (made["answers"], made["from_cache"]) == (6, 0) and (served["answers"], served["from_cache"]) == (6, 6)
    [origin] = served["origins"]
    producer = origin["producer"]
    assert producer == made["origins"][0]["producer"]
    assert producer["backend"] == "hf" and producer["version"].startswith("torch ") and producer["dtype"] == "float32"
    assert producer["threads"] == cold["provenance"]["threads"]["torch"][0]  # the threads the cold run computed with
    assert warm["provenance"]["threads"]["torch"] == []  # this process ran none
    report = (tmp_path / "warm" / "report.md").read_text()
    assert (
        f"- answers of `smollm2`: 6 answers asked for: 6 from the call cache, 0 computed, written {origin['written_first'][:10]} by hf (torch"
        in report
    )
    assert f"at {producer['threads']} thread" in report


@pytest.mark.e2e
def test_a_rerun_counts_its_answers_from_the_cache_and_names_their_producer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["outdated", "run", "--model", "mock:constant=Mario Draghi", "--cache", str(tmp_path / "c.sqlite")]
    run_ok(monkeypatch, capsys, *args, "--limit", "2", "--out", str(tmp_path / "first"))
    # one fact more, one prompt per batch: the first six answers (and the three on its cutoff) come from the cache
    run_ok(monkeypatch, capsys, *args, "--limit", "3", "--batch-size", "1", "--out", str(tmp_path / "second"))
    first, second = (json.loads((tmp_path / n / "run.json").read_text())["provenance"] for n in ("first", "second"))
    label = "mock:constant=Mario Draghi"
    assert first["answers"][label]["answers"] == 6 + 3 and first["answers"][label]["from_cache"] == 0
    record = second["answers"][label]
    assert (record["answers"], record["from_cache"], record["computed"]) == (9 + 3, 6 + 3, 3)
    assert [(o["answers"], o["producer"]["backend"], o["producer"]["batch_size"]) for o in record["origins"]] == [
        (6 + 3, "mock", 16),
        (3, "mock", 1),
    ]
    line = next(ln for ln in (tmp_path / "second" / "report.md").read_text().splitlines() if "answers of" in ln)
    old, new = (o["written_first"][:10] for o in record["origins"])
    assert line == (
        f"- answers of `{label}`: 12 answers asked for: 9 from the call cache, 3 computed: 9 written {old} by mock, batch 16; "
        f"3 written {new} by mock, batch 1"
    )
