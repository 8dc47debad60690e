"""One definition of a fact to edit: the audit report, `editing dataset --from` and `editing run --from` count the same facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.metrics.dyknow import FACT_TO_EDIT_RULE
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import register_mock, unregister_mock
from chronoprobe.testing.mock import MockPrompt
from cli_driver import run_main

pytestmark = pytest.mark.e2e

PAST = {
    "Italy": "Mario Draghi",
    "Amazon": "Jeff Bezos",
    "Cristiano Ronaldo": "Juventus",
    "United States": "Donald Trump",
}
"""An answer that was right once, per subject the question names: outdated today."""


def _past(prompt: MockPrompt, params: DecodingParams) -> str:
    return next((answer for subject, answer in PAST.items() if subject in prompt), "I do not know")


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("facts")
    register_mock("past-answers", _past)
    try:
        run = cp.run("outdated", models="mock:past-answers", out=tmp / "audit", cache=tmp / "c.sqlite")
    finally:
        unregister_mock("past-answers")
    return run.path


def test_the_three_counts_agree(
    audit: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = json.loads((audit / "summary.json").read_text())
    counted = summary["models"]["mock:past-answers"]["facts_to_edit"]
    assert len(counted) >= 3 and {f.split("/")[0] for f in counted} >= {"countries_byGDP", "companies_byRevenue"}

    report = " ".join((audit / "report.md").read_text().split())
    assert FACT_TO_EDIT_RULE in report
    groups = {"countries_byGDP": 0, "athletes_byPayment": 0, "companies_byRevenue": 0, "organizations": 0}
    for fact in counted:
        groups[fact.split("/")[0]] += 1
    positions = groups["companies_byRevenue"] + groups["organizations"]
    row = f"| mock:past-answers | {groups['countries_byGDP']} | {groups['athletes_byPayment']} | {positions} | {len(counted)} |"
    assert row in report
    assert "| Positions (companies_byRevenue + organizations) |" in report

    out = audit.parent / "editing_dataset.json"
    ran = run_main(monkeypatch, capsys, "editing", "dataset", "--from", str(audit), "--out", str(out))
    assert ran.code == 0, ran.text
    written = json.loads(out.read_text())
    skipped = json.loads((audit.parent / "editing_dataset.build.json").read_text())["skipped"]
    assert len(written) + len(skipped) == len(counted)  # each fact the audit counts is written, or listed with why
    assert FACT_TO_EDIT_RULE in " ".join(ran.text.split())

    register_mock("past-answers", _past)
    try:
        edited = cp.run(
            "editing",
            models="mock:past-answers",
            from_=audit,
            method=("rag-gold",),
            locality=False,
            fluency=False,
            out=audit.parent / "editing",
            cache=audit.parent / "c.sqlite",
        )
    finally:
        unregister_mock("past-answers")
    dataset = json.loads((edited.path / "summary.json").read_text())["models"]["mock:past-answers"]["dataset"]
    assert dataset["select"] == "outdated" and dataset["facts"] == len(written)
    assert FACT_TO_EDIT_RULE in " ".join((audit.parent / "editing" / "report.md").read_text().split())
