"""``chronoprobe.testing.wdqs``: the WDQS stand-in a user runs by hand, and its default data."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.sparql import build_query, parse_results
from chronoprobe.testing.wdqs import SPARQL_JSON, StubWDQS, main
from chronoprobe.testing.wdqs_data import MADE_UP, default_turtle


@pytest.mark.e2e
def test_python_m_serves_sparql_at_slash_sparql() -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "chronoprobe.testing.wdqs", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline() if server.stdout else ""
        assert line.startswith("serving SPARQL at http://127.0.0.1:") and "/sparql (stand-in data)" in line, line
        url = line.split()[3]
        query = build_query("Q38", "P35")
        answer = httpx.get(url, params={"query": query, "format": "json"}, timeout=10)
        assert answer.status_code == 200 and answer.headers["Content-Type"] == SPARQL_JSON
        italy = parse_results(answer.json(), "italy")
        assert {s.label for s in italy.current()} == {"Sergio Mattarella"}
        assert httpx.post(url, data={"query": query}, timeout=10).json() == answer.json()
        assert httpx.get(url.replace("/sparql", "/other"), timeout=10).status_code == 404
        assert httpx.get(url, params={"query": "SELEKT nothing"}, timeout=10).status_code == 400
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=10)  # waits, and closes the pipes
    assert server.returncode == 0


@pytest.mark.e2e
def test_bad_data_and_dump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text("this is not turtle")
    assert main(["--data", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --data {bad}: not valid Turtle") and len(err.strip().splitlines()) == 1
    assert main(["--data", str(tmp_path / "missing.ttl")]) == 2
    dump = tmp_path / "standin.ttl"
    assert main(["--dump", str(dump)]) == 0
    assert main(["--dump", str(dump)]) == 2  # never over a file
    assert dump.read_text(encoding="utf-8") == default_turtle()
    with StubWDQS(dump) as from_file, StubWDQS() as default:
        query = build_query("Q11571", "P54")
        assert json.loads(from_file.answer(query)) == json.loads(default.answer(query))


def test_the_default_data_is_dyknows_subjects_and_made_up_ones_marked_so() -> None:
    text = default_turtle()
    assert text == default_turtle()  # deterministic (and cached)
    for fact in load_catalogue():
        assert f"wd:{fact.subject_qid} " in text
    made_up = [line for line in text.splitlines() if line.startswith("wd:Q95") and "rdfs:label" in line]
    assert made_up and all(MADE_UP in line or "(erfunden)" in line for line in made_up)
