"""A built catalogue end to end: ``catalogue build`` on the stand-in, then ``outdated run --facts --snapshot``.

The report, the summary and the knowledge date read the built catalogue's own categories.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.catalogue_build import build_catalogue
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.knowledge.templates import resolve_templates
from chronoprobe.metrics.knowledge_date import parse_month
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock
from chronoprobe.testing.wdqs import StubWDQS
from cli_driver import run_ok

NEW_DOMAINS = ("club_head_coaches", "city_mayors", "party_leaders", "newspaper_editors")
WHEN = dt.date(2017, 6, 15)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("catalogue") / "built"
    with StubWDQS() as wdqs:
        build_catalogue(resolve_templates(list(NEW_DOMAINS)), out, endpoint=wdqs.url, today=dt.date(2024, 5, 1))
    return out


@pytest.fixture
def frozen(built: Path) -> Iterator[str]:
    """A model whose knowledge stops on ``WHEN``: it names what held that day."""
    snapshot = load_snapshot(str(built / "snapshot.json"))
    answers = {}
    for fact in load_catalogue(built / "catalogue.json"):
        held = [s for s in snapshot.answers[fact.fact_id].statements if s.valid_at(WHEN)]
        for template in fact.templates:
            answers[template] = held[0].label if len(held) == 1 else "no idea"

    def reply(prompt: MockPrompt, params: DecodingParams) -> str:
        return next((label for template, label in answers.items() if template in prompt.request), "no idea")

    register_mock("frozen-built", reply)
    yield "mock:frozen-built"
    unregister_mock("frozen-built")


@pytest.mark.e2e
def test_outdated_run_reads_the_new_categories(monkeypatch, capsys, tmp_path: Path, built: Path, frozen: str) -> None:
    out = tmp_path / "run"
    args = ["--facts", str(built / "catalogue.json"), "--snapshot", str(built / "snapshot.json")]
    run_ok(monkeypatch, capsys, "outdated", "run", "--model", f"frozen={frozen}", *args, "--out", str(out))
    summary = json.loads((out / "summary.json").read_text())["models"]["frozen"]
    assert set(summary["per_category"]) == {"all", *NEW_DOMAINS}
    assert all(summary["per_category"][c]["facts"] == 10 for c in NEW_DOMAINS)
    dates = summary["knowledge_date"]["per_category"]
    assert set(dates) == {"all", *NEW_DOMAINS}  # ten facts each: every category dated on its own
    assert abs(dates["all"]["estimate"]["value"] - parse_month(WHEN.isoformat())) < 1.0
    report = (out / "report.md").read_text()
    assert all(f"| frozen | {c} |" in report for c in NEW_DOMAINS)


@pytest.mark.slow
def test_the_embedded_model_on_a_small_built_catalogue(monkeypatch, capsys, tmp_path: Path) -> None:
    """Every shipped template, one subject each: DyKnow's categories and the new ones side by side."""
    built = tmp_path / "built"
    with StubWDQS() as wdqs:
        run_ok(
            monkeypatch,
            capsys,
            "catalogue",
            "build",
            "--out",
            str(built),
            "--endpoint",
            wdqs.url,
            "--per-template",
            "1",
        )
    facts = load_catalogue(built / "catalogue.json")
    categories = {f.category for f in facts}
    assert len(categories) >= 10 and {"countries_byGDP", "club_leagues"} <= categories
    out = tmp_path / "run"
    args = ["--facts", str(built / "catalogue.json"), "--snapshot", str(built / "snapshot.json")]
    printed = run_ok(monkeypatch, capsys, "outdated", "run", "--model", "smollm2", *args, "--out", str(out))
    assert f"{len(facts)} facts judged" in " ".join(printed.split())
    summary = json.loads((out / "summary.json").read_text())["models"]["smollm2"]
    assert set(summary["per_category"]) == {"all", *categories}
    block = summary["knowledge_date"]  # one fact per template: too few for a date per category
    assert block["snapshot_date"] == load_snapshot(str(built / "snapshot.json")).retrieved.isoformat()
    assert set(block["too_few"]) <= categories and set(block["per_category"]) <= {"all"}
    report = (out / "report.md").read_text()
    assert all(f"| smollm2 | {c} |" in report for c in categories)
