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

import chronoprobe as cp
from chronoprobe.cli.tool_command import tool_group
from chronoprobe.errors import ConfigError
from chronoprobe.knowledge.snapshot import load_snapshot

runner = CliRunner()
app = tool_group("snapshot")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "home"


def catalogue(tmp_path: Path) -> Path:
    rows = [
        {
            "fact_id": "countries_byGDP/Italy/President of Italy",
            "category": "countries_byGDP",
            "subject": "Italy",
            "subject_qid": "Q38",
            "attribute": "President of Italy",
            "property": "P35",
            "templates": ["The President of Italy is"],
        },
        {
            "fact_id": "companies_byRevenue/Walmart",
            "category": "companies_byRevenue",
            "subject": "Walmart",
            "subject_qid": "Q483551",
            "attribute": None,
            "property": "P169",
            "templates": ["Walmart's CEO is"],
        },
        {
            "fact_id": "companies_byRevenue/Nowhere Inc",
            "category": "companies_byRevenue",
            "subject": "Nowhere Inc",
            "subject_qid": "Q424242",
            "attribute": None,
            "property": "P169",
            "templates": ["Its CEO is"],
        },
    ]
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"name": "t", "facts": rows}))
    return path


@pytest.mark.e2e
def test_fetch_list_show_diff(tmp_path: Path, home: Path) -> None:
    with StubWDQS() as wdqs:
        result = runner.invoke(
            app, ["fetch", "--endpoint", wdqs.url, "--catalogue", str(catalogue(tmp_path)), "--name", "local"]
        )
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


@pytest.mark.e2e
def test_limit(tmp_path: Path) -> None:
    with StubWDQS() as wdqs:
        result = runner.invoke(
            app,
            [
                "fetch",
                "--endpoint",
                wdqs.url,
                "--catalogue",
                str(catalogue(tmp_path)),
                "--limit",
                "1",
                "--output-dir",
                str(tmp_path / "out"),
            ],
        )
    assert result.exit_code == 0, result.output
    assert wdqs.count == 1
    assert len(list((tmp_path / "out").glob("wikidata-*.json"))) == 1


@pytest.mark.e2e
def test_errors_are_one_red_line_and_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "CHRONOPROBE_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "chronoprobe.cli.main", "snapshot", "show", "no-such-snapshot"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: snapshot 'no-such-snapshot': not found (known: dyknow-2023-12-18)"
    ]


@pytest.mark.e2e
def test_fetch_failure_writes_nothing(tmp_path: Path, home: Path) -> None:
    with StubWDQS(always=Fault(status=200, body=b"<html/>")) as wdqs:
        result = runner.invoke(
            app, ["fetch", "--endpoint", wdqs.url, "--catalogue", str(catalogue(tmp_path)), "--name", "broken"]
        )
    assert result.exit_code != 0
    assert "non-JSON" in str(result.exception)
    assert not (home / "snapshots" / "broken.json").exists()


@pytest.mark.e2e
def test_fetch_never_overwrites_a_snapshot_without_replace(tmp_path: Path, home: Path) -> None:
    args = ["fetch", "--catalogue", str(catalogue(tmp_path)), "--name", "mine"]
    with StubWDQS() as wdqs:
        assert runner.invoke(app, [*args, "--endpoint", wdqs.url]).exit_code == 0
        saved = home / "snapshots" / "mine.json"
        before = saved.read_bytes()
        refused = runner.invoke(app, [*args, "--endpoint", wdqs.url])
        assert wdqs.count == 3  # refused before any request
        assert "already exists; pass --replace to overwrite it" in str(refused.exception)
        assert saved.read_bytes() == before
        replaced = runner.invoke(app, [*args, "--endpoint", wdqs.url, "--replace"])
        assert replaced.exit_code == 0, replaced.output
        assert wdqs.count == 6


@pytest.mark.e2e
def test_empty_answer_is_an_error_and_saves_nothing(tmp_path: Path, home: Path) -> None:
    empty = b'{"head": {"vars": []}, "results": {"bindings": []}}'
    with StubWDQS(always=Fault(status=200, body=empty)) as wdqs:
        result = runner.invoke(
            app, ["fetch", "--endpoint", wdqs.url, "--catalogue", str(catalogue(tmp_path)), "--name", "hollow"]
        )
    assert result.exit_code != 0
    assert str(result.exception).startswith(f"WDQS {wdqs.url}: only 0 of 3 facts asked have a dated statement")
    assert not (home / "snapshots" / "hollow.json").exists()


@pytest.mark.e2e
def test_retry_after_wait_is_shown(tmp_path: Path) -> None:
    with StubWDQS() as wdqs:
        wdqs.faults = [Fault(status=429, headers={"Retry-After": "1"})]
        result = runner.invoke(app, ["fetch", "--endpoint", wdqs.url, "--catalogue", str(catalogue(tmp_path))])
    assert result.exit_code == 0, result.output
    assert (
        f"notice: waiting 1 s (Retry-After) before retrying WDQS {wdqs.url}: HTTP 429 (retry 1 of 3)" in result.output
    )


@pytest.mark.e2e
def test_show_shipped_fact_has_no_empty_qid_column() -> None:
    shown = runner.invoke(app, ["show", "--fact", "countries_byGDP/Italy/President of Italy"])
    assert shown.exit_code == 0, shown.output
    header = next(line for line in shown.output.splitlines() if "answer" in line and "valid" in line)
    assert "QID" not in header and "aliases" not in header
    assert "Sergio Mattarella" in shown.output
    assert "labels only (no QIDs or aliases)" in shown.output and "grc_generated.json" in shown.output
    overview = runner.invoke(app, ["show"])
    assert "grc_generated.json" in overview.output and "query.wikidata.org" not in overview.output


# --- the same tools from Python: chronoprobe.produce("snapshot.<command>", ...) --------------------


def test_list_from_python_names_the_shipped_snapshot() -> None:
    listing = cp.produce("snapshot.list")
    assert listing.columns == ("name", "retrieved", "facts", "where", "path")
    assert [row[:4] for row in listing.rows] == [("dyknow-2023-12-18", "2023-12-18", "130", "shipped")]


def test_fetch_from_python_saves_the_snapshot_the_command_saves(tmp_path: Path, home: Path) -> None:
    with StubWDQS() as wdqs:
        fetched = cp.produce("snapshot.fetch", endpoint=wdqs.url, catalogue=catalogue(tmp_path), name="local")
    assert fetched.path == home / "snapshots" / "local.json"
    assert load_snapshot("local") == fetched.snapshot
    assert len(fetched.snapshot.answers) == 3
    assert list(fetched.snapshot.warnings) == ["companies_byRevenue/Nowhere Inc"]
    walmart = fetched.snapshot.answers["companies_byRevenue/Walmart"]
    assert [s.label for s in walmart.current()] == ["Doug McMillon"]


def test_show_from_python_is_one_facts_statements_oldest_first() -> None:
    shown = cp.produce("snapshot.show", fact="countries_byGDP/Italy/President of Italy")
    assert shown.columns == ("answer", "valid", "current")  # the shipped snapshot: labels only
    assert shown.rows[0] == ("Alcide De Gasperi", "1946-06-13 - 1946-06-30", "")
    assert shown.rows[-2:] == [
        ("Giorgio Napolitano", "2006-05-15 - 2015-01-14", ""),
        ("Sergio Mattarella", "2015-02-03 - now", "yes"),
    ]
    with pytest.raises(ConfigError, match=r"^SNAPSHOT: "):
        cp.produce("snapshot.show", name="bad\x00name")


def test_diff_from_python_of_a_snapshot_with_itself_changes_nothing() -> None:
    diff = cp.produce("snapshot.diff", old="dyknow-2023-12-18", new="dyknow-2023-12-18", statements=True)
    assert diff.rows == []
    assert diff.after == (
        "0 facts with changed current answers, 0 with any statement change, "
        "0 only in dyknow-2023-12-18, 0 only in dyknow-2023-12-18",
    )


@pytest.mark.e2e
def test_list_names_each_damaged_or_future_snapshot_and_lists_the_rest(home: Path, monkeypatch, capsys) -> None:
    from cli_driver import run_main

    shipped = load_snapshot()
    (home / "snapshots").mkdir(parents=True)
    (home / "snapshots" / "broken.json").write_text('{"name": "broken", "retr')
    (home / "snapshots" / "array.json").write_text("[]")
    future = json.loads(shipped.model_dump_json()) | {"name": "future", "retrieved": "2999-01-01"}
    (home / "snapshots" / "future.json").write_text(json.dumps(future))
    fine = json.loads(shipped.model_dump_json()) | {"name": "fine"}
    (home / "snapshots" / "fine.json").write_text(json.dumps(fine))
    ran = run_main(monkeypatch, capsys, "snapshot", "list", columns=250)
    assert ran.code == 0, ran.text
    rows = {line.split("│")[1].strip(): line for line in ran.out.splitlines() if line.startswith("│")}
    assert set(rows) == {"array", "broken", "dyknow-2023-12-18", "fine", "future"}
    assert all("user, unreadable" in rows[name] for name in ("array", "broken", "future"))
    assert "2023-12-18 │ 130" in rows["fine"]
    warnings = [line for line in ran.text.splitlines() if line.startswith("warning: ")]
    assert [w.split(": ")[1].rsplit("/", 1)[1] for w in warnings] == ["array.json", "broken.json", "future.json"]
    assert "retrieved 2999-01-01, after today" in warnings[2]
