"""End to end on the real embedded SmolLM2-135M-Instruct, with tiny sizes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from recency_rows import write_report
from typer.testing import CliRunner

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.datasets.recency_taxonomy import LABELS
from chronoprobe.datasets.recencyqa import load_recencyqa
from chronoprobe.lenses.recency.evaluate import EvalConfig, evaluate
from chronoprobe.lenses.recency.gate import recency_gate
from chronoprobe.lenses.recency.rows import RecencyRow
from chronoprobe.provenance import Provenance

ASSETS = Path(__file__).resolve().parents[1] / "assets"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cache_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("recency_e2e") / "calls.sqlite"


@pytest.fixture()
def model(smollm2, cache_path: Path) -> CachedModel:
    return CachedModel(smollm2, CallCache(cache_path))


def test_eval_on_twelve_questions_writes_every_table_and_is_cached(model: CachedModel, tmp_path: Path) -> None:
    questions = load_recencyqa(ASSETS / "recency_sample.json")[:12]
    config = EvalConfig(context_mode="both", max_new_tokens=6)
    rows = evaluate(questions, model, config)
    n_with = sum(len(q.label_contexts) for q in questions)
    assert len(rows) == 12 + n_with
    assert model.calls_made == len(rows)
    for row in rows:
        assert row["prediction"] is None or row["prediction"] in LABELS
        assert row["correct"] == (row["prediction"] == row["gold"])
        assert (row["prediction"] is None) == (row["parsed_by"] == "none")
    paths = write_report(tmp_path / "out", [RecencyRow(**r) for r in rows], Provenance(models=[model.info]))
    summary = json.loads(paths["summary"].read_text())
    modes = {run["context_mode"]: run for run in summary["runs"]}
    assert set(modes) == {"with", "without"} and modes["without"]["n"] == 12
    assert modes["without"]["unparseable"] == sum(
        r["prediction"] is None for r in rows if r["context_mode"] == "without"
    )
    assert {e["stationarity"] for e in summary["table6"]} == {"Stationary", "Non-Stationary"}
    assert summary["table7"] and summary["table7"][0]["pairs"] >= 1
    assert (tmp_path / "out" / "confusion_zero-shot_without.png").stat().st_size > 1000
    # a second run is served from the cache, identically
    again = CachedModel(model.backend, model.cache)
    assert evaluate(questions, again, config) == rows and again.calls_made == 0


def test_gate_returns_a_decision_with_a_distribution(model: CachedModel) -> None:
    # the same call as the CLI test's gate below, so one of them is served from the cache
    decision = recency_gate("Who wrote Hamlet?", model, threshold="A-Year", samples=2)
    assert decision.samples == 2
    assert abs(sum(decision.distribution.values()) - 1) < 1e-9 or decision.unparseable == 2
    assert decision.reason
    if decision.predicted_class is not None:
        assert decision.retrieve == (decision.share_within_threshold >= 0.5)


def test_cli_label_then_eval_then_gate(tmp_path: Path, cache_path: Path) -> None:
    """`recency label` end to end with tiny bounds; its output must load back in `recency eval`."""
    from chronoprobe.cli.tool_command import lens_group
    from chronoprobe.lenses.recency.lens import RecencyLens

    app = lens_group(RecencyLens)

    runner = CliRunner()
    cache = str(cache_path)
    dataset = tmp_path / "labelled.json"
    result = runner.invoke(
        app,
        [
            "label",
            str(ASSETS / "recency_questions.jsonl"),
            "--out",
            str(dataset),
            "--samples",
            "3",
            "--verify-samples",
            "2",
            "--candidates",
            "1",
            "--context-rounds",
            "1",
            "--no-retries",
            "--label-max-new-tokens",
            "12",
            "--vote-max-new-tokens",
            "6",
            "--context-max-new-tokens",
            "24",
            "--cache",
            cache,
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "labelled.report.json").read_text())
    counts = report["report"]
    assert counts["questions"] == 3 and report["provenance"]["models"][0]["spec"] == "smollm2"
    assert (
        counts["kept"] + len(counts["discarded_rule4"]) + len(counts["unlabelled"]) + len(counts["dropped_no_context"])
        == 3
    )
    assert sum(counts["rule_counts"].values()) == 3 - len(counts["unlabelled"])
    items = load_recencyqa(dataset)
    assert len(items) == counts["kept"]
    for item in items:
        parsed = [s for s in item.extra["label_samples"] if s is not None]
        assert len(item.extra["label_samples"]) == 3
        assert item.label_distribution[item.majority_label] == max(item.label_distribution.values())
        assert abs(sum(item.label_distribution.values()) - 1) < 1e-9
        assert {c.label for c in item.unique_labels} == set(parsed)
        assert [c.recency_label for c in item.label_contexts] == list(item.unique_labels)
        assert item.stationary == (len(item.unique_labels) == 1)  # what the four rules enforce
        assert item.extra["stationarity_rule"] in (1, 2, 3)
    if not items:
        pytest.skip("the tiny model labelled nothing usable this time")
    result = runner.invoke(
        app,
        ["eval", "--data", str(dataset), "--out", str(tmp_path / "eval"), "--max-new-tokens", "6", "--cache", cache],
    )
    assert result.exit_code == 0, result.output
    rows = (tmp_path / "eval" / "items.jsonl").read_text().splitlines()
    assert len(rows) == len(items) + sum(len(i.label_contexts) for i in items)
    assert "Table 6" in (tmp_path / "eval" / "report.md").read_text()
    result = runner.invoke(
        app, ["gate", "Who wrote Hamlet?", "--router", "llm", "--samples", "2", "--json", "--cache", cache]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout[result.stdout.index("{") :])["threshold"] == "A-Year"


def test_cli_bad_input_is_one_red_line_and_exit_2(tmp_path: Path) -> None:
    exe = [sys.executable, "-m", "chronoprobe.cli.main", "recency"]
    for args in (
        ["eval", "--data", str(tmp_path / "missing.json")],
        ["eval", "--strategy", "few-shoot"],
        ["gate", "Who?", "--threshold", "soonish"],
    ):
        done = subprocess.run(exe + args, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.strip().count("\n") == 0, done.stderr
