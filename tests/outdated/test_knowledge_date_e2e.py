"""The knowledge date through ``outdated run`` and ``outdated score``: summary, report, plots, results rows."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.outdated.test_outdated_mock_e2e import run_cli

import chronoprobe as cp
from chronoprobe.errors import ConfigError
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.lenses.outdated.cutoffs import parse_cutoffs, parse_deployed_at
from chronoprobe.lenses.outdated.knowledge_date import dated_answers
from chronoprobe.lenses.outdated.score import score_generations
from chronoprobe.metrics.knowledge_date import GRID_STEP, month_label, parse_month
from chronoprobe.models.base import DecodingParams
from chronoprobe.reports.tidy_table import results_frame
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / ".." / "shared" / "data" / "dyknow" / "models_output" / "results"
WHEN = dt.date(2019, 6, 15)


def _answers_as_of(when: dt.date) -> dict[str, str]:
    """Paraphrase -> the value that held on ``when`` (facts with none are left unanswered)."""
    snapshot = load_snapshot(None)
    answers = {}
    for fact in load_catalogue():
        held = [s for s in snapshot.answers[fact.fact_id].counted().statements if s.valid_at(when)]
        if len(held) == 1:
            for template in fact.templates:
                answers[template] = held[0].label
    return answers


@pytest.fixture
def frozen_mock() -> Iterator[str]:
    """A model whose knowledge stops on 2019-06-15: it names what held that day."""
    answers = _answers_as_of(WHEN)

    def reply(prompt: MockPrompt, params: DecodingParams) -> str:
        return next((label for template, label in answers.items() if template in prompt.request), "no idea")

    register_mock("frozen-2019", reply)
    yield "mock:frozen-2019"
    unregister_mock("frozen-2019")


@pytest.mark.e2e
def test_outdated_run_dates_a_model_frozen_on_one_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], frozen_mock: str
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    out = tmp_path / "run"
    printed = run_cli(
        monkeypatch,
        capsys,
        "outdated",
        "run",
        "--model",
        f"frozen={frozen_mock}",
        "--cutoff",
        "frozen=2019-06",
        "--deployed-at",
        "2024-06",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "calls.sqlite"),
    )
    assert "knowledge date 2019-" in printed
    echoed = " ".join(printed.split())  # the console wraps long lines
    assert "frozen: published cutoff 2019-06 (--cutoff)" in echoed  # both echoed on the console
    assert "frozen: deployed on 2024-06, stale: " in echoed and "* after 12 months" in echoed, echoed
    block = json.loads((out / "summary.json").read_text())["models"]["frozen"]["knowledge_date"]
    estimate = block["per_category"]["all"]["estimate"]
    assert abs(estimate["value"] - parse_month("2019-06-15")) <= 0.5
    assert estimate["ci_low"] <= estimate["value"] <= estimate["ci_high"]
    assert block["published_cutoff"] == "2019-06"
    forecast = block["deployed_at"]["per_category"]["all"]
    assert forecast["0"]["extrapolated"] and forecast["0"]["value"] > 0

    report = (out / "report.md").read_text()
    assert "## Knowledge date" in report and "## Staleness" in report and "Deployed on 2024-06" in report
    for plot in ("knowledge_date.png", "staleness.png"):
        assert (out / plot).stat().st_size > 1000

    frame, _ = results_frame([out])
    rows = frame[(frame["metric"] == "knowledge_date") & (frame["class"] == "all")]
    assert len(rows) == 1 and rows.iloc[0]["value"] == estimate["value"]
    assert rows.iloc[0]["n"] == estimate["n"] and rows.iloc[0]["ci_low"] == estimate["ci_low"]
    assert {"freshness_half_life_years", "published_cutoff", "deployed_at.stale_6m_pct"} <= set(frame["metric"])

    assert "detail" not in json.loads((out / "run.json").read_text())["summary"]  # its records are its summary

    dates = cp.knowledge_date(out)
    [row] = dates[(dates["metric"] == "knowledge_date") & (dates["class"] == "all")].itertuples()
    assert (row.model, row.value, row.n, row.month) == ("frozen", estimate["value"], estimate["n"], estimate["label"])
    assert dates[dates["metric"] == "published_cutoff"]["value"].tolist() == [2019.5 - 1 / 12]
    curves = cp.staleness(cp.load(out))
    overall = curves[curves["class"] == "all"]
    assert overall["still_current"].iloc[0] > 0.9 and overall["date"].iloc[0] == estimate["value"]
    assert overall["still_current"].is_monotonic_decreasing and set(curves["class"]) >= {"all", "countries_byGDP"}

    # A run folder written before the knowledge date existed (and so before run.json) gets it computed from its rows.
    (out / "run.json").unlink()
    data = json.loads((out / "summary.json").read_text())
    del data["models"]["frozen"]["knowledge_date"]
    (out / "summary.json").write_text(json.dumps(data))
    again = cp.knowledge_date(out)
    assert (
        again[again["metric"] == "knowledge_date"]["value"].tolist()
        == dates[dates["metric"] == "knowledge_date"]["value"].tolist()
    )


@pytest.mark.e2e
def test_a_deployment_before_the_knowledge_date_forecasts_nothing_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], frozen_mock: str
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    out = tmp_path / "run"
    args = ("--limit", "40", "--deployed-at", "2018-01", "--out", str(out), "--cache", str(tmp_path / "c.sqlite"))
    printed = " ".join(
        run_cli(monkeypatch, capsys, "outdated", "run", "--model", f"frozen={frozen_mock}", *args).split()
    )
    block = json.loads((out / "summary.json").read_text())["models"]["frozen"]["knowledge_date"]
    known = block["per_category"]["all"]["estimate"]["label"]
    assert known.startswith("2019-")  # the model knows mid-2019: deployed in January 2018, nothing it knew is stale yet
    warning = f"warning: --deployed-at 2018-01 is before the knowledge date of frozen ({known})"
    assert warning in printed and "no staleness is forecast" in printed
    assert block["deployed_at"] == {"date": "2018-01", "before_knowledge_date": known, "per_category": {}}
    report = " ".join((out / "report.md").read_text().split())
    assert (
        "### Deployed on 2018-01" in report
        and "**No forecast for `frozen`**: --deployed-at 2018-01 is before" in report
    )
    assert "0.0%" not in report.split("### Deployed on 2018-01")[1]
    frame, _ = results_frame([out])
    assert not frame["metric"].str.startswith("deployed_at").any()


@pytest.mark.e2e
def test_a_cutoff_for_an_unknown_model_is_one_line_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "never"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "chronoprobe.cli.main",
            "outdated",
            "run",
            "--model",
            "mock:echo",
            "--cutoff",
            "gpt4=2023-04",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "CHRONOPROBE_HOME": str(tmp_path / "home")},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "--cutoff" in done.stderr and "gpt4" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


def test_cutoffs_are_checked_against_the_model_names() -> None:
    assert parse_cutoffs(["hf:Qwen/X=2024-01"], [["qwen", "hf:Qwen/X"]]) == {"hf:Qwen/X": "2024-01"}
    assert parse_cutoffs(["2024-01"], [["qwen", "hf:Qwen/X"]]) == {"qwen": "2024-01"}
    assert parse_cutoffs(["2017-12"], [["gpt2-xl"]]) == {"gpt2-xl": "2017-12"}
    for bad in (["2017-13"], ["x=2017"], ["gpt2-xl=Dec 2017"]):
        with pytest.raises(ConfigError, match="--cutoff"):
            parse_cutoffs(bad, [["gpt2-xl"]])
    with pytest.raises(ConfigError, match="several models"):
        parse_cutoffs(["2017-12"], [["a"], ["b"]])
    with pytest.raises(ConfigError, match="already has a cutoff"):  # one model, two values: neither is guessed
        parse_cutoffs(["qwen=2024-01", "hf:Qwen/X=2024-06"], [["qwen", "hf:Qwen/X"]])
    with pytest.raises(ConfigError) as unknown:  # a model whose display name is its spec is listed once
        parse_cutoffs(["gpt4=2023"], [["smollm2", "smollm2"]])
    assert str(unknown.value).endswith("no model named 'gpt4'; models: smollm2")
    assert parse_deployed_at("2025-01") == "2025-01" and parse_deployed_at(None) is None
    with pytest.raises(ConfigError, match="--deployed-at"):
        parse_deployed_at("next year")


def test_irrelevant_and_ambiguous_answers_are_left_out_and_counted() -> None:
    gold = load_snapshot(None).answers
    us = "countries_byGDP/United States of America/President of the United States"
    answers, excluded = dated_answers(
        [
            (us, "countries_byGDP", "outdated", ["Donald Trump"]),
            (us, "countries_byGDP", "irrelevant", []),
            (us, "countries_byGDP", "ambiguous", ["Donald Trump", "Joe Biden"]),
        ],
        gold,
    )
    assert [a.label for a in answers] == ["donald trump"]
    assert excluded == {"irrelevant": 1, "ambiguous": 1, "undated": 0}


def _authors() -> Path:
    if not RESULTS.is_dir():
        pytest.skip("../shared/data/dyknow is not present")
    return RESULTS


@pytest.mark.e2e
def test_outdated_score_dates_the_authors_outputs_in_the_order_they_were_trained(tmp_path: Path) -> None:
    """GPT-2 XL (WebText: links up to December 2017) before OLMo-1B and Mistral-7B-Instruct-v0.1 (2023)."""
    dates = {}
    for model in ("gpt2-xl", "OLMo-1B", "Mistral-7B-Instruct-v0.1"):
        summary = score_generations(_authors() / model, tmp_path / model)
        assert summary.knowledge_date is not None
        estimate = summary.knowledge_date["per_category"]["all"]["estimate"]
        assert estimate["n"] > 80 and estimate["ci_low"] < estimate["value"] < estimate["ci_high"] + GRID_STEP
        assert "## Knowledge date" in (tmp_path / model / "report.md").read_text()
        dates[model] = estimate["value"]
    assert dates["gpt2-xl"] < dates["OLMo-1B"] < dates["Mistral-7B-Instruct-v0.1"]
    assert dates["gpt2-xl"] < 2018.0


HORIZON_ROWS = {"gpt2-xl": "GPT-2 XL", "OLMo-1B": "OLMo-1B", "Mistral-7B-Instruct-v0.1": "Mistral-7B-Instruct-v0.1"}


@pytest.mark.e2e
def test_the_horizon_of_the_authors_outputs_is_the_table_in_the_docs(tmp_path: Path) -> None:
    """docs/outdated.md's validation of the knowledge horizon, recomputed: date, interval and n per model."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "outdated.md").read_text(encoding="utf-8")
    for model, shown in HORIZON_ROWS.items():
        summary = score_generations(_authors() / model, tmp_path / model)
        assert summary.knowledge_date is not None
        horizon, date = summary.knowledge_date["horizon"], summary.knowledge_date["per_category"]["all"]["estimate"]
        assert horizon["ci_high"] == horizon["value"] >= date["value"]  # an upper envelope: nothing above it
        cells = (
            f"| {shown} | {date['label']} [{month_label(date['ci_low'])}, {month_label(date['ci_high'])}] | "
            f"{horizon['label']} [{month_label(horizon['ci_low'])}, {month_label(horizon['ci_high'])}] | {horizon['n']} |"
        )
        assert cells in docs, cells


def test_the_cutoff_of_the_authors_outputs_is_the_table_in_the_docs(tmp_path: Path) -> None:
    """docs/outdated.md's validation of the knowledge cutoff, recomputed: date, interval, n and gap per model."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "outdated.md").read_text(encoding="utf-8")
    cutoffs = {}
    for model, shown in HORIZON_ROWS.items():
        summary = score_generations(_authors() / model, tmp_path / model)
        assert summary.knowledge_date is not None
        cutoff = summary.knowledge_date["cutoff"]
        estimate = cutoff["estimate"]
        assert estimate["ci_low"] < estimate["value"] < estimate["ci_high"]  # never a point
        cells = (
            f"| {shown} | {estimate['label']} [{estimate['ci_low_label']}, {estimate['ci_high_label']}], "
            f"{estimate['n']} | {month_label(cutoff['last_known_change'])} to "
            f"{month_label(cutoff['first_unknown_change'])} |"
        )
        assert cells in docs, cells
        cutoffs[model] = estimate["value"]
    assert cutoffs["gpt2-xl"] < cutoffs["OLMo-1B"] < cutoffs["Mistral-7B-Instruct-v0.1"]
    assert cutoffs["gpt2-xl"] < 2018.0  # DyKnow §3: GPT-2's data were collected before 2018
