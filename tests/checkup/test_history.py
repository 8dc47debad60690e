"""History: the same model's cached answers re-judged against a world that moved on, on the local SPARQL stand-in.

The stand-in (``chronoprobe.testing.wdqs``) serves the shipped snapshot as Wikidata RDF (pyoxigraph);
between two checks two facts change hands there. ``check --snapshot`` pins the first check to the shipped
snapshot, ``check --live`` re-judges the same answers against the stand-in without a model call, and ``history`` names the facts
that changed and the answers they turned outdated.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from world import World, register_knower

from chronoprobe.testing import unregister_mock
from chronoprobe.testing.wdqs import StubWDQS
from cli_driver import run_main

pytestmark = pytest.mark.e2e

CHANGED = {
    "countries_byGDP/Italy/President of Italy": "Jane Doe",
    "companies_byRevenue/Walmart": "John Roe",
}


@pytest.fixture
def world(monkeypatch, tmp_path):
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))  # the live snapshot is saved here
    known = World()
    register_knower("knower", known)
    yield known
    unregister_mock("knower")


def test_history_names_the_changed_facts_and_the_answers_they_turned_outdated(monkeypatch, capsys, tmp_path, world):
    cache = str(tmp_path / "calls.sqlite")
    common = ["check", "--model", "mock:knower", "--lens", "outdated", "--cache", cache]
    before, after = tmp_path / "before", tmp_path / "after"
    first = run_main(monkeypatch, capsys, *common, "--snapshot", "dyknow-2023-12-18", "--out", str(before))
    assert first.code == 0, first.text

    with StubWDQS() as stub:  # the shipped snapshot as Wikidata RDF
        for fact, successor in CHANGED.items():
            world.move_on(stub.store, fact, successor, dt.date(2025, 1, 1))
        second = run_main(monkeypatch, capsys, *common, "--live", "--endpoint", stub.url, "--out", str(after))
    assert second.code == 0, second.text
    assert stub.count == 130  # one query per fact
    assert "outdated: done, 0 new model calls" in second.err  # the cached answers, re-judged
    provenance = json.loads((after / "outdated" / "run.json").read_text())["provenance"]
    assert provenance["extra"]["model_calls_made"] == {"mock:knower": 0}
    live_name = provenance["snapshot"]["name"]
    assert live_name.startswith("wikidata-")

    ran = run_main(
        monkeypatch, capsys, "history", str(before), str(after), "--out", str(tmp_path / "history"), columns=300
    )
    assert ran.code == 0, ran.text
    history = json.loads((tmp_path / "history" / "history.json").read_text())
    points = [(p["snapshot"], round(p["shares"]["up-to-date"]["value"], 2)) for p in history["points"]]
    assert points[0] == ("dyknow-2023-12-18", 100.0)  # the model knows the shipped world
    up = history["points"][1]["shares"]["up-to-date"]
    assert points[1][0] == live_name and up["value"] == pytest.approx(100 * 128 / 130) and up["n"] == 130
    assert up["ci_low"] < up["value"] < up["ci_high"]
    [change] = history["changes"]
    assert (change["before"], change["after"]) == ("dyknow-2023-12-18", live_name)
    assert {f["fact_id"]: f["now"] for f in change["facts"]} == {fact: [name] for fact, name in CHANGED.items()}
    turned = {(t["fact_id"], t["template_index"]): (t["response"], t["was"], t["now"]) for t in change["turned"]}
    assert turned == {
        (fact, index): (world.current(fact)[0], world.current(fact), [CHANGED[fact]])
        for fact in CHANGED
        for index in range(3)
    }
    assert (tmp_path / "history" / "history.png").stat().st_size > 10_000
    assert "turned outdated: companies_byRevenue/Walmart #0 'Doug McMillon'" in ran.err
    assert "Jane Doe" in (tmp_path / "history" / "history.md").read_text()


def test_two_audits_against_one_snapshot_are_two_points_and_no_change(tmp_path):
    """An `outdated run` and a rerun on the same snapshot: no "dyknow-2023-12-18 -> dyknow-2023-12-18" change,
    each its own point."""
    import chronoprobe as cp
    from chronoprobe.lenses.outdated.history import change_lines, read_history

    cache = tmp_path / "calls.sqlite"
    for name in ("first", "second"):
        cp.run("outdated", "a=mock:constant=Paris", limit=2, out=tmp_path / name, cache=cache, progress=False)
    history = read_history([tmp_path / "first", tmp_path / "second"])
    assert [p.snapshot for p in history.points] == ["dyknow-2023-12-18"] * 2
    assert history.changes == [] and change_lines(history) == []
