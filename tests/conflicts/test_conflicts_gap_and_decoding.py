"""The sweep gap's interval (conflicts), and conflicts run's --seed, --temperature and --sampler."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conflicts_rows import persuasion_row, update_row

from chronoprobe.cli.main import main
from chronoprobe.lenses.conflicts.completion import summarise_completion
from chronoprobe.lenses.conflicts.persuasion import summarise_persuasion
from chronoprobe.lenses.conflicts.report import model_sweep_markdown
from chronoprobe.lenses.conflicts.rows import PersuasionRow, UpdateRow
from chronoprobe.lenses.conflicts.run import RunConfig, sweep_gaps
from chronoprobe.metrics.uncertainty import bootstrap_difference, newcombe, wilson
from chronoprobe.models.base import DecodingParams
from chronoprobe.provenance import Provenance
from chronoprobe.testing import MockPrompt, MockReply, register_mock, unregister_mock

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def _item(model: str, fact_class: str, fact: str, cp: float) -> PersuasionRow:
    return persuasion_row(model=model, fact_class=fact_class, fact_id=fact, cp=cp, se_context=0.1, se_no_context=0.1)


def test_cp_gap_interval_resamples_each_class() -> None:
    rows = [_item("m", "static", "s1", 0.0), _item("m", "temporal", "t1", 0.0), _item("m", "temporal", "t2", 1.0)]
    classes = ["static", "temporal"]
    summary = {"m": summarise_persuasion(rows, classes)}
    config = RunConfig(dataset="dynamicqa", methodology="dynamicqa")
    gap = sweep_gaps(config, rows, summary, classes)["m"]
    # temporal CP 0.5 (items 0 and 1) - static 0.0: resampled 0, 0.5 or 1 -> [0, 1]; n = 3 items
    assert (gap["metric"], gap["classes"], gap["value"], gap["n"]) == ("cp", ["temporal", "static"], 0.5, 3)
    assert (gap["ci_low"], gap["ci_high"]) == (0.0, 1.0)
    assert {k: gap[k] for k in ("ci_low", "ci_high")} == {
        "ci_low": bootstrap_difference([0.0, 1.0], [0.0]).ci_low,
        "ci_high": bootstrap_difference([0.0, 1.0], [0.0]).ci_high,
    }


def test_update_gap_interval_is_newcombes() -> None:
    def update(fact_class: str, ok: bool) -> UpdateRow:
        return update_row(fact_class=fact_class, prediction="Lyon" if ok else "Paris", new_object="Lyon")

    updates = [update("mutable", i < 5) for i in range(10)] + [update("immutable-1", i < 2) for i in range(10)]
    classes = ["immutable-1", "mutable"]
    summary = {"m": summarise_completion([], updates, classes)}
    config = RunConfig(dataset="mulan", methodology="mulan")
    gap = sweep_gaps(config, [], summary, classes)["m"]
    expected = newcombe(wilson(5, 10), wilson(2, 10))
    assert (gap["value"], gap["n"], gap["method"]) == (pytest.approx(0.3), 20, "newcombe")
    assert (gap["ci_low"], gap["ci_high"]) == (pytest.approx(expected.ci_low), pytest.approx(expected.ci_high))
    text = model_sweep_markdown({"a": summary["m"], "b": summary["m"]}, classes, Provenance(), "mulan", {"a": gap})
    header = next(line for line in text.splitlines() if line.startswith("| Model"))
    assert header.endswith("| update Mutable − Imm-1 | 95% CI |")
    assert "| 0.300 | [-0.107, 0.600] (n=20) |" in text
    assert text.count("| – |") >= 1  # b has no gap estimate here


# --- conflicts run --seed / --temperature / --sampler ---------------------------------------------

SEEN: list[DecodingParams] = []


def remember(prompt: MockPrompt, params: DecodingParams) -> MockReply:
    SEEN.append(params)
    return MockReply("Paris", distribution=[0.9, 0.1])


@pytest.fixture(autouse=True)
def mock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    register_mock("remember", remember)
    SEEN.clear()
    yield
    unregister_mock("remember")


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *args])
    code: str | int | None = 0
    try:
        main()
    except SystemExit as stopped:
        code = stopped.code
    captured = capsys.readouterr()
    return int(code or 0), captured.out + captured.err


def dynamicqa_run(tmp_path: Path, out: str, *extra: str) -> list[str]:
    return [
        "conflicts",
        "run",
        "dynamicqa",
        "--data",
        str(ASSETS / "dynamicqa_small"),
        "--model",
        "mock:remember",
        "--judge",
        "exact",
        "--samples",
        "2",
        "--device",
        "cpu",
        "--out",
        str(tmp_path / out),
        "--cache",
        str(tmp_path / "calls.sqlite"),
        *extra,
    ]


@pytest.mark.e2e
def test_seed_and_temperature_reach_decoding_provenance_and_cache_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = run_cli(monkeypatch, capsys, *dynamicqa_run(tmp_path, "default"))
    assert code == 0, output
    assert {(p.temperature, p.seed) for p in SEEN} == {(0.5, 10)}  # the methodology's own, as before
    calls = len(SEEN)
    code, output = run_cli(
        monkeypatch, capsys, *dynamicqa_run(tmp_path, "chosen", "--seed", "3", "--temperature", "0.9")
    )
    assert code == 0, output
    assert {(p.temperature, p.seed) for p in SEEN[calls:]} == {(0.9, 3)}  # new keys: asked again
    run = json.loads((tmp_path / "chosen" / "run.json").read_text())
    decoding = run["provenance"]["decoding"]
    assert (decoding["temperature"], decoding["seed"], run["provenance"]["seeds"]) == (0.9, 3, [3])
    assert run["config"]["persuasion"]["seed"] == 3 and run["config"]["persuasion"]["temperature"] == 0.9


def test_seed_reaches_the_mulan_methodology(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from chronoprobe.lenses.conflicts.completion import CompletionConfig

    config = CompletionConfig(seed=4, temperature=0.2)
    assert (config.decoding().seed, config.decoding().temperature) == (4, 0.2)
    assert CompletionConfig().decoding() == DecodingParams(
        max_new_tokens=50, temperature=0.0, token_logprobs=True, first_token_prob=True
    )  # the default keeps 0.1's cache keys


@pytest.mark.e2e
def test_a_bad_sampler_is_one_line_before_any_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = run_cli(monkeypatch, capsys, *dynamicqa_run(tmp_path, "bad", "--sampler", "gumbel"))
    assert code == 2 and "'gumbel' is not one of inverse-cdf, multinomial" in output
    assert not SEEN and not (tmp_path / "bad").exists()


def test_sampler_reaches_the_backend_options() -> None:
    from chronoprobe.cli.model_options import ModelOptions
    from chronoprobe.models.builtin import HFOptions

    assert ModelOptions().backend().for_backend(HFOptions).sampler == "inverse-cdf"
    assert ModelOptions(sampler="multinomial").backend().for_backend(HFOptions).sampler == "multinomial"
