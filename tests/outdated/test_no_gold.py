"""Empty gold is not gold: a mostly empty live answer is an error, a fact without gold is left out of every rate.

Everything runs on loopback: the WDQS stand-in (pyoxigraph) for the gold answers and
chronoprobe's OpenAI-compatible test server, serving a fixed-answer stand-in model.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "knowledge"))
from wdqs_stub import Fault, StubWDQS

from chronoprobe.cli.tool_command import lens_group
from chronoprobe.errors import DataError, EndpointError
from chronoprobe.knowledge.snapshot import load_snapshot, save_snapshot
from chronoprobe.knowledge.types import FactAnswers, Snapshot
from chronoprobe.lenses.outdated.audit import AuditConfig, load_gold
from chronoprobe.lenses.outdated.lens import OutdatedLens
from chronoprobe.models.base import Capability
from chronoprobe.testing import MockBackend
from chronoprobe.testing.openai_server import OpenAIServer

runner = CliRunner()
app = lens_group(OutdatedLens)
TODAY = dt.date.today().isoformat()
EMPTY_RESULT = b'{"head": {"vars": []}, "results": {"bindings": []}}'


def mattarella() -> MockBackend:
    """A stand-in model that always answers "Sergio Mattarella"."""
    return MockBackend(
        lambda prompt, params: "Sergio Mattarella",
        name="fixed",
        capabilities={Capability.GENERATE, Capability.SAMPLE_N, Capability.CHAT_TEMPLATE},
    )


def row(fact_id: str, qid: str, prop: str, category: str = "countries_byGDP") -> dict[str, object]:
    _, subject, *attribute = fact_id.split("/")
    return {
        "fact_id": fact_id,
        "category": category,
        "subject": subject,
        "subject_qid": qid,
        "attribute": attribute[0] if attribute else None,
        "property": prop,
        "templates": ["The answer is", "It is", "Now it is"],
    }


ITALY = row("countries_byGDP/Italy/President of Italy", "Q38", "P35")
MELONI = row("countries_byGDP/Italy/Prime Minister of Italy", "Q38", "P6")
WALMART = row("companies_byRevenue/Walmart", "Q483551", "P169", "companies_byRevenue")
NOWHERE = row("companies_byRevenue/Nowhere Inc", "Q424242", "P169", "companies_byRevenue")


def catalogue(tmp_path: Path, *rows: dict[str, object]) -> Path:
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"name": "t", "facts": list(rows)}))
    return path


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "home"


@pytest.fixture
def model_server() -> Iterator[OpenAIServer]:
    with OpenAIServer(mattarella(), model_name="fixed") as server:
        yield server


def test_zero_statements_is_an_error_and_keeps_the_good_snapshot(tmp_path: Path, home: Path) -> None:
    good = load_snapshot(None).model_copy(update={"name": f"wikidata-{TODAY}"})
    path = save_snapshot(good)
    before = path.read_bytes()
    config = AuditConfig(live=True, facts=catalogue(tmp_path, ITALY, MELONI, WALMART))
    with StubWDQS(always=Fault(status=200, body=EMPTY_RESULT)) as wdqs:
        config = config.model_copy(update={"endpoint": wdqs.url})
        with pytest.raises(EndpointError) as caught:
            load_gold(config)
    assert str(caught.value) == (
        f"WDQS {wdqs.url}: only 0 of 3 facts asked have a dated statement (0 statements in all); refusing to use "
        "this as gold answers (at least 50% of the facts must have one)"
    )
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_far_fewer_answers_than_facts_is_an_error(tmp_path: Path) -> None:
    unknown = [row(f"companies_byRevenue/Gone {i}", f"Q42424{i}", "P169", "companies_byRevenue") for i in range(3)]
    with StubWDQS() as wdqs:
        config = AuditConfig(live=True, endpoint=wdqs.url, facts=catalogue(tmp_path, ITALY, *unknown))
        with pytest.raises(EndpointError, match="only 1 of 4 facts asked have a dated statement"):
            load_gold(config)


def test_a_second_live_run_the_same_day_saves_under_a_new_name(tmp_path: Path, home: Path) -> None:
    with StubWDQS() as wdqs:
        config = AuditConfig(live=True, endpoint=wdqs.url, facts=catalogue(tmp_path, ITALY, WALMART))
        _, first = load_gold(config)
        _, second = load_gold(config)
    day = first.retrieved.isoformat()  # the day the client read, not the day the test module was imported
    assert (first.name, second.name) == (f"wikidata-{day}", f"wikidata-{day}-2")
    assert {p.name for p in (home / "snapshots").iterdir()} == {f"{first.name}.json", f"{second.name}.json"}


def test_a_stored_snapshot_that_is_mostly_empty_is_refused(tmp_path: Path) -> None:
    facts = catalogue(tmp_path, ITALY, WALMART)
    empty = Snapshot(
        name="hollow",
        retrieved=dt.date(2024, 1, 1),
        endpoint="x",
        query_hash="-",
        answers={f["fact_id"]: FactAnswers(fact_id=f["fact_id"], statements=()) for f in (ITALY, WALMART)},
    )
    save_snapshot(empty)
    with pytest.raises(DataError, match="snapshot hollow: only 0 of 2 facts asked have a dated statement"):
        load_gold(AuditConfig(snapshot="hollow", facts=facts))


@pytest.mark.e2e
def test_live_run_reports_facts_without_gold_outside_every_rate(
    tmp_path: Path, home: Path, model_server: OpenAIServer
) -> None:
    out = tmp_path / "report"
    with StubWDQS() as wdqs:
        result = runner.invoke(
            app,
            [
                "run",
                "--live",
                "--endpoint",
                wdqs.url,
                "--facts",
                str(catalogue(tmp_path, ITALY, MELONI, WALMART, NOWHERE)),
                "--model",
                f"openai:fixed@{model_server.url}",
                "--out",
                str(out),
                "--cache",
                str(tmp_path / "c.sqlite"),
            ],
        )
    assert result.exit_code == 0, result.output
    # three paraphrases of the three facts with gold, none for Nowhere Inc; and three of its knowledge cutoff
    assert model_server.stats.count == 9 + 3
    summary = json.loads((out / "summary.json").read_text())
    [model] = summary["models"].values()
    assert model["no_gold"] == ["companies_byRevenue/Nowhere Inc"]
    overall = model["per_category"]["all"]
    assert (overall["facts"], overall["no_gold"]) == (3, 1)
    # Italy's president is up to date, the prime minister and Walmart's CEO are not: 1 of 3, not 1 of 4
    assert overall["soft_constraint_pct"]["up-to-date"] == pytest.approx(100 / 3)
    assert overall["soft_constraint"] == {"up-to-date": 1, "outdated": 0, "irrelevant": 2, "ambiguous": 0}
    companies = model["per_category"]["companies_byRevenue"]
    assert (companies["facts"], companies["no_gold"]) == (1, 1)
    saved = summary["provenance"]["snapshot"]["name"]
    assert saved in (f"wikidata-{TODAY}", f"wikidata-{dt.date.today().isoformat()}")  # past midnight
    report = (out / "report.md").read_text()
    assert "**No gold: 1 fact(s)**" in report and "`companies_byRevenue/Nowhere Inc`" in report
    assert f"live answers saved as snapshot {saved}" in result.output
    assert "no gold answer for 1 fact(s)" in result.output
