"""The exact build_query text, evaluated by pyoxigraph over a Wikidata-shaped fixture."""

from __future__ import annotations

import datetime as dt
import json

import pyoxigraph
import pytest
from wdqs_stub import fixture_store

from chronoprobe.errors import ConfigError, DataError, EndpointError
from chronoprobe.knowledge.sparql import QUERY_TEMPLATE, build_query, parse_results
from chronoprobe.knowledge.types import FactAnswers, Statement, WikidataDate


@pytest.fixture(scope="module")
def store() -> pyoxigraph.Store:
    return fixture_store()


def run(store: pyoxigraph.Store, qid: str, pid: str) -> FactAnswers:
    raw = store.query(build_query(qid, pid)).serialize(format=pyoxigraph.QueryResultsFormat.JSON)  # type: ignore[arg-type]  # a SELECT gives solutions: pyoxigraph types the result as any query's
    return parse_results(json.loads(raw), fact_id=f"{qid}/{pid}", endpoint="fixture")


def by_id(answers: FactAnswers) -> dict[str, Statement]:
    return {s.statement_id: s for s in answers.statements}


def test_query_declares_its_prefixes_and_avoids_the_label_service() -> None:
    text = build_query("Q38", "P35")
    for prefix in ("wd:", "p:", "ps:", "pq:", "pqv:", "wikibase:", "rdfs:", "skos:"):
        assert f"PREFIX {prefix}" in text
    assert "SERVICE" not in text
    assert "wd:Q38 p:P35" in text and "ps:P35" in text
    assert "$" not in text  # every placeholder filled
    assert "wikibase:DeprecatedRank" in QUERY_TEMPLATE


def test_head_of_state_statements(store: pyoxigraph.Store) -> None:
    answers = run(store, "Q38", "P35")
    statements = by_id(answers)
    # deprecated claim and the blank-node ("unknown value") statement are gone; P6 is not mixed in
    assert set(statements) == {"Q38-mattarella", "Q38-napolitano", "Q38-denicola"}
    mattarella = statements["Q38-mattarella"]
    assert mattarella.label == "Sergio Mattarella"
    assert mattarella.qid == "Q3956186"
    assert mattarella.rank == "preferred"
    assert mattarella.start == WikidataDate(year=2015, month=2, day=3)
    assert mattarella.end is None
    assert mattarella.aliases == ("Mattarella",)  # the Italian alias is ignored
    napolitano = statements["Q38-napolitano"]
    assert napolitano.aliases == ()  # only an Italian alias exists
    assert napolitano.end == WikidataDate(year=2015, month=1, day=14)
    assert napolitano.rank == "normal"
    assert statements["Q38-denicola"].start is None
    assert [s.label for s in answers.current()] == ["Sergio Mattarella"]
    assert [s.label for s in answers.current(dt.date(2010, 1, 1))] == ["Giorgio Napolitano"]
    assert {s.label for s in answers.counted().statements} == {"Sergio Mattarella", "Giorgio Napolitano"}


def test_team_statements_keep_precision_and_point_in_time(store: pyoxigraph.Store) -> None:
    statements = by_id(run(store, "Q11571", "P54"))
    assert set(statements) == {
        "Q11571-mu1",
        "Q11571-mu2",
        "Q11571-juve",
        "Q11571-nassr",
        "Q11571-portugal",
        "Q11571-youth",
    }
    assert statements["Q11571-mu1"].start == WikidataDate(year=2003)  # year precision (9)
    assert statements["Q11571-mu1"].end == WikidataDate(year=2009)
    assert statements["Q11571-mu1"].end.latest() == dt.date(2009, 12, 31)
    assert statements["Q11571-nassr"].start == WikidataDate(year=2023, month=1)  # month precision (10)
    assert statements["Q11571-mu2"].aliases == ("Man Utd", "Manchester United", "Red Devils")  # no @fr alias
    portugal = statements["Q11571-portugal"]
    assert portugal.point_in_time == WikidataDate(year=2021, month=6, day=27)
    assert portugal.end is None and portugal.is_current  # P585 is not an end date
    assert statements["Q11571-youth"].start is None  # start = unknown value


def test_value_without_english_label_falls_back_to_qid(store: pyoxigraph.Store) -> None:
    statements = by_id(run(store, "Q483551", "P169"))
    assert statements["Q483551-duke"].label == "Q1000004"
    assert statements["Q483551-mcmillon"].aliases == ("Carl Douglas McMillon",)


def test_unknown_subject_gives_no_statements(store: pyoxigraph.Store) -> None:
    assert run(store, "Q424242", "P35").statements == ()


@pytest.mark.parametrize("qid", ["Q0", "q38", "Q38 } ; DROP", "38", "", "Q38\n", None])
def test_invalid_qid_rejected(qid: object) -> None:
    with pytest.raises(DataError, match="subject"):
        build_query(qid, "P35")  # type: ignore[arg-type]


@pytest.mark.parametrize("pid", ["P0", "Q35", "P35 .", "p35", ""])
def test_invalid_pid_rejected(pid: str) -> None:
    with pytest.raises(ConfigError, match="property"):
        build_query("Q38", pid)


@pytest.mark.parametrize(
    "payload",
    [
        None,
        [],
        {"head": {}},
        {"results": {"bindings": {}}},
        {"results": {"bindings": [{"statement": 3}]}},
        {"results": {"bindings": [{"statement": {"type": "uri", "value": "x"}}]}},
    ],
)
def test_garbage_results_raise_endpoint_error(payload: object) -> None:
    with pytest.raises(EndpointError, match=r"^https://example\.org/sparql: "):
        parse_results(payload, endpoint="https://example.org/sparql")


def test_unreadable_time_value_names_it() -> None:
    row = {
        "statement": {"type": "uri", "value": "http://www.wikidata.org/entity/statement/Q1-a"},
        "value": {"type": "uri", "value": "http://www.wikidata.org/entity/Q2"},
        "rank": {"type": "uri", "value": "http://wikiba.se/ontology#NormalRank"},
        "start": {"type": "literal", "value": "yesterday"},
    }
    with pytest.raises(EndpointError, match="yesterday"):
        parse_results({"results": {"bindings": [row]}}, endpoint="e")
