"""A polite client for the Wikidata Query Service (or any SPARQL 1.1 endpoint).

One query per fact, sent sequentially (WDQS asks clients not to run parallel
queries), with a descriptive User-Agent as the Wikimedia policy requires.
Throttling (429), server errors (5xx), timeouts and refused connections are
retried under the shared policy of :mod:`chronoprobe.retry` (Retry-After
honoured, waits bounded, each long wait announced). The timeout bounds each
attempt as a whole, so an answer that trickles in is a timeout too, and an
answer over :data:`MAX_ANSWER_BYTES` is refused before it is read whole.

An answer that is mostly empty is not gold: :func:`check_coverage` refuses a
retrieval in which fewer than half of the facts asked have a dated statement.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from chronoprobe.cache import stable_hash
from chronoprobe.errors import ChronoprobeError, ConfigError, EndpointError
from chronoprobe.knowledge.sparql import QUERY_TEMPLATE, build_query, parse_results
from chronoprobe.knowledge.types import Fact, FactAnswers, Snapshot
from chronoprobe.retry import Retryable, RetryPolicy, call_with_retries
from chronoprobe.version import __version__

if TYPE_CHECKING:  # imported where a query is sent: an offline run against a snapshot never needs it
    import httpx

WDQS_ENDPOINT = "https://query.wikidata.org/sparql"
USER_AGENT = f"chronoprobe/{__version__} (https://github.com/chronoprobe/chronoprobe; research audit tool)"
SPARQL_JSON = "application/sparql-results+json"
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_GET_QUERY = 6000
"""Longer queries go as a POST form: some proxies refuse URLs over 8 KB (WDQS accepts both)."""
MAX_ANSWER_BYTES = 256 * 2**20
"""A longer answer is refused, not parsed: no page of :data:`~chronoprobe.knowledge.templates.MAX_PAGE_SIZE`
subjects comes near it on Wikidata, and reading one without end would exhaust the memory."""

Progress = Callable[[int], None]
"""Called with the number of facts just finished (an increment, like CachedModel's callback)."""


def query_hash() -> str:
    """Identifies the query template a snapshot was retrieved with."""
    return stable_hash({"sparql": QUERY_TEMPLATE})


MIN_ANSWERED_SHARE = 0.5
"""A retrieval (or snapshot) must give a dated statement for at least this share of the facts asked."""


def check_coverage(
    answers: dict[str, FactAnswers],
    asked: Sequence[str],
    where: str,
    error: type[ChronoprobeError] = EndpointError,
) -> None:
    """Refuse gold answers in which far fewer facts than asked have any dated statement.

    A few empty facts are expected (a merged or renamed item); fewer than
    ``MIN_ANSWERED_SHARE`` of them answered means the source is broken (an
    empty mirror, a wrong endpoint, a failed load), and judging a model against
    it would turn missing data into confident verdicts.
    """
    if not asked:
        return
    answered = sum(1 for fact_id in asked if fact_id in answers and answers[fact_id].statements)
    if answered >= MIN_ANSWERED_SHARE * len(asked) and answered > 0:
        return
    statements = sum(len(answers[f].statements) for f in asked if f in answers)
    raise error(
        where,
        f"only {answered} of {len(asked)} facts asked have a dated statement ({statements} statements in all); "
        f"refusing to use this as gold answers (at least {MIN_ANSWERED_SHARE:.0%} of the facts must have one)",
    )


class WikidataClient:
    """Fetch the answers of facts from a SPARQL endpoint.

    ``max_retries`` counts retries after the first attempt (the default 3
    means at most four attempts per query); backoff and Retry-After waits are
    capped at ``max_wait_s`` (a longer Retry-After fails at once). ``timeout_s``
    bounds each attempt as a whole, however slowly the answer trickles in; an
    answer over ``max_answer_bytes`` fails at once. ``notice`` receives each
    announced wait. ``sleep`` and ``clock`` can be injected so tests need not wait.
    """

    def __init__(
        self,
        endpoint: str = WDQS_ENDPOINT,
        user_agent: str = USER_AGENT,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        transport: httpx.BaseTransport | None = None,
        *,
        method: str = "GET",
        backoff_s: float = 2.0,
        max_wait_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        notice: Callable[[str], None] | None = None,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        if not endpoint.startswith(("http://", "https://")):
            raise ConfigError(f"endpoint {endpoint!r}", "must be an http:// or https:// URL")
        if not 0 <= max_retries <= 20:
            raise ConfigError("max_retries", f"must be between 0 and 20, got {max_retries}")
        if backoff_s < 0 or max_wait_s < 0:
            raise ConfigError("backoff_s / max_wait_s", "must not be negative")
        if method not in ("GET", "POST"):
            raise ConfigError("method", f"must be GET or POST, got {method!r}")
        if not user_agent.strip():
            raise ConfigError("user_agent", "WDQS rejects requests without a descriptive User-Agent")
        self.endpoint = endpoint
        self.method = method
        self.timeout_s = timeout_s
        self.max_answer_bytes = max_answer_bytes
        self.retry = RetryPolicy(
            max_retries=max_retries, backoff_s=backoff_s, max_backoff_s=max_wait_s, max_retry_after_s=max_wait_s
        )
        self._sleep = sleep
        self._clock = clock
        self._notice = notice
        import httpx  # deferred: httpx

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

    def _request(self, query: str) -> httpx.Request:
        params = {"query": query, "format": "json"}
        if self.method == "GET" and len(query) <= MAX_GET_QUERY:
            return self._http.build_request("GET", self.endpoint, params=params)
        return self._http.build_request("POST", self.endpoint, data=params)

    def _receive(self, query: str) -> tuple[int, httpx.Headers, bytes]:
        """Status, headers and body of one attempt, read within ``timeout_s`` and ``max_answer_bytes``."""
        deadline = time.monotonic() + self.timeout_s
        response = self._http.send(self._request(query), stream=True)
        try:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > self.max_answer_bytes:
                raise self._too_large()
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > self.max_answer_bytes:
                    raise self._too_large()
                if time.monotonic() > deadline:
                    raise Retryable(f"the answer took longer than {self.timeout_s:g} s")
            return response.status_code, response.headers, bytes(body)
        finally:
            response.close()

    def _too_large(self) -> EndpointError:
        limit = f"{self.max_answer_bytes / 2**20:g} MiB"
        return EndpointError(self._where(), f"answered more than {limit}; ask for less (a smaller page_size or limit)")

    def query(self, query: str, check: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Run one SPARQL query and return its JSON result, retrying transient failures.

        ``check`` may raise :class:`~chronoprobe.retry.Retryable` for an answer that cannot be
        right (an empty page where subjects were selected): it is retried like a 429.
        """
        return call_with_retries(
            lambda: self._attempt(query, check),
            self.retry,
            where=self._where(),
            sleep=self._sleep,
            clock=self._clock,
            notice=self._notice,
        )

    def _attempt(self, query: str, check: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        import httpx  # deferred: httpx

        try:
            status, headers, body = self._receive(query)
        except httpx.TimeoutException:
            raise Retryable("timed out") from None
        except httpx.TransportError as exc:
            raise Retryable(f"connection failed ({type(exc).__name__})") from None
        if status in _RETRY_STATUS:
            raise Retryable(f"HTTP {status}", headers.get("Retry-After"))
        if status >= 400:
            text = body[:2000].decode("utf-8", "replace").strip()
            first = " ".join(text.splitlines()[0].split())[:160] if text else ""
            detail = "".join(char if char.isprintable() else "?" for char in first)  # no terminal escapes
            raise EndpointError(self._where(), f"HTTP {status} {detail}".rstrip())
        data = self._decode(headers, body)
        if check is not None:
            check(data)
        return data

    def _decode(self, headers: httpx.Headers, body: bytes) -> dict[str, Any]:
        try:
            data = json.loads(body)
        except ValueError:
            text = body.decode("utf-8", "replace")
            if text.lstrip().startswith("{"):
                # WDQS streams its answer: a query that overruns mid-stream ends in a 200 with half a JSON body
                raise Retryable("truncated JSON answer") from None
            kind = headers.get("Content-Type", "unknown content type")
            raise EndpointError(self._where(), f"answered with non-JSON ({kind}): {text[:80]!r}") from None
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
        Raises ``EndpointError`` when far fewer facts than asked came back with a
        dated statement (see :func:`check_coverage`).
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
        check_coverage(answers, [fact.fact_id for fact in facts], self._where())
        return Snapshot(
            name=name or f"wikidata-{today.isoformat()}",
            retrieved=today,
            endpoint=self.endpoint,
            query_hash=query_hash(),
            answers=answers,
            warnings=warnings,
        )
