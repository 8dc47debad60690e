"""Backend for any OpenAI-compatible HTTP server (OpenAI, vLLM, llama.cpp, TGI ...).

Talks to ``/chat/completions`` (messages; the server applies the chat
template) or ``/completions`` (a bare text prompt) with httpx directly.
What is exact and what is not is documented in ``docs/backends.md``; in short:
per-token log-probabilities of the *chosen* tokens are what the server reports
(exact for that token), the next-token distribution is not available at all,
and ``token_ids`` stay empty because the API returns token strings, not ids.
"""

from __future__ import annotations

import json
import math
import os
import threading
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from chronoprobe.errors import ConfigError, EndpointError
from chronoprobe.models.base import (
    Backend,
    BackendInfo,
    Capability,
    DecodingParams,
    Generation,
    Producer,
    Prompt,
    Sample,
    require,
)
from chronoprobe.models.defaults import WAVE_PER_REQUEST
from chronoprobe.models.redact import canonical_spec, join_api_path, split_userinfo, strip_url_credentials
from chronoprobe.retry import Retryable, RetryPolicy, call_with_retries


class OpenAIConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str = Field(min_length=1)
    """Model name as the server knows it."""
    base_url: str
    """Up to and including the version path, e.g. ``https://api.openai.com/v1``."""
    mode: Literal["chat", "completions"] = "chat"
    concurrency: int = Field(4, ge=1, le=256)
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the key (the key itself is never stored)."""
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(4, ge=0, le=20)
    """Retries after the first attempt, for 429, 5xx, timeouts and connection errors (see chronoprobe.retry)."""
    backoff_base_s: float = Field(1.0, ge=0)
    """Wait before retry k (1-based) is ``backoff_base_s * 2**(k-1)`` unless the server sends Retry-After."""
    backoff_max_s: float = Field(30.0, ge=0)
    max_retry_after_s: float = Field(120.0, ge=0)
    """A Retry-After longer than this fails at once instead of stalling the run."""
    top_logprobs: int = Field(1, ge=0, le=20)
    """Alternatives requested per position when log-probabilities are needed."""
    prefix_mode: Literal["user", "continue"] = "user"
    """Where a prompt's ``answer_prefix`` goes in chat mode (see ``render``)."""
    wave_size: int | None = Field(None, ge=1)
    """Prompts per wave between cache writes (``--batch-size``; never fewer than ``concurrency``); default
    ``concurrency * WAVE_PER_REQUEST``."""
    spec: str | None = None
    api_key: SecretStr | None = Field(None, exclude=True, repr=False)
    """A key to send instead of $api_key_env, never recorded."""
    request_url: SecretStr | None = Field(None, exclude=True, repr=False)
    """The base URL as the spec gave it, credentials included (``http://user:KEY@host/v1?api_key=KEY``): requests
    go there, with the userinfo's key sent as the bearer token; only ``base_url`` (redacted) is ever shown."""

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_retries=self.max_retries,
            backoff_s=self.backoff_base_s,
            max_backoff_s=self.backoff_max_s,
            max_retry_after_s=self.max_retry_after_s,
        )


@dataclass
class _Choice:
    text: str
    finish: Literal["stop", "length"]
    tokens: list[str] | None
    logprobs: list[float] | None


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _TokenLogprob(_Lenient):
    token: str
    logprob: float


class _ChatTokenLogprob(_TokenLogprob):
    top_logprobs: list[_TokenLogprob] = Field(default_factory=list)


class _ChatLogprobs(_Lenient):
    content: list[_ChatTokenLogprob] | None = None


class _ChatMessage(_Lenient):
    content: str | None = None


class _ChatChoice(_Lenient):
    index: int = 0
    message: _ChatMessage
    finish_reason: str | None = None
    logprobs: _ChatLogprobs | None = None


class _CompletionLogprobs(_Lenient):
    tokens: list[str] = Field(default_factory=list)
    token_logprobs: list[float | None] = Field(default_factory=list)


class _CompletionChoice(_Lenient):
    index: int = 0
    text: str
    finish_reason: str | None = None
    logprobs: _CompletionLogprobs | None = None


class _ChatResponse(_Lenient):
    model: str | None = None
    system_fingerprint: str | None = None
    choices: list[_ChatChoice]


class _CompletionResponse(_Lenient):
    model: str | None = None
    system_fingerprint: str | None = None
    choices: list[_CompletionChoice]


def _first_line(text: str, limit: int = 200) -> str:
    line = next((part.strip() for part in text.strip().splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _server_message(response: httpx.Response) -> str:
    """The human-readable part of an error response, first line only."""
    try:
        body = response.json()
    except ValueError:
        return _first_line(response.text) or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _first_line(error["message"])
        if isinstance(error, str):
            return _first_line(error)
    return _first_line(json.dumps(body))


def _public_endpoint(base_url: str) -> str:
    """host[:port]/path of the base URL, without credentials, query or fragment (part of the cache key)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return host + parts.path.rstrip("/")


def _finish(reason: str | None) -> Literal["stop", "length"]:
    return "length" if reason == "length" else "stop"


def _drop_echoed_prefix(choice: _Choice, prefix: str) -> _Choice:
    """Remove a leading copy of ``prefix`` the model wrote itself (chat "user" prefix mode).

    Token log-probabilities of the tokens that spell the copy are dropped too,
    as far as token boundaries allow, so ``first_token_prob`` refers to the
    first token after the copy.
    """
    wanted = prefix.strip()
    stripped = choice.text.lstrip()
    if not wanted or not stripped.startswith(wanted):
        return choice
    cut = len(choice.text) - len(stripped) + len(wanted)
    tokens, logprobs = choice.tokens, choice.logprobs
    if tokens is not None and logprobs is not None:
        consumed, k = 0, 0
        while k < len(tokens) and consumed + len(tokens[k]) <= cut:
            consumed += len(tokens[k])
            k += 1
        tokens, logprobs = tokens[k:], logprobs[k:]
    return _Choice(text=choice.text[cut:], finish=choice.finish, tokens=tokens, logprobs=logprobs)


class OpenAIBackend(Backend):
    """One HTTP request per prompt (``n`` samples in it), ``concurrency`` requests in flight."""

    def __init__(self, config: OpenAIConfig, *, transport: httpx.BaseTransport | None = None) -> None:
        spec = canonical_spec(config.spec) if config.spec else None
        where = f"model {spec or config.model}"
        given = config.request_url.get_secret_value() if config.request_url is not None else config.base_url
        request_base, url_key = split_userinfo(given)
        base_url = strip_url_credentials(request_base)  # credentials never reach a message or a record
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(where, f"base URL {base_url!r} must start with http:// or https://")
        self.config = config
        self._retry = config.retry_policy()
        self.base_url = base_url.rstrip("/")
        self._request_url = join_api_path(request_base, "chat/completions" if config.mode == "chat" else "completions")
        self.endpoint = strip_url_credentials(self._request_url)
        """Where requests go, as messages show it (secrets masked)."""
        self.capabilities = frozenset(
            {
                Capability.GENERATE,
                Capability.SAMPLE_N,
                Capability.TOKEN_LOGPROBS,
                Capability.TOPK_LOGPROBS,
                Capability.FIRST_TOKEN_PROB,
            }
            | ({Capability.CHAT_TEMPLATE} if config.mode == "chat" else set())
        )
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if config.api_key is not None:
            url_key = config.api_key.get_secret_value()
        api_key = url_key or os.environ.get(config.api_key_env, "").strip()
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        timeout = httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, 10.0))
        limits = httpx.Limits(max_connections=config.concurrency, max_keepalive_connections=config.concurrency)
        self._client = httpx.Client(headers=headers, timeout=timeout, limits=limits, transport=transport)
        # a backend nobody closed (a run's, once it is done) closes its connections when it is collected, rather
        # than leaving open sockets for the garbage collector to warn about
        self._release = weakref.finalize(self, self._client.close)
        self._info_lock = threading.Lock()
        self._info = BackendInfo(
            spec=spec or f"openai:{config.model}@{self.base_url}",
            backend="openai",
            model_id=config.model,
            revision=f"api@{_public_endpoint(self.base_url)}",
            batch_size=config.concurrency,
            chat_template=config.mode == "chat",
            is_chat_model=config.mode == "chat",
            extra={"mode": config.mode},
        )

    @property
    def info(self) -> BackendInfo:
        return self._info

    # -- prompts -------------------------------------------------------------

    def render(self, prompt: Prompt) -> str:
        """The request fields that come from the prompt, as canonical JSON (chat) or the bare text.

        Chat mode: ``{"messages": [...]}``. An ``answer_prefix`` is, with
        ``prefix_mode="user"``, appended to the last user message after a blank
        line; with ``prefix_mode="continue"`` it becomes a final assistant
        message the server continues (``continue_final_message``, a vLLM
        extension also served by ``chronoprobe.testing.openai_server``).
        Completions mode: the prompt text (or the messages joined by newlines)
        followed by the answer prefix, exactly like the hf backend without a
        chat template.
        """
        if self.config.mode == "completions":
            text = prompt.text if prompt.text is not None else "\n".join(m.content for m in prompt.messages or ())
            return text + prompt.answer_prefix
        if prompt.messages:
            messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
        else:
            messages = [{"role": "user", "content": prompt.text or ""}]
        body: dict[str, Any] = {"messages": messages}
        prefix = prompt.answer_prefix
        if prefix and self.config.prefix_mode == "continue":
            messages.append({"role": "assistant", "content": prefix})
            body.update(continue_final_message=True, add_generation_prompt=False)
        elif prefix:
            if messages[-1]["role"] == "user":
                messages[-1]["content"] = f"{messages[-1]['content']}\n\n{prefix}"
            else:
                messages.append({"role": "user", "content": prefix})
        return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    def _request_body(self, rendered: str, params: DecodingParams) -> dict[str, Any]:
        if self.config.mode == "chat":
            body: dict[str, Any] = json.loads(rendered)
        else:
            body = {"prompt": rendered}
        body.update(
            model=self.config.model,
            max_tokens=params.max_new_tokens,
            temperature=params.temperature,
            top_p=params.top_p,
            n=params.n,
            seed=params.seed,
        )
        if params.top_k is not None:
            body["top_k"] = params.top_k  # not in the OpenAI API; vLLM and llama.cpp honour it
        if params.stop:
            body["stop"] = list(params.stop)
        if params.token_logprobs or params.first_token_prob:
            if self.config.mode == "chat":
                body["logprobs"] = True
                if self.config.top_logprobs:
                    body["top_logprobs"] = self.config.top_logprobs
            else:
                body["logprobs"] = self.config.top_logprobs
        return body

    def plan_batches(self, rendered_prompts: Sequence[str], params: DecodingParams | None = None) -> list[list[int]]:
        wave = self.config.wave_size
        size = max(wave, self.config.concurrency) if wave else self.config.concurrency * WAVE_PER_REQUEST
        order = list(range(len(rendered_prompts)))
        return [order[i : i + size] for i in range(0, len(order), size)]

    # -- generation ----------------------------------------------------------

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        require(self, params, purpose="this request")
        if not prompts:
            return []
        rendered = [self.render(p) for p in prompts]
        abort = threading.Event()

        def one(index: int) -> Generation:
            choices = self._call(self._request_body(rendered[index], params), params, abort)
            prefix = prompts[index].answer_prefix
            if self.config.mode == "chat" and self.config.prefix_mode == "user" and prefix:
                choices = [_drop_echoed_prefix(c, prefix) for c in choices]
            return Generation(rendered_prompt=rendered[index], samples=[self._sample(c, params) for c in choices])

        workers = min(self.config.concurrency, len(prompts))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="chronoprobe-openai")
        try:
            futures = [pool.submit(one, i) for i in range(len(prompts))]
            return [f.result() for f in futures]
        except BaseException:
            abort.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    @staticmethod
    def _sample(choice: _Choice, params: DecodingParams) -> Sample:
        want_logprobs = params.token_logprobs or params.first_token_prob
        logprobs = choice.logprobs if want_logprobs else None
        return Sample(
            text=choice.text,
            token_logprobs=logprobs,
            tokens=choice.tokens if logprobs is not None else None,
            finish_reason=choice.finish,
            first_token_prob=math.exp(logprobs[0]) if params.first_token_prob and logprobs else None,
        )

    def _call(self, body: dict[str, Any], params: DecodingParams, abort: threading.Event) -> list[_Choice]:
        payload = self._post(body, abort)
        choices = self._parse(payload, params)
        if len(choices) != params.n:
            raise EndpointError(self.endpoint, f"asked for n={params.n} choices, the server returned {len(choices)}")
        return choices

    def _post(self, body: dict[str, Any], abort: threading.Event) -> Any:
        def attempt() -> Any:
            if abort.is_set():
                raise EndpointError(self.endpoint, "cancelled after another request failed")
            return self._attempt(body)

        def sleep(seconds: float) -> None:
            if abort.wait(seconds):
                raise EndpointError(self.endpoint, "cancelled after another request failed")

        return call_with_retries(attempt, self._retry, where=self.endpoint, sleep=sleep)

    def _attempt(self, body: dict[str, Any]) -> Any:
        try:
            response = self._client.post(self._request_url, json=body)
        except httpx.TimeoutException:
            raise Retryable(f"no response within {self.config.timeout_s:g} s") from None
        except httpx.TransportError as exc:
            raise Retryable(f"connection failed ({type(exc).__name__}: {_first_line(str(exc), 120)})") from None
        status = response.status_code
        if status == 429 or status >= 500:
            raise Retryable(f"HTTP {status}: {_server_message(response)}", response.headers.get("Retry-After"))
        if status >= 400:
            hint = f" (is ${self.config.api_key_env} set and valid?)" if status in (401, 403) else ""
            raise EndpointError(self.endpoint, f"HTTP {status}: {_server_message(response)}{hint}")
        try:
            return response.json()
        except ValueError:
            raise EndpointError(
                self.endpoint, f"HTTP {status} but the body is not JSON: {_first_line(response.text, 80)!r}"
            ) from None

    def _parse(self, payload: Any, params: DecodingParams) -> list[_Choice]:
        want_logprobs = params.token_logprobs or params.first_token_prob
        try:
            if self.config.mode == "chat":
                chat = _ChatResponse.model_validate(payload)
                self._note_served(chat.model, chat.system_fingerprint)
                choices = [self._from_chat(c) for c in sorted(chat.choices, key=lambda c: c.index)]
            else:
                completion = _CompletionResponse.model_validate(payload)
                self._note_served(completion.model, completion.system_fingerprint)
                choices = [self._from_completion(c) for c in sorted(completion.choices, key=lambda c: c.index)]
        except ValidationError as exc:
            error = exc.errors()[0]
            place = ".".join(str(p) for p in error["loc"]) or "body"
            raise EndpointError(self.endpoint, f"unexpected response shape at {place}: {error['msg']}") from None
        if want_logprobs and any(c.logprobs is None or (not c.logprobs and c.text) for c in choices):
            raise EndpointError(self.endpoint, "log-probabilities were requested but the server returned none")
        return choices

    @staticmethod
    def _from_chat(choice: _ChatChoice) -> _Choice:
        content = choice.logprobs.content if choice.logprobs else None
        return _Choice(
            text=choice.message.content or "",
            finish=_finish(choice.finish_reason),
            tokens=None if content is None else [t.token for t in content],
            logprobs=None if content is None else [t.logprob for t in content],
        )

    def _from_completion(self, choice: _CompletionChoice) -> _Choice:
        logprobs = choice.logprobs
        values = None if logprobs is None else logprobs.token_logprobs
        if values is not None and any(v is None for v in values):
            raise EndpointError(self.endpoint, "the server returned a null token log-probability")
        return _Choice(
            text=choice.text,
            finish=_finish(choice.finish_reason),
            tokens=None if logprobs is None else list(logprobs.tokens),
            logprobs=None if values is None else [float(v) for v in values if v is not None],
        )

    def producer(self) -> Producer:
        extra = self._info.extra
        served = extra.get("served_model", self.config.model)
        fingerprint = f", fingerprint {extra['system_fingerprint']}" if extra.get("system_fingerprint") else ""
        version = f"server at {_public_endpoint(self.base_url)} serving {served}{fingerprint}"
        return super().producer().model_copy(update={"version": version})

    def _note_served(self, model: str | None, fingerprint: str | None) -> None:
        # Recorded for provenance only; not part of the cache key (model_identity ignores extra).
        with self._info_lock:
            if model:
                self._info.extra["served_model"] = model
            if fingerprint:
                self._info.extra["system_fingerprint"] = fingerprint

    def close(self) -> None:
        self._release()
