"""A polite client for the Wikidata Query Service (or any SPARQL 1.1 endpoint).

One query per fact, sent sequentially (WDQS asks clients not to run parallel
queries), with a descriptive User-Agent as the Wikimedia policy requires.
Throttling (429) and server errors (5xx) are retried with exponential backoff,
honouring ``Retry-After``; every wait is capped so a run stays bounded.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from chronoprobe import __version__
from chronoprobe.cache import stable_hash
from chronoprobe.errors import ChronoprobeError, ConfigError, EndpointError
from chronoprobe.knowledge.sparql import QUERY_TEMPLATE, build_query, parse_results
from chronoprobe.knowledge.types import Fact, FactAnswers, Snapshot

WDQS_ENDPOINT = "https://query.wikidata.org/sparql"
USER_AGENT = f"chronoprobe/{__version__} (https://github.com/chronoprobe/chronoprobe; research audit tool)"
SPARQL_JSON = "application/sparql-results+json"
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})

Progress = Callable[[int], None]
"""Called with the number of facts just finished (an increment, like CachedModel's callback)."""


def query_hash() -> str:
    """Identifies the query template a snapshot was retrieved with."""
    return stable_hash({"sparql": QUERY_TEMPLATE})


def _retry_after(value: str | None, now: Callable[[], float]) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, when.timestamp() - now())


class WikidataClient:
    """Fetch the answers of facts from a SPARQL endpoint.

    ``max_retries`` is the total number of attempts per query (so the default
    of 4 means one try and three retries). ``sleep`` and ``clock`` can be
    injected so tests need not wait.
    """

    def __init__(
        self,
        endpoint: str = WDQS_ENDPOINT,
        user_agent: str = USER_AGENT,
        timeout_s: float = 30.0,
        max_retries: int = 4,
        transport: httpx.BaseTransport | None = None,
        *,
        method: str = "GET",
        backoff_s: float = 2.0,
        max_wait_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not endpoint.startswith(("http://", "https://")):
            raise ConfigError(f"endpoint {endpoint!r}", "must be an http:// or https:// URL")
        if max_retries < 1:
            raise ConfigError("max_retries", f"must be at least 1, got {max_retries}")
        if method not in ("GET", "POST"):
            raise ConfigError("method", f"must be GET or POST, got {method!r}")
        if not user_agent.strip():
            raise ConfigError("user_agent", "WDQS rejects requests without a descriptive User-Agent")
        self.endpoint = endpoint
        self.max_retries = max_retries
        self.method = method
        self.backoff_s = backoff_s
        self.max_wait_s = max_wait_s
        self._sleep = sleep
        self._clock = clock
        self._http = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(timeout_s),
            headers={"User-Agent": user_agent, "Accept": SPARQL_JSON},
            follow_redirects=True,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> WikidataClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _where(self) -> str:
        return f"WDQS {self.endpoint}"

    def _send(self, query: str) -> httpx.Response:
        params = {"query": query, "format": "json"}
        if self.method == "GET":
            return self._http.get(self.endpoint, params=params)
        return self._http.post(self.endpoint, data=params)

    def query(self, query: str) -> dict[str, Any]:
        """Run one SPARQL query and return its JSON result, retrying transient failures."""
        last = ""
        for attempt in range(1, self.max_retries + 1):
            wait: float | None = None
            try:
                response = self._send(query)
            except httpx.TimeoutException:
                last = "timed out"
            except httpx.TransportError as exc:
                last = f"connection failed ({type(exc).__name__})"
            else:
                if response.status_code in _RETRY_STATUS:
                    last = f"HTTP {response.status_code}"
                    wait = _retry_after(response.headers.get("Retry-After"), self._clock)
                elif response.status_code >= 400:
                    detail = response.text.strip().splitlines()[0][:160] if response.text.strip() else ""
                    raise EndpointError(self._where(), f"HTTP {response.status_code} {detail}".rstrip())
                else:
                    return self._decode(response)
            if attempt == self.max_retries:
                break
            if wait is None:
                wait = self.backoff_s * 2 ** (attempt - 1)
            self._sleep(min(wait, self.max_wait_s))
        raise EndpointError(self._where(), f"{last} after {self.max_retries} attempts")

    def _decode(self, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            kind = response.headers.get("Content-Type", "unknown content type")
            raise EndpointError(self._where(), f"answered with non-JSON ({kind}): {response.text[:80]!r}") from None
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            raise EndpointError(self._where(), "answered JSON that is not a SPARQL result (no 'results' object)")
        return data

    def fetch_fact(self, fact: Fact) -> FactAnswers:
        if fact.subject_qid is None:
            raise ConfigError(f"fact {fact.fact_id}", "has no subject QID, cannot query Wikidata")
        data = self.query(build_query(fact.subject_qid, fact.property))
        return parse_results(data, fact_id=fact.fact_id, endpoint=self._where())

    def fetch(self, facts: Sequence[Fact], progress: Progress | None = None, name: str | None = None) -> Snapshot:
        """Retrieve every fact now. Facts with no statement at all are kept empty and listed in ``warnings``.

        All queries are built (and so all ids validated) before the first request.
        """
        queries = []
        for fact in facts:
            if fact.subject_qid is None:
                raise ConfigError(f"fact {fact.fact_id}", "has no subject QID, cannot query Wikidata")
            try:
                queries.append(build_query(fact.subject_qid, fact.property))
            except ChronoprobeError as exc:
                raise type(exc)(f"fact {fact.fact_id}", f"{exc.where} {exc.problem}") from exc
        today = dt.date.today()
        answers: dict[str, FactAnswers] = {}
        warnings: dict[str, str] = {}
        for fact, sparql in zip(facts, queries, strict=True):
            parsed = parse_results(self.query(sparql), fact_id=fact.fact_id, endpoint=self._where())
            if not parsed.statements:
                doubt = "; its catalogue QID is marked low confidence" if fact.qid_confidence == "low" else ""
                warnings[fact.fact_id] = (
                    f"no statements for {fact.subject_qid} {fact.property} (unknown, merged or wrong item?{doubt})"
                )
            elif not parsed.counted().statements:
                warnings[fact.fact_id] = "no statement has a start date (P580); nothing counts as an answer"
            answers[fact.fact_id] = parsed.counted()
            if progress is not None:
                progress(1)
        return Snapshot(
            name=name or f"wikidata-{today.isoformat()}",
            retrieved=today,
            endpoint=self.endpoint,
            query_hash=query_hash(),
            answers=answers,
            warnings=warnings,
        )
