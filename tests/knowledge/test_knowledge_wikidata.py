"""WikidataClient against a real loopback SPARQL server (pyoxigraph behind http.server)."""

from __future__ import annotations

import datetime as dt
import email.utils
import time

import httpx
import pytest
from wdqs_stub import Fault, StubWDQS

from chronoprobe.errors import ConfigError, DataError, EndpointError
from chronoprobe.knowledge.types import Fact
from chronoprobe.knowledge.wikidata import USER_AGENT, WikidataClient, query_hash


def fact(fact_id: str, qid: str, prop: str, category: str = "countries_byGDP") -> Fact:
    return Fact(
        fact_id=fact_id,
        category=category,
        subject=fact_id,
        subject_qid=qid,
        property=prop,  # type: ignore[arg-type]
        templates=("x is",),
    )


FACTS = [
    fact("countries_byGDP/Italy/President of Italy", "Q38", "P35"),
    fact("athletes_byPayment/Cristiano Ronaldo", "Q11571", "P54", "athletes_byPayment"),
    fact("companies_byRevenue/Walmart", "Q483551", "P169", "companies_byRevenue"),
]


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(url: str, sleeps: Sleeps | None = None, **kwargs: object) -> WikidataClient:
    options: dict[str, object] = {"timeout_s": 5.0, "max_retries": 2, "backoff_s": 0.5, "max_wait_s": 10.0}
    options.update(kwargs)
    return WikidataClient(endpoint=url, sleep=sleeps if sleeps is not None else Sleeps(), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_fetch_end_to_end(method: str) -> None:
    with StubWDQS() as wdqs, client(wdqs.url, method=method) as wd:
        progress: list[int] = []
        snapshot = wd.fetch(FACTS, progress=progress.append, name="t")
    assert wdqs.count == 3
    assert all(seen.method == method for seen in wdqs.requests)
    seen = wdqs.requests[0]
    assert seen.headers["User-Agent"] == USER_AGENT and USER_AGENT.startswith("chronoprobe/")
    assert "application/sparql-results+json" in seen.headers["Accept"]
    assert seen.params["format"] == ["json"]
    assert progress == [1, 1, 1]
    assert snapshot.name == "t" and snapshot.retrieved == dt.date.today()
    assert snapshot.endpoint == wdqs.url and snapshot.query_hash == query_hash()
    italy = snapshot.answers["countries_byGDP/Italy/President of Italy"]
    # only statements with a start count: De Nicola (no start) is dropped, the deprecated one never came
    assert sorted(s.label for s in italy.statements) == ["Giorgio Napolitano", "Sergio Mattarella"]
    assert [s.label for s in italy.current()] == ["Sergio Mattarella"]
    ronaldo = snapshot.answers["athletes_byPayment/Cristiano Ronaldo"]
    assert sorted(s.label for s in ronaldo.current()) == ["Al-Nassr", "Portugal national association football team"]
    assert len(ronaldo.statements) == 5  # youth team with an unknown start is dropped
    assert snapshot.warnings == {}


def test_unknown_item_is_kept_empty_and_flagged() -> None:
    facts = [fact("countries_byGDP/Nowhere/King", "Q424242", "P35"), FACTS[2]]
    with StubWDQS() as wdqs, client(wdqs.url) as wd:
        snapshot = wd.fetch(facts)
    assert snapshot.answers["countries_byGDP/Nowhere/King"].statements == ()
    assert "Q424242" in snapshot.warnings["countries_byGDP/Nowhere/King"]
    assert list(snapshot.warnings) == ["countries_byGDP/Nowhere/King"]


def test_invalid_ids_rejected_before_any_request() -> None:
    bad_qid = Fact.model_construct(
        fact_id="f/bad", category="organizations", subject="x", subject_qid="Q0", property="P35", templates=("x",)
    )
    bad_pid = Fact.model_construct(
        fact_id="f/badp", category="organizations", subject="x", subject_qid="Q38", property="P35 }", templates=("x",)
    )
    no_qid = fact("f/none", "Q38", "P35").model_copy(update={"subject_qid": None})
    with StubWDQS() as wdqs, client(wdqs.url) as wd:
        with pytest.raises(DataError, match="fact f/bad: subject 'Q0'"):
            wd.fetch([FACTS[0], bad_qid])
        with pytest.raises(ConfigError, match="fact f/badp: property"):
            wd.fetch([FACTS[0], bad_pid])
        with pytest.raises(ConfigError, match="fact f/none: has no subject QID"):
            wd.fetch([FACTS[0], no_qid])
    assert wdqs.count == 0


def test_429_with_retry_after_seconds_is_retried() -> None:
    sleeps = Sleeps()
    with StubWDQS() as wdqs, client(wdqs.url, sleeps) as wd:
        wdqs.faults = [Fault(status=429, body=b"slow down", headers={"Retry-After": "2"})]
        snapshot = wd.fetch(FACTS[:1])
    assert wdqs.count == 2
    assert sleeps == [2.0]
    assert len(snapshot.answers[FACTS[0].fact_id].statements) == 2


def test_retry_after_http_date_is_honoured_and_bounded() -> None:
    sleeps = Sleeps()
    now = float(int(time.time()))  # HTTP-dates have whole seconds
    with StubWDQS() as wdqs, client(wdqs.url, sleeps, max_wait_s=7.0, clock=lambda: now) as wd:
        wdqs.faults = [Fault(status=429, headers={"Retry-After": email.utils.formatdate(now + 3, usegmt=True)})]
        wd.fetch(FACTS[:1])
        assert wdqs.count == 2
        assert sleeps == [3.0]
        # Asked to wait an hour: waiting less would only earn another 429 (and WDQS may block clients
        # that ignore Retry-After), waiting that long stalls the run, so it fails at once.
        wdqs.faults = [Fault(status=503, headers={"Retry-After": email.utils.formatdate(now + 3600, usegmt=True)})]
        with pytest.raises(EndpointError, match=r"HTTP 503; the server asks to retry after 3600 s, more than the 7 s"):
            wd.fetch(FACTS[:1])
    assert wdqs.count == 3 and len(sleeps) == 1


def test_server_error_forever_gives_up_after_max_retries() -> None:
    sleeps = Sleeps()
    with (
        StubWDQS(always=Fault(status=500, body=b"boom")) as wdqs,
        client(wdqs.url, sleeps) as wd,
        pytest.raises(EndpointError) as info,
    ):
        wd.fetch(FACTS[:2])
    assert wdqs.count == 3
    assert str(info.value) == f"WDQS {wdqs.url}: HTTP 500 (gave up after 3 attempts)"
    assert sleeps == [0.5, 1.0]  # exponential backoff, none after the last attempt


def test_garbage_body_is_an_error_not_a_retry() -> None:
    with (
        StubWDQS(always=Fault(status=200, body=b"<html>maintenance</html>")) as wdqs,
        client(wdqs.url) as wd,
        pytest.raises(EndpointError, match="non-JSON"),
    ):
        wd.fetch(FACTS[:1])
    assert wdqs.count == 1


def test_json_of_the_wrong_shape() -> None:
    with (
        StubWDQS(always=Fault(status=200, body=b'{"error": "nope"}')) as wdqs,
        client(wdqs.url) as wd,
        pytest.raises(EndpointError, match="not a SPARQL result"),
    ):
        wd.fetch(FACTS[:1])


def test_bad_request_is_not_retried() -> None:
    with (
        StubWDQS(always=Fault(status=400, body=b"MalformedQueryException: x\nmore")) as wdqs,
        client(wdqs.url) as wd,
        pytest.raises(EndpointError, match=r"HTTP 400 MalformedQueryException: x$"),
    ):
        wd.fetch(FACTS[:1])
    assert wdqs.count == 1


def test_slow_response_times_out_then_recovers() -> None:
    sleeps = Sleeps()
    with StubWDQS() as wdqs, client(wdqs.url, sleeps, timeout_s=0.2, max_retries=1) as wd:
        wdqs.faults = [Fault(delay_s=0.6, evaluate=True)]
        started = time.monotonic()
        snapshot = wd.fetch(FACTS[:1])
        assert time.monotonic() - started < 2.0
    assert wdqs.count == 2 and sleeps == [0.5]
    assert snapshot.answers[FACTS[0].fact_id].statements


def test_slow_forever_is_bounded() -> None:
    with (
        StubWDQS(always=Fault(delay_s=0.5, evaluate=True)) as wdqs,
        client(wdqs.url, timeout_s=0.15, max_retries=1) as wd,
    ):
        started = time.monotonic()
        with pytest.raises(EndpointError, match=r"timed out \(gave up after 2 attempts\)"):
            wd.fetch(FACTS[:1])
        assert time.monotonic() - started < 2.0
    assert wdqs.count == 2


def test_connection_refused_is_retried_and_reported() -> None:
    with StubWDQS() as wdqs:
        url = wdqs.url
    sleeps = Sleeps()
    with client(url, sleeps, max_retries=1) as wd, pytest.raises(EndpointError, match="connection failed"):
        wd.fetch(FACTS[:1])
    assert sleeps == [0.5]


def test_mock_transport_sees_the_query() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"head": {"vars": []}, "results": {"bindings": []}})

    with WikidataClient(transport=httpx.MockTransport(handler)) as wd:
        answers = wd.fetch_fact(FACTS[0])
    assert answers.statements == ()
    assert seen[0].url.host == "query.wikidata.org"
    assert "wd:Q38 p:P35" in seen[0].url.params["query"]


@pytest.mark.parametrize(
    "kwargs", [{"endpoint": "ftp://x"}, {"max_retries": -1}, {"method": "PUT"}, {"user_agent": " "}]
)
def test_bad_client_options(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        WikidataClient(**kwargs)  # type: ignore[arg-type]
