"""The one retry policy shared by the WDQS client and the openai backend."""

from __future__ import annotations

import email.utils
import logging
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "knowledge"))
from wdqs_stub import Fault, StubWDQS

from chronoprobe.errors import ConfigError, EndpointError
from chronoprobe.knowledge.types import Fact
from chronoprobe.knowledge.wikidata import WikidataClient
from chronoprobe.models.base import Capability, DecodingParams, Prompt
from chronoprobe.models.openai_backend import OpenAIBackend, OpenAIConfig
from chronoprobe.retry import Retryable, RetryPolicy, call_with_retries, parse_retry_after
from chronoprobe.testing import MockBackend
from chronoprobe.testing.openai_server import FaultPlan, OpenAIServer


def echo() -> MockBackend:
    """A deterministic stand-in model served by the loopback OpenAI server: always answers "ok"."""
    return MockBackend(
        lambda prompt, params: "ok",
        name="echo",
        capabilities={Capability.GENERATE, Capability.SAMPLE_N, Capability.CHAT_TEMPLATE},
    )


ITALY = Fact(
    fact_id="countries_byGDP/Italy/President of Italy",
    category="countries_byGDP",
    subject="Italy",
    subject_qid="Q38",
    property="P35",
    templates=("x is",),
)


def test_retry_after_seconds_and_http_dates() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after("30", lambda: now) == 30.0
    assert parse_retry_after(" 0.25 ", lambda: now) == 0.25
    assert parse_retry_after(email.utils.formatdate(now + 45, usegmt=True), lambda: now) == 45.0
    assert parse_retry_after(email.utils.formatdate(now - 45, usegmt=True), lambda: now) == 0.0
    assert parse_retry_after("-5", lambda: now) == 0.0
    for unreadable in (None, "", "  ", "soon", "nan", "inf", "Mon, 99 Foo 2024"):
        assert parse_retry_after(unreadable, lambda: now) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after(future) or 0) <= 31


class Flaky:
    """Fails with ``Retryable`` ``failures`` times, then returns the number of calls."""

    def __init__(self, failures: int, retry_after: str | None = None) -> None:
        self.failures, self.retry_after, self.calls = failures, retry_after, 0

    def __call__(self) -> int:
        self.calls += 1
        if self.calls <= self.failures:
            raise Retryable("HTTP 503", self.retry_after)
        return self.calls


def test_max_retries_counts_retries_after_the_first_attempt() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=2, backoff_s=0.5, max_backoff_s=0.8)
    assert policy.attempts == 3
    flaky = Flaky(failures=10)
    with pytest.raises(EndpointError) as caught:
        call_with_retries(flaky, policy, where="srv", sleep=sleeps.append)
    assert flaky.calls == 3
    assert sleeps == [0.5, 0.8]  # exponential, capped, none after the last attempt
    assert str(caught.value) == "srv: HTTP 503 (gave up after 3 attempts)"
    assert call_with_retries(Flaky(failures=2), policy, where="srv", sleep=sleeps.append) == 3
    single = Flaky(failures=10)
    with pytest.raises(EndpointError, match=r"gave up after 1 attempt\)"):
        call_with_retries(single, RetryPolicy(max_retries=0), where="srv", sleep=sleeps.append)
    assert single.calls == 1


def test_other_errors_are_not_retried() -> None:
    calls = []

    def broken() -> None:
        calls.append(1)
        raise ConfigError("x", "bad")

    with pytest.raises(ConfigError):
        call_with_retries(broken, RetryPolicy(), where="srv", sleep=lambda s: None)
    assert calls == [1]


def test_retry_after_is_honoured_up_to_the_bound_then_fails_at_once() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=3, backoff_s=0.5, max_backoff_s=1.0, max_retry_after_s=40)
    assert call_with_retries(Flaky(1, retry_after="30"), policy, where="srv", sleep=sleeps.append) == 2
    assert sleeps == [30.0]  # above the backoff cap: Retry-After wins, up to max_retry_after_s
    too_long = Flaky(5, retry_after="41")
    with pytest.raises(EndpointError, match="retry after 41 s, more than the 40 s chronoprobe waits"):
        call_with_retries(too_long, policy, where="srv", sleep=sleeps.append)
    assert too_long.calls == 1 and sleeps == [30.0]


def test_each_long_wait_is_announced(caplog: pytest.LogCaptureFixture) -> None:
    notices: list[str] = []
    policy = RetryPolicy(max_retries=2, backoff_s=0.01)
    with caplog.at_level(logging.WARNING, logger="chronoprobe.retry"):
        call_with_retries(
            Flaky(2, retry_after="30"),
            policy,
            where="https://wdqs.example/sparql",
            sleep=lambda s: None,
            notice=notices.append,
        )
        call_with_retries(Flaky(1), policy, where="quiet", sleep=lambda s: None, notice=notices.append)
    expected = [
        "waiting 30 s (Retry-After) before retrying https://wdqs.example/sparql: HTTP 503 (retry 1 of 2)",
        "waiting 30 s (Retry-After) before retrying https://wdqs.example/sparql: HTTP 503 (retry 2 of 2)",
    ]
    assert notices == expected  # a 10 ms backoff is not worth a line
    assert [r.getMessage() for r in caplog.records if r.name == "chronoprobe.retry"] == expected


def test_max_retries_two_means_three_attempts_on_both_clients() -> None:
    with StubWDQS(always=Fault(status=500, body=b"boom")) as wdqs:
        with (
            WikidataClient(endpoint=wdqs.url, max_retries=2, sleep=lambda s: None) as client,
            pytest.raises(EndpointError, match=r"HTTP 500 \(gave up after 3 attempts\)"),
        ):
            client.fetch([ITALY])
        assert wdqs.count == 3
    with OpenAIServer(echo(), model_name="echo", faults=FaultPlan("500", first=-1)) as server:
        backend = OpenAIBackend(OpenAIConfig(model="echo", base_url=server.url, max_retries=2, backoff_base_s=0.001))
        with pytest.raises(EndpointError, match=r"HTTP 500: .*\(gave up after 3 attempts\)"):
            backend.generate([Prompt(text="x")], DecodingParams(max_new_tokens=4))
        backend.close()
        assert server.stats.count == 3


@pytest.mark.e2e
def test_both_clients_announce_a_retry_after_wait(caplog: pytest.LogCaptureFixture) -> None:
    notices: list[str] = []
    with StubWDQS() as wdqs, caplog.at_level(logging.WARNING, logger="chronoprobe.retry"):
        wdqs.faults = [Fault(status=429, headers={"Retry-After": "30"})]
        with WikidataClient(endpoint=wdqs.url, sleep=lambda s: None, notice=notices.append) as client:
            client.fetch([ITALY])
    assert notices == [f"waiting 30 s (Retry-After) before retrying WDQS {wdqs.url}: HTTP 429 (retry 1 of 3)"]
    caplog.clear()
    with OpenAIServer(echo(), model_name="echo", faults=FaultPlan("429", first=1, retry_after=1.0)) as server:
        backend = OpenAIBackend(OpenAIConfig(model="echo", base_url=server.url, max_retries=2))
        with caplog.at_level(logging.WARNING, logger="chronoprobe.retry"):
            backend.generate([Prompt(text="x")], DecodingParams(max_new_tokens=4))
    [message] = [r.getMessage() for r in caplog.records if r.name == "chronoprobe.retry"]
    assert message.startswith(f"waiting 1 s (Retry-After) before retrying {server.url}/chat/completions: HTTP 429")


def test_default_backoff_is_silent_and_long_backoff_is_announced() -> None:
    notices: list[str] = []
    # 1, 2 and 4 s: an endpoint that is simply down gives one error line, no notice per retry.
    with pytest.raises(EndpointError):
        call_with_retries(
            Flaky(9), RetryPolicy(max_retries=3), where="down", sleep=lambda s: None, notice=notices.append
        )
    assert notices == []
    call_with_retries(
        Flaky(1), RetryPolicy(max_retries=1, backoff_s=12), where="slow", sleep=lambda s: None, notice=notices.append
    )
    assert notices == ["waiting 12 s (backoff) before retrying slow: HTTP 503 (retry 1 of 1)"]
