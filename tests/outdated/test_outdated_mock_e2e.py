"""``chronoprobe outdated run`` end to end on mock models: every verdict is known from the handler's answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock
from cli_driver import run_ok

pytestmark = pytest.mark.e2e

ITALY_PRESIDENT = "countries_byGDP/Italy/President of Italy"
ITALY_PM = "countries_byGDP/Italy/Prime Minister of Italy"
US_PRESIDENT = "countries_byGDP/United States of America/President of the United States"
CHINA_PRESIDENT = "countries_byGDP/China/President of the People's Republic of China"


def dyknow_answers(prompt: MockPrompt, params: DecodingParams) -> str:
    """Up to date on Italy's president, up to date on Italy's head of government in one paraphrase only,
    outdated on the US president, irrelevant on China."""
    asked = prompt.request
    if "President of Italy" in asked or "head of state of Italy" in asked:
        return "Sergio Mattarella"
    if "head of government of Italy" in asked:
        return "Giorgia Meloni"
    if "Prime Minister of Italy" in asked:
        return "Mario Draghi"
    if "United States" in asked:
        return "Donald Trump"
    return "Paris"


EXPECTED = {  # fact -> verdict per paraphrase, as the snapshot of 2023-12-18 judges the answers above
    ITALY_PRESIDENT: ["up-to-date"] * 3,
    ITALY_PM: ["outdated", "outdated", "up-to-date"],
    US_PRESIDENT: ["outdated"] * 3,
    CHINA_PRESIDENT: ["irrelevant"] * 3,
}


@pytest.fixture
def dyknow_mock() -> Iterator[str]:
    register_mock("dyknow-e2e", dyknow_answers)
    yield "mock:dyknow-e2e"
    unregister_mock("dyknow-e2e")


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    return run_ok(monkeypatch, capsys, *args)


def test_outdated_run_on_mocks_writes_the_expected_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], dyknow_mock: str
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    out = tmp_path / "report"
    args = [
        "outdated",
        "run",
        "--model",
        dyknow_mock,
        "--model",
        "mock:constant=Paris",
        "--limit",
        "4",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "calls.sqlite"),
    ]
    printed = run_cli(monkeypatch, capsys, *args)
    assert "15 new model calls" in printed  # 4 facts x 3 paraphrases, and 3 on its knowledge cutoff

    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert len(records) == 24
    verdicts: dict[tuple[str, str], list[str]] = {}
    for r in sorted(records, key=lambda r: r["template_index"]):
        verdicts.setdefault((r["model"], r["fact_id"]), []).append(r["verdict"])
    assert {fact: verdicts[(dyknow_mock, fact)] for fact in EXPECTED} == EXPECTED
    assert {fact: verdicts[("mock:constant=Paris", fact)] for fact in EXPECTED} == {
        f: ["irrelevant"] * 3 for f in EXPECTED
    }
    us = [r for r in records if r["model"] == dyknow_mock and r["fact_id"] == US_PRESIDENT]
    assert {tuple(r["matched"]) for r in us} == {("Donald Trump",)} and us[0]["matched_start_years"] == [2017]
    assert all(r["rendered_prompt"].startswith("<|user|>\nComplete this sentence") for r in records)

    summary = json.loads((out / "summary.json").read_text())
    overall = summary["models"][dyknow_mock]["per_category"]["all"]
    assert overall["facts"] == 4
    assert overall["soft_constraint"] == {"up-to-date": 2, "outdated": 1, "irrelevant": 1, "ambiguous": 0}
    assert overall["soft_constraint_pct"]["up-to-date"] == pytest.approx(50.0)
    assert overall["average_pct"] == pytest.approx(
        {"up-to-date": 100 * 4 / 12, "outdated": 100 * 5 / 12, "irrelevant": 100 * 3 / 12, "ambiguous": 0.0}
    )
    assert overall["per_prompt"]["2"] == {"up-to-date": 2, "outdated": 1, "irrelevant": 1, "ambiguous": 0}
    assert overall["inconsistent_facts"] == [ITALY_PM]
    assert overall["facts_to_edit"] == [US_PRESIDENT]
    paris = summary["models"]["mock:constant=Paris"]["per_category"]["all"]
    assert paris["soft_constraint"] == {"up-to-date": 0, "outdated": 0, "irrelevant": 4, "ambiguous": 0}
    [mock_info, paris_info] = summary["provenance"]["models"]
    assert (mock_info["backend"], mock_info["revision"], paris_info["spec"]) == ("mock", "mock", "mock:constant=Paris")
    report = (out / "report.md").read_text()
    assert dyknow_mock in report and "mock:constant=Paris" in report
    for plot in ("verdicts.png", "recency.png"):
        assert (out / plot).stat().st_size > 1000

    # The same command again is served from the cache and gives the same report.
    before = (out / "responses.jsonl").read_text()
    printed = run_cli(monkeypatch, capsys, *args)
    assert "0 new model calls" in printed
    assert (out / "responses.jsonl").read_text() == before


def test_the_bare_sentence_reaches_a_mock_without_chat_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], dyknow_mock: str
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    out = tmp_path / "bare"
    run_cli(
        monkeypatch,
        capsys,
        "outdated",
        "run",
        "--model",
        dyknow_mock,
        "--no-chat-template",
        "--limit",
        "4",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "calls.sqlite"),
    )
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert all(r["rendered_prompt"] == r["template"] for r in records)
    verdicts: dict[str, list[str]] = {}
    for r in sorted(records, key=lambda r: r["template_index"]):
        verdicts.setdefault(r["fact_id"], []).append(r["verdict"])
    assert verdicts == EXPECTED
    assert "bare sentence" in (out / "report.md").read_text()
