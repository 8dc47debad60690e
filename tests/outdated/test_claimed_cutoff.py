"""What the model says its knowledge cutoff is, and the knowledge horizon: read by hand-checked rules, put beside
the knowledge date, three more cached calls per model, and no other number moved."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.metrics.claimed_cutoff import ClaimedDate, combine_claims, read_claim
from chronoprobe.metrics.knowledge_date import DatedAnswer, Period, knowledge_horizon, known_change
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock
from cli_driver import run_ok

CUTOFF_WORDS = ("knowledge go", "training data end", "most recent month", "My knowledge", "My training", "I know")


@pytest.mark.parametrize(
    ("answer", "read"),
    [
        ("My knowledge cutoff is December 2023.", "2023-12"),
        ("My training data goes up to Sept. 2021, and I was released in 2022.", "2021-09"),
        ("until october, 2023", "2023-10"),
        ("through May of 2021", "2021-05"),
        ("2023-04", "2023-04"),
        ("2023-04-30", "2023-04"),
        ("04/2023", "2023-04"),
        ("late 2023", "2023"),
        ("I was trained on data up to 2021.", "2021"),
        ("the years 2021-2023", "2021"),
        ("I do not have a knowledge cutoff.", None),
        ("I know 10,000 facts and 2.5 million words.", None),
        ("the war of 1812", None),
        ("", None),
    ],
)
def test_a_month_is_read_only_where_the_answer_names_one(answer: str, read: str | None) -> None:
    found = read_claim(answer)
    assert (found.label if found is not None else None) == read


def test_the_claim_is_the_year_most_answers_name_then_its_month() -> None:
    dec, dec_again, year, other = ClaimedDate(2023, 12), ClaimedDate(2023, 12), ClaimedDate(2023), ClaimedDate(2021, 9)
    assert combine_claims([dec, year, other]).date == ClaimedDate(2023, 12)  # 2023 twice; its only month
    assert combine_claims([other, dec, None]).date == other  # a tie: the year named first
    assert combine_claims([year, None, year]).date == ClaimedDate(2023)  # no month named: none invented
    assert combine_claims([ClaimedDate(2023, 3), dec, dec_again]).date == dec
    claim = combine_claims([None, None, None])
    assert (claim.date, claim.parsed, claim.asked) == (None, 0, 3)
    assert math.isclose(ClaimedDate(2023, 12).decimal, 2023 + 11 / 12)


def _answer(fact: str, start: float, *periods: tuple[float, float], current: bool = True) -> DatedAnswer:
    shown = tuple(Period(lo, lo + 1 / 12, end, end + 1 / 12) for lo, end in periods) or (Period(start, start + 1 / 12),)
    return DatedAnswer(fact, "c", fact, shown, 2, current)


def test_the_horizon_is_the_latest_change_among_the_current_values_given() -> None:
    answers = [
        _answer("a", 2015.0),
        _answer("b", 2019.5),
        _answer("b", 2018.0),  # another paraphrase of b: the fact counts once, at its latest change
        _answer("c", 2022.0, current=False),  # outdated answers show no current value
        _answer("d", 0.0, (2003.0, 2010.0), (2023.0, math.inf)),  # a holder back in office: his first start
    ]
    assert known_change(answers[-1]) == 2003.0
    horizon = knowledge_horizon(answers)
    assert horizon is not None
    assert (horizon.value, horizon.n) == (2019.5, 3)
    assert horizon.ci_high == 2019.5 and horizon.ci_low is not None and 2003.0 <= horizon.ci_low <= 2019.5
    assert knowledge_horizon([_answer("c", 2022.0, current=False)]) is None


def claims_and_facts(prompt: MockPrompt, params: DecodingParams) -> str:
    """Italy's president and its head of government current, the cutoff December 2023, else Paris."""
    asked = prompt.request
    if any(words in asked for words in CUTOFF_WORDS):
        return "My knowledge cutoff is December 2023." if "knowledge go" in asked else "It ends in 2023."
    if "President of Italy" in asked or "head of state of Italy" in asked:
        return "Sergio Mattarella"
    if "Italy" in asked:
        return "Giorgia Meloni"
    return "Paris"


def no_claim(prompt: MockPrompt, params: DecodingParams) -> str:
    return "I am an AI model and I do not have one." if "knowledge go" in prompt.request else "Paris"


@pytest.fixture
def claimers() -> Iterator[tuple[str, str]]:
    register_mock("claims", claims_and_facts)
    register_mock("no-claim", no_claim)
    yield "mock:claims", "mock:no-claim"
    unregister_mock("claims")
    unregister_mock("no-claim")


def _metrics(out: Path) -> list[dict[str, object]]:
    found: list[dict[str, object]] = json.loads((out / "run.json").read_text())["summary"]["metrics"]
    return found


@pytest.mark.e2e
def test_the_claim_stands_beside_the_knowledge_date_and_horizon_in_every_output(
    claimers: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    claims, silent = claimers
    cache = tmp_path / "calls.sqlite"
    args = ["outdated", "run", "--model", claims, "--model", silent, "--limit", "12", "--cache", str(cache)]
    printed = run_ok(monkeypatch, capsys, *args, "--out", str(tmp_path / "with"))
    run = json.loads((tmp_path / "with" / "run.json").read_text())
    assert run["provenance"]["extra"]["model_calls_made"] == {claims: 12 * 3 + 3, silent: 12 * 3 + 3}
    rows = {(m["model"], m["name"]): m for m in _metrics(tmp_path / "with")}
    claimed = rows[(claims, "claimed_cutoff")]
    assert (claimed["value"], claimed["n"], claimed["unit"]) == (pytest.approx(2023 + 11 / 12), 3, "year")
    assert (rows[(silent, "claimed_cutoff")]["value"], rows[(silent, "claimed_cutoff")]["n"]) == (None, 0)
    horizon = rows[(claims, "knowledge_horizon")]
    assert horizon["n"] == 2 and horizon["value"] == pytest.approx(2022 + 9 / 12 + 21 / 31 / 12)  # Meloni, 2022-10-22
    block = json.loads((tmp_path / "with" / "summary.json").read_text())["models"][claims]["claimed_cutoff"]
    assert [a["parsed"] for a in block["answers"]] == ["2023-12", "2023", "2023"]
    assert block["answers"][0]["answer"] == "My knowledge cutoff is December 2023."

    said = "says its knowledge ends 2023-12 (3 of 3 answers name a date)"
    assert f"claims: {said}; " in printed and "its answers most often describe " in printed
    assert "the latest change it knows" not in printed  # the horizon is a secondary row, off the console line
    assert "no-claim: says nothing that reads as a date when asked its knowledge cutoff (“I am an AI model" in printed
    report = (tmp_path / "with" / "report.md").read_text()
    assert "## What the model says its cutoff is" in report and f"- `claims` {said}; " in report
    assert (
        "| claims | Up to what date does your knowledge go? Answer with a month and a year. | My knowledge cutoff"
        in report
    )

    off = run_ok(monkeypatch, capsys, *args, "--no-claimed-cutoff", "--out", str(tmp_path / "without"))
    assert "0 new model calls" in off and "says its knowledge ends" not in off
    unchanged = [m for m in _metrics(tmp_path / "with") if m["name"] != "claimed_cutoff"]
    assert _metrics(tmp_path / "without") == unchanged  # the claim moves no other number
    detail = json.loads((tmp_path / "without" / "summary.json").read_text())
    assert "claimed_cutoff" not in detail["models"][claims]


@pytest.mark.e2e
def test_the_check_paragraph_says_the_claim_beside_the_two_dates(
    claimers: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from chronoprobe import load
    from chronoprobe.lenses.outdated.plain_words import claimed

    claims, _ = claimers
    out = tmp_path / "run"
    run_ok(monkeypatch, capsys, "outdated", "run", "--model", claims, "--limit", "12", "--out", str(out),
           "--cache", str(tmp_path / "c.sqlite"))  # fmt: skip
    sentence = claimed(load(out).summary, claims)
    assert sentence is not None
    assert sentence.startswith("Claimed cutoff: it says its knowledge ends 2023-12 (3 of 3 answers name a date)")
    assert "; its answers most often describe " in sentence and "the latest change it knows" not in sentence
