"""``chronoprobe snapshot`` commands, including a live fetch from a loopback SPARQL server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "knowledge"))
from wdqs_stub import Fault, StubWDQS

from chronoprobe.cli.snapshot import app
from chronoprobe.knowledge.snapshot import load_snapshot

runner = CliRunner()


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "home"


def catalogue(tmp_path: Path) -> Path:
    rows = [
        {"fact_id": "countries_byGDP/Italy/President of Italy", "category": "countries_byGDP", "subject": "Italy",
         "subject_qid": "Q38", "attribute": "President of Italy", "property": "P35",
         "templates": ["The President of Italy is"]},
        {"fact_id": "companies_byRevenue/Walmart", "category": "companies_byRevenue", "subject": "Walmart",
         "subject_qid": "Q483551", "attribute": None, "property": "P169", "templates": ["Walmart's CEO is"]},
        {"fact_id": "companies_byRevenue/Nowhere Inc", "category": "companies_byRevenue", "subject": "Nowhere Inc",
         "subject_qid": "Q424242", "attribute": None, "property": "P169", "templates": ["Its CEO is"]},
    ]
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"name": "t", "facts": rows}))
    return path


def test_fetch_list_show_diff(tmp_path: Path, home: Path) -> None:
    with StubWDQS() as wdqs:
        result = runner.invoke(app, ["fetch", "--endpoint", wdqs.url, "--catalogue", str(catalogue(tmp_path)),
                                     "--name", "local"])
    assert result.exit_code == 0, result.output
    assert wdqs.count == 3
    saved = home / "snapshots" / "local.json"
    assert saved.is_file()
    assert "no statements for Q424242" in result.output
    snapshot = load_snapshot("local")
    assert [s.label for s in snapshot.answers["companies_byRevenue/Walmart"].current()] == ["Doug McMillon"]

    listed = runner.invoke(app, ["list"])
    assert listed.exit_code == 0 and "local" in listed.output and "dyknow-2023-12-18" in listed.output

    shown = runner.invoke(app, ["show", "local", "--fact", "countries_byGDP/Italy/President of Italy"])
    assert shown.exit_code == 0
    assert "Sergio Mattarella" in shown.output and "Q3956186" in shown.output and "2015-02-03 - now" in shown.output

    diff = runner.invoke(app, ["diff", "dyknow-2023-12-18", "local", "--statements"])
    assert diff.exit_code == 0, diff.output
    # Mattarella and McMillon are still current; the fixture lacks most past holders, so statements differ
    assert "0 facts with changed current answers" in diff.output
    assert "2 with any statement change" in diff.output
    assert "128 only in dyknow-2023-12-18, 1 only in local" in diff.output
    assert "- countries_byGDP/Italy/President of Italy: Carlo Azeglio Ciampi [1999-05-18 - 2006-05-15]" in diff.output


def test_limit(tmp_path: Path) -> None:
    with StubWDQS() as wdqs:
        result = runner.invoke(app, ["fetch", "--endpoint", wdqs.url, "--catalogue", str(catalogue(tmp_path)),
                                     "--limit", "1", "--output-dir", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert wdqs.count == 1
    assert len(list((tmp_path / "out").glob("wikidata-*.json"))) == 1


def test_errors_are_one_red_line_and_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "CHRONOPROBE_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "chronoprobe.cli.main", "snapshot", "show", "no-such-snapshot"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: snapshot 'no-such-snapshot': not found (known: dyknow-2023-12-18)"
    ]


def test_fetch_failure_writes_nothing(tmp_path: Path, home: Path) -> None:
    with StubWDQS(always=Fault(status=200, body=b"<html/>")) as wdqs:
        result = runner.invoke(app, ["fetch", "--endpoint", wdqs.url, "--catalogue", str(catalogue(tmp_path)),
                                     "--name", "broken"])
    assert result.exit_code != 0
    assert "non-JSON" in str(result.exception)
    assert not (home / "snapshots" / "broken.json").exists()
