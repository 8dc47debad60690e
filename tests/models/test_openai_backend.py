"""The openai backend against a real loopback HTTP server (127.0.0.1 only).

Fault and protocol tests serve a mock backend (chronoprobe.testing.MockBackend, no
model load); the ``slow`` tests serve the embedded SmolLM2 through the same server.
"""

from __future__ import annotations

import email.utils
import json
import math
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.errors import CapabilityError, EndpointError
from chronoprobe.models.base import (
    Backend,
    Capability,
    DecodingParams,
    Prompt,
    require,
)
from chronoprobe.models.openai_backend import (
    OpenAIBackend,
    OpenAIConfig,
    _Choice,
    _drop_echoed_prefix,
)
from chronoprobe.models.registry import BackendOptions, load_backend
from chronoprobe.provenance import Provenance
from chronoprobe.retry import parse_retry_after
from chronoprobe.testing import MockBackend, MockPrompt
from chronoprobe.testing.openai_server import FaultPlan, OpenAIServer


def echo(prompt: MockPrompt, params: DecodingParams) -> list[str]:
    """Answers ``echo:<last user text><answer prefix>#<sample index>``."""
    return [f"echo:{prompt.request}{prompt.prompt.answer_prefix}#{i}" for i in range(params.n)]


def echo_backend() -> MockBackend:
    return MockBackend(
        echo,
        name="echo",
        capabilities={Capability.GENERATE, Capability.SAMPLE_N, Capability.TOKEN_LOGPROBS, Capability.CHAT_TEMPLATE},
    )


_OPENED: list[OpenAIBackend] = []


def _client(url: str, **overrides: object) -> OpenAIBackend:
    """A backend on ``url``, closed when the test ends (an open client's sockets would warn when collected)."""
    settings: dict[str, object] = {"model": "echo", "base_url": url, "backoff_base_s": 0.001, "timeout_s": 5.0}
    settings.update(overrides)
    backend = OpenAIBackend(OpenAIConfig(**settings))  # type: ignore[arg-type]
    _OPENED.append(backend)
    return backend


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPENED:
        _OPENED.pop().close()


@pytest.fixture
def echo_server() -> Iterator[OpenAIServer]:
    with OpenAIServer(echo_backend(), model_name="echo") as server:
        yield server


GREEDY = DecodingParams(max_new_tokens=8)


# -- rendering and request mapping (no network) ---------------------------------


def test_render_chat_is_canonical_json_with_prefix_modes() -> None:
    prompt = Prompt.chat("Who leads X?", system="Be brief.", answer_prefix="X is led by")
    user = _client("http://127.0.0.1:9/v1")
    rendered = user.render(prompt)
    assert rendered == (
        '{"messages":[{"content":"Be brief.","role":"system"},'
        '{"content":"Who leads X?\\n\\nX is led by","role":"user"}]}'
    )
    assert user.render(Prompt.chat("Who leads X?", system="Be brief.", answer_prefix="X is led by")) == rendered
    cont = _client("http://127.0.0.1:9/v1", prefix_mode="continue")
    assert json.loads(cont.render(prompt)) == {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Who leads X?"},
            {"role": "assistant", "content": "X is led by"},
        ],
        "continue_final_message": True,
        "add_generation_prompt": False,
    }
    text_only = _client("http://127.0.0.1:9/v1").render(Prompt(text="Q?"))
    assert json.loads(text_only) == {"messages": [{"role": "user", "content": "Q?"}]}
    completions = _client("http://127.0.0.1:9/v1", mode="completions")
    assert (
        completions.render(Prompt.chat("ignored", fallback_text="The head of X is", answer_prefix=" Mr"))
        == "The head of X is Mr"
    )


def test_request_body_carries_every_decoding_parameter(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.loads(request.content)
        choices = [
            {
                "index": i,
                "text": f"s{i}",
                "finish_reason": "length",
                "logprobs": {"tokens": ["a", "b"], "token_logprobs": [-1.0, -2.0]},
            }
            for i in reversed(range(body["n"]))
        ]
        return httpx.Response(200, json={"model": "m-2025", "choices": choices})

    monkeypatch.setenv("CHRONO_TEST_KEY_A", "sk-unit-123")
    backend = OpenAIBackend(
        OpenAIConfig(
            model="m",
            base_url="http://example.invalid/v1/",
            mode="completions",
            api_key_env="CHRONO_TEST_KEY_A",
            top_logprobs=3,
        ),
        transport=httpx.MockTransport(answer),
    )
    params = DecodingParams(
        max_new_tokens=7, temperature=0.7, top_p=0.9, top_k=40, n=2, seed=11, stop=("\n",), first_token_prob=True
    )
    [generation] = backend.generate([Prompt(text="Hi")], params)
    [request] = seen
    assert str(request.url) == "http://example.invalid/v1/completions"
    assert request.headers["authorization"] == "Bearer sk-unit-123"
    assert json.loads(request.content) == {
        "prompt": "Hi",
        "model": "m",
        "max_tokens": 7,
        "temperature": 0.7,
        "top_p": 0.9,
        "n": 2,
        "seed": 11,
        "top_k": 40,
        "stop": ["\n"],
        "logprobs": 3,
    }
    # choices come back sorted by index, with exp(first logprob) as first_token_prob
    assert [s.text for s in generation.samples] == ["s0", "s1"]
    assert generation.samples[0].finish_reason == "length"
    assert generation.samples[0].first_token_prob == pytest.approx(math.exp(-1.0))
    assert backend.info.extra["served_model"] == "m-2025"


def test_info_and_waves() -> None:
    backend = _client("https://user:pw@api.example.com:8443/v1/?x=1", concurrency=3, spec="openai:echo@somewhere")
    info = backend.info
    assert (info.backend, info.model_id, info.batch_size, info.spec) == ("openai", "echo", 3, "openai:echo@somewhere")
    assert info.revision == "api@api.example.com:8443/v1"
    assert "pw" not in info.model_dump_json()
    waves = backend.plan_batches([str(i) for i in range(30)])
    assert waves == [list(range(12)), list(range(12, 24)), list(range(24, 30))]
    assert Capability.MEAN_DISTRIBUTION not in backend.capabilities
    assert Capability.CHAT_TEMPLATE in backend.capabilities
    assert Capability.CHAT_TEMPLATE not in _client("http://127.0.0.1:9/v1", mode="completions").capabilities


def test_retry_after_parsing() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.25") == 0.25
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after(future) or 0) <= 31
    assert parse_retry_after(email.utils.formatdate(time.time() - 30, usegmt=True)) == 0.0


def test_echoed_prefix_is_dropped_with_its_tokens() -> None:
    choice = _Choice(
        text="X is led by Ann.",
        finish="stop",
        tokens=["X", " is", " led", " by", " Ann", "."],
        logprobs=[-1.0, -0.1, -0.2, -0.3, -0.4, -0.5],
    )
    out = _drop_echoed_prefix(choice, "X is led by")
    assert (out.text, out.tokens, out.logprobs) == (" Ann.", [" Ann", "."], [-0.4, -0.5])
    untouched = _drop_echoed_prefix(choice, "Y is")
    assert untouched.text == choice.text and untouched.logprobs == choice.logprobs


# -- protocol and faults against the loopback server ---------------------------


def test_capability_refusal_happens_before_any_request(echo_server: OpenAIServer) -> None:
    backend = _client(echo_server.url)
    wants_distribution = DecodingParams(mean_distribution=True)
    with pytest.raises(CapabilityError, match="mean_distribution"):
        require(backend, wants_distribution, purpose="the dyknow audit")
    with pytest.raises(CapabilityError, match="mean_distribution"):
        backend.generate([Prompt(text="a")], wants_distribution)
    with pytest.raises(CapabilityError, match="mean_distribution"):
        CachedModel(backend, CallCache(":memory:")).generate([Prompt(text="a")], wants_distribution)
    assert echo_server.stats.count == 0


@pytest.mark.e2e
def test_concurrency_is_limited_and_order_preserved(echo_server: OpenAIServer) -> None:
    echo_server.delay_s = 0.3
    backend = _client(echo_server.url, concurrency=3)
    prompts = [Prompt.chat(f"q{i}") for i in range(9)]
    out = backend.generate(prompts, DecodingParams(n=2))
    assert [g.samples[0].text for g in out] == [f"echo:q{i}#0" for i in range(9)]
    assert [g.samples[1].text for g in out] == [f"echo:q{i}#1" for i in range(9)]
    assert echo_server.stats.count == 9
    assert echo_server.stats.max_in_flight == 3


def test_429_then_success_honours_retry_after() -> None:
    with OpenAIServer(echo_backend(), model_name="echo", faults=FaultPlan("429", first=2, retry_after=0.2)) as server:
        [generation] = _client(server.url).generate([Prompt(text="hello")], GREEDY)
        starts = [r.started for r in server.stats.requests]
    assert generation.text == "echo:hello#0"
    assert [r.status for r in server.stats.requests] == [429, 429, 200]
    # small margin for timer granularity; without Retry-After the client would wait only ~1 ms
    assert starts[1] - starts[0] >= 0.18 and starts[2] - starts[1] >= 0.18


def test_500_forever_gives_up_after_bounded_attempts() -> None:
    with OpenAIServer(echo_backend(), model_name="echo", faults=FaultPlan("500", first=-1)) as server:
        with pytest.raises(EndpointError) as caught:
            _client(server.url, max_retries=2).generate([Prompt(text="hello")], GREEDY)
        assert server.stats.count == 3
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{server.url}/chat/completions: HTTP 500")
    assert "3 attempts" in message


def test_too_long_retry_after_fails_at_once() -> None:
    with OpenAIServer(echo_backend(), model_name="echo", faults=FaultPlan("429", first=-1, retry_after=600)) as server:
        with pytest.raises(EndpointError, match="retry after 600 s"):
            _client(server.url, max_retry_after_s=5).generate([Prompt(text="x")], GREEDY)
        assert server.stats.count == 1


@pytest.mark.parametrize(("kind", "expected"), [("garbage", "not JSON"), ("bad_shape", "unexpected response shape")])
def test_malformed_responses_are_endpoint_errors(kind: str, expected: str) -> None:
    with OpenAIServer(echo_backend(), model_name="echo", faults=FaultPlan(kind, first=-1)) as server:  # type: ignore[arg-type]
        with pytest.raises(EndpointError, match=expected) as caught:
            _client(server.url).generate([Prompt(text="x")], GREEDY)
        assert server.stats.count == 1
    assert "\n" not in str(caught.value)


@pytest.mark.e2e
def test_timeouts_are_retried_then_reported() -> None:
    with OpenAIServer(echo_backend(), model_name="echo", faults=FaultPlan("slow", first=1, sleep_s=2.0)) as server:
        [generation] = _client(server.url, timeout_s=0.3, max_retries=1).generate([Prompt(text="x")], GREEDY)
        assert generation.text == "echo:x#0"
    with OpenAIServer(echo_backend(), model_name="echo", faults=FaultPlan("slow", first=-1, sleep_s=2.0)) as server:
        with pytest.raises(EndpointError, match=r"no response within 0.3 s \(gave up after 2 attempts\)"):
            _client(server.url, timeout_s=0.3, max_retries=1).generate([Prompt(text="x")], GREEDY)
        assert server.stats.count == 2


def test_client_errors_are_not_retried(echo_server: OpenAIServer) -> None:
    with pytest.raises(EndpointError, match="HTTP 404: The model `nope` does not exist"):
        _client(echo_server.url, model="nope", max_retries=3).generate([Prompt(text="x")], GREEDY)
    assert echo_server.stats.count == 1


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(EndpointError, match=r"connection failed .*gave up after 2 attempts"):
        _client(f"http://127.0.0.1:{port}/v1", max_retries=1).generate([Prompt(text="x")], GREEDY)


def test_api_key_is_sent_but_never_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-loopback-secret-9f8e7d"
    with OpenAIServer(echo_backend(), model_name="echo", api_key=secret) as server:
        monkeypatch.delenv("CHRONO_TEST_KEY_B", raising=False)
        with pytest.raises(EndpointError, match=r"HTTP 401: .*CHRONO_TEST_KEY_B") as refused:
            _client(server.url, api_key_env="CHRONO_TEST_KEY_B").generate([Prompt(text="x")], GREEDY)
        monkeypatch.setenv("CHRONO_TEST_KEY_B", secret)
        backend = _client(server.url, api_key_env="CHRONO_TEST_KEY_B")
        [generation] = backend.generate([Prompt(text="x")], GREEDY)
        assert generation.text == "echo:x#0"
        assert server.stats.requests[-1].authorization == f"Bearer {secret}"
    assert secret not in str(refused.value)
    assert secret not in backend.info.model_dump_json()
    assert secret not in Provenance(models=[backend.info], decoding=GREEDY.model_dump()).model_dump_json()


def test_registry_builds_the_openai_backend(echo_server: OpenAIServer) -> None:
    options = BackendOptions(api_mode="completions", concurrency=2, timeout_s=5)
    backend = load_backend(f"openai:echo@{echo_server.url}/", options)
    assert isinstance(backend, OpenAIBackend)
    _OPENED.append(backend)
    assert (backend.config.mode, backend.info.batch_size) == ("completions", 2)
    assert backend.info.spec == f"openai:echo@{echo_server.url}/"
    [generation] = backend.generate([Prompt(text="via registry")], GREEDY)
    assert generation.text == "echo:via registry#0"
    assert echo_server.stats.requests[0].path == "/v1/completions"


# -- the real tiny model behind the server -------------------------------------


@pytest.fixture(scope="module")
def smollm2() -> Iterator[Backend]:
    backend = load_backend("smollm2", BackendOptions(batch_size=4))
    yield backend


@pytest.fixture(scope="module")
def smollm2_server(smollm2: Backend) -> Iterator[OpenAIServer]:
    with OpenAIServer(smollm2, model_name="smollm2") as server:
        yield server


@pytest.mark.slow
def test_completions_greedy_matches_hf_backend(smollm2: Backend, smollm2_server: OpenAIServer) -> None:
    api = _client(smollm2_server.url, model="smollm2", mode="completions", timeout_s=120)
    prompt = Prompt(text="The capital of France is")
    params = DecodingParams(max_new_tokens=6, token_logprobs=True, first_token_prob=True)
    [remote] = api.generate([prompt], params)
    [local] = smollm2.generate([Prompt(text=api.render(prompt))], params)
    assert remote.rendered_prompt == local.rendered_prompt == "The capital of France is"
    assert remote.text == local.text and "Paris" in remote.text
    assert remote.samples[0].token_logprobs == pytest.approx(local.samples[0].token_logprobs, abs=1e-5)
    assert remote.samples[0].first_token_prob == pytest.approx(local.samples[0].first_token_prob, rel=1e-5)


@pytest.mark.slow
def test_chat_mode_samples_and_logprobs(smollm2: Backend, smollm2_server: OpenAIServer) -> None:
    api = _client(smollm2_server.url, model="smollm2", timeout_s=120, prefix_mode="continue")
    question = Prompt.chat("What is the capital of France?")
    [greedy] = api.generate([question], DecodingParams(max_new_tokens=8, token_logprobs=True))
    assert greedy.text.strip() and greedy.samples[0].token_logprobs
    assert all(lp <= 0 for lp in greedy.samples[0].token_logprobs)
    assert greedy.text == smollm2.generate([question], DecodingParams(max_new_tokens=8))[0].text
    body = smollm2_server.stats.requests[-1].body
    assert body["logprobs"] is True and body["top_logprobs"] == 1
    # continue mode: the server continues the assistant prefix, exactly like the hf backend does
    prefixed = Prompt.chat("What is the capital of France?", answer_prefix="The capital is")
    [continued] = api.generate([prefixed], DecodingParams(max_new_tokens=5))
    assert continued.text == smollm2.generate([prefixed], DecodingParams(max_new_tokens=5))[0].text
    [sampled] = api.generate([question], DecodingParams(max_new_tokens=6, n=3, temperature=1.0, seed=5))
    assert len(sampled.samples) == 3 and all(isinstance(s.text, str) for s in sampled.samples)
    assert smollm2_server.stats.requests[-1].body["n"] == 3


@pytest.mark.slow
def test_cached_model_makes_no_second_request(smollm2_server: OpenAIServer, tmp_path: object) -> None:
    cache = CallCache(f"{tmp_path}/calls.sqlite")
    model = CachedModel(_client(smollm2_server.url, model="smollm2", mode="completions", timeout_s=120), cache)
    prompts = [Prompt(text="The capital of Italy is"), Prompt(text="The capital of Spain is")]
    params = DecodingParams(max_new_tokens=4, token_logprobs=True)
    before = smollm2_server.stats.count
    first = model.generate(prompts, params)
    assert smollm2_server.stats.count == before + 2
    again = model.generate(prompts, params)
    assert smollm2_server.stats.count == before + 2
    assert [g.text for g in again] == [g.text for g in first]
    assert [g.samples[0].token_logprobs for g in again] == [g.samples[0].token_logprobs for g in first]
    cache.close()


# -- the server as a command ---------------------------------------------------


@pytest.mark.e2e
def test_server_command_rejects_a_bad_spec_in_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "chronoprobe.testing.openai_server", "--model", "nonsense"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: model spec 'nonsense': unknown model spec")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_server_command_prints_its_url_and_serves() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "chronoprobe.testing.openai_server", "--model", "smollm2", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 120)
        assert ready, "the server printed no URL within 120 s"
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        listing = httpx.get(f"{url}/models", timeout=10).json()
        assert listing["data"][0]["id"] == "smollm2"
        [generation] = _client(url, model="smollm2", mode="completions", timeout_s=60).generate(
            [Prompt(text="One, two,")], DecodingParams(max_new_tokens=3)
        )
        assert generation.text.strip()
    finally:
        process.terminate()
        process.communicate(timeout=30)  # waits, and closes the pipe
