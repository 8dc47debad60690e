"""A small, real OpenAI-compatible HTTP server on 127.0.0.1 that serves a chronoprobe backend.

It answers ``POST /v1/chat/completions``, ``POST /v1/completions`` and
``GET /v1/models`` with ``n``, ``temperature``, ``top_p``, ``top_k``, ``seed``,
``max_tokens``, ``stop``, ``logprobs``/``top_logprobs`` and the vLLM extension
``continue_final_message``. Token log-probabilities are the backend's own;
top-k alternatives are recomputed with one teacher-forced forward pass when
the backend is a transformers model.

For tests it counts requests, records the most requests in flight at once,
can require an API key (as a bearer token, or in a query parameter named like one: ``?api_key=``,
``?key=`` ...), and can inject faults into the first K requests
(429 with Retry-After, 500, a non-JSON body, a wrongly shaped body, or a
response slower than the client's timeout).

Run it by hand::

    python -m chronoprobe.testing.openai_server --model smollm2 --port 0

It prints its base URL (``http://127.0.0.1:<port>/v1``) and serves until Ctrl-C.
It only ever binds 127.0.0.1.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Self
from urllib.parse import parse_qsl, urlsplit

from pydantic import ValidationError

from chronoprobe.errors import ChronoprobeError
from chronoprobe.models.base import (
    Backend,
    Capability,
    DecodingParams,
    Generation,
    Message,
    Prompt,
)
from chronoprobe.models.redact import SECRET_PARAMETERS
from chronoprobe.models.registry import load_backend

HOST = "127.0.0.1"
FaultKind = Literal["429", "500", "garbage", "bad_shape", "slow"]


@dataclass
class FaultPlan:
    """Make the first ``first`` completion requests fail (``-1``: all of them)."""

    kind: FaultKind
    first: int = 1
    retry_after: float | None = None
    """Sent as the Retry-After header with 429/500 faults."""
    sleep_s: float = 5.0
    """How long a "slow" fault stalls before answering."""

    def applies(self, ordinal: int) -> bool:
        return self.first < 0 or ordinal < self.first


@dataclass
class RequestRecord:
    path: str
    """The request's path, without its query."""
    body: Any
    authorization: str | None
    started: float
    status: int = 0


@dataclass
class ServerStats:
    requests: list[RequestRecord] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0

    @property
    def count(self) -> int:
        return len(self.requests)


class _BadRequest(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    raise _BadRequest(400, "message content must be a string or a list of text parts")


def _chat_prompt(body: dict[str, Any]) -> Prompt:
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise _BadRequest(400, "'messages' must be a non-empty list")
    try:
        messages = [Message(role=m["role"], content=_content_text(m.get("content"))) for m in raw]
    except (KeyError, TypeError, ValidationError):
        raise _BadRequest(400, "each message needs a role (system, user, assistant) and text content") from None
    if body.get("continue_final_message") and messages[-1].role == "assistant":
        return Prompt(messages=tuple(messages[:-1]), answer_prefix=messages[-1].content)
    return Prompt(messages=tuple(messages))


def _completion_prompt(body: dict[str, Any]) -> Prompt:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise _BadRequest(400, "'prompt' must be a string (batched prompts are not supported)")
    return Prompt(text=prompt)


def _decoding(body: dict[str, Any], chat: bool) -> tuple[DecodingParams, int]:
    """DecodingParams for a request, plus how many top alternatives it wants."""
    if chat:
        want_logprobs = bool(body.get("logprobs"))
        top = int(body.get("top_logprobs") or 0)
    else:
        want_logprobs = body.get("logprobs") is not None
        top = int(body.get("logprobs") or 0)
    stop = body.get("stop")
    stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
    top_k = body.get("top_k")
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or (128 if chat else 16)
    temperature = body.get("temperature")
    try:
        params = DecodingParams(
            max_new_tokens=max_tokens,
            temperature=1.0 if temperature is None else temperature,
            top_p=body.get("top_p") or 1.0,
            top_k=top_k if isinstance(top_k, int) and top_k > 0 else None,
            n=body.get("n") or 1,
            seed=body.get("seed") or 0,
            token_logprobs=want_logprobs,
            stop=stops,
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        raise _BadRequest(400, f"invalid {'.'.join(map(str, error['loc']))}: {error['msg']}") from None
    return params, top


def _token_strings(backend: Backend, ids: list[int]) -> list[str]:
    to_strings = getattr(backend, "token_strings", None)
    return list(to_strings(ids)) if to_strings else [str(i) for i in ids]


def _top_alternatives(backend: Backend, rendered: str, ids: list[int], k: int) -> list[list[tuple[str, float]]] | None:
    """Top-k log-probabilities at each generated position (teacher forcing), transformers backends only."""
    model, tokenizer = getattr(backend, "model", None), getattr(backend, "tokenizer", None)
    if model is None or tokenizer is None or not ids or k <= 0:
        return None
    import torch  # deferred: torch

    prompt_ids = tokenizer(rendered, add_special_tokens=not getattr(backend, "use_chat_template", False))["input_ids"]
    sequence = torch.tensor([list(prompt_ids) + list(ids)], device=getattr(backend, "device", "cpu"))
    with torch.inference_mode():
        logits = model(input_ids=sequence).logits[0].float()
    start = len(prompt_ids) - 1
    logprobs = torch.log_softmax(logits[start : start + len(ids)], dim=-1)
    values, indices = logprobs.topk(k, dim=-1)
    return [
        list(zip(_token_strings(backend, row_ids), row_values, strict=True))
        for row_ids, row_values in zip(indices.tolist(), values.tolist(), strict=True)
    ]


class OpenAIServer:
    """An OpenAI-compatible server for one backend; use as a context manager."""

    def __init__(
        self,
        backend: Backend,
        *,
        model_name: str = "smollm2",
        port: int = 0,
        faults: FaultPlan | None = None,
        delay_s: float = 0.0,
        api_key: str | None = None,
    ) -> None:
        self.backend = backend
        self.model_name = model_name
        self.faults = faults
        self.delay_s = delay_s
        self.api_key = api_key
        self.stats = ServerStats()
        self._lock = threading.Lock()
        self._model_lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        handler = type("_BoundHandler", (_Handler,), {"owner": self})
        self._httpd = ThreadingHTTPServer((HOST, port), handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-loopback", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (called from handler threads) ----------------------

    def _admit(self, record: RequestRecord) -> int:
        with self._lock:
            ordinal = len(self.stats.requests)
            self.stats.requests.append(record)
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
            return ordinal

    def _release(self) -> None:
        with self._lock:
            self.stats.in_flight -= 1

    def _complete(self, body: Any, chat: bool) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _BadRequest(400, "the request body must be a JSON object")
        if body.get("model") != self.model_name:
            raise _BadRequest(
                404,
                f"The model `{body.get('model')}` does not exist; this server serves `{self.model_name}`",
                "model_not_found",
            )
        if chat and (Capability.CHAT_TEMPLATE not in self.backend.capabilities or not self.backend.info.chat_template):
            raise _BadRequest(400, "this model has no chat template; use /v1/completions")
        prompt = _chat_prompt(body) if chat else _completion_prompt(body)
        params, top = _decoding(body, chat)
        if self.delay_s:
            self._stopping.wait(self.delay_s)
        with self._model_lock:
            generation = self.backend.generate([prompt], params)[0]
            alternatives = [
                _top_alternatives(self.backend, generation.rendered_prompt, s.token_ids, top)
                if params.token_logprobs
                else None
                for s in generation.samples
            ]
        return self._response(generation, params, alternatives, chat)

    def _response(
        self, generation: Generation, params: DecodingParams, alternatives: list[Any], chat: bool
    ) -> dict[str, Any]:
        choices = []
        for index, (sample, alts) in enumerate(zip(generation.samples, alternatives, strict=True)):
            tokens = _token_strings(self.backend, sample.token_ids)
            logprobs = sample.token_logprobs or []
            if len(tokens) != len(logprobs):
                tokens = [""] * len(logprobs)
            alts = alts or [[(t, lp)] for t, lp in zip(tokens, logprobs, strict=True)]
            choice: dict[str, Any] = {"index": index, "finish_reason": sample.finish_reason, "logprobs": None}
            if chat:
                choice["message"] = {"role": "assistant", "content": sample.text}
                if params.token_logprobs:
                    choice["logprobs"] = {
                        "content": [
                            {
                                "token": t,
                                "logprob": lp,
                                "bytes": list(t.encode("utf-8")),
                                "top_logprobs": [
                                    {"token": a, "logprob": v, "bytes": list(a.encode("utf-8"))} for a, v in alt
                                ],
                            }
                            for t, lp, alt in zip(tokens, logprobs, alts, strict=True)
                        ]
                    }
            else:
                choice["text"] = sample.text
                if params.token_logprobs:
                    offsets = list(
                        itertools.accumulate((len(t) for t in tokens), initial=len(generation.rendered_prompt))
                    )
                    choice["logprobs"] = {
                        "tokens": tokens,
                        "token_logprobs": logprobs,
                        "top_logprobs": [dict(alt) for alt in alts],
                        "text_offset": offsets[:-1],
                    }
            choices.append(choice)
        completion_tokens = sum(len(s.token_ids) for s in generation.samples)
        return {
            "id": f"{'chatcmpl' if chat else 'cmpl'}-loopback-{next(self._ids)}",
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": self.model_name,
            "system_fingerprint": "chronoprobe-loopback",
            "choices": choices,
            "usage": {"completion_tokens": completion_tokens},
        }


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIServer
    protocol_version = "HTTP/1.1"
    server_version = "chronoprobe-loopback/1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(
        self, status: int, body: bytes, content_type: str = "application/json", headers: dict[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), headers=headers)

    def _send_error(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "code": status}}, headers)

    def _path(self) -> str:
        return urlsplit(self.path).path.rstrip("/")

    def _authorised(self) -> bool:
        key = self.owner.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        query = parse_qsl(urlsplit(self.path).query, keep_blank_values=True)
        return any(name.lower() in SECRET_PARAMETERS and value == key for name, value in query)

    def do_GET(self) -> None:
        if self._path() == "/v1/models":
            model = {"id": self.owner.model_name, "object": "model", "owned_by": "chronoprobe"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_error(404, f"no route {self.path}", "not_found")

    def do_POST(self) -> None:
        owner = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self._path()
        if path not in ("/v1/chat/completions", "/v1/completions"):
            self._send_error(404, f"no route {self.path}", "not_found")
            return
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = None
        record = RequestRecord(
            path=path, body=body, authorization=self.headers.get("Authorization"), started=time.monotonic()
        )
        ordinal = owner._admit(record)
        try:
            record.status = self._handle(path, body, ordinal)
        finally:
            owner._release()

    def _handle(self, path: str, body: Any, ordinal: int) -> int:
        owner = self.owner
        if not self._authorised():
            self._send_error(401, "Incorrect API key provided.", "invalid_api_key")
            return 401
        fault = owner.faults
        if fault is not None and fault.applies(ordinal):
            retry = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else None
            if fault.kind == "429":
                self._send_error(429, "Rate limit reached (loopback fault injection)", "rate_limit_exceeded", retry)
                return 429
            if fault.kind == "500":
                self._send_error(500, "Internal server error (loopback fault injection)", "server_error", retry)
                return 500
            if fault.kind == "garbage":
                self._send(200, b"<html><body>Bad gateway, sorry</body></html>", "text/html")
                return 200
            if fault.kind == "bad_shape":
                self._send_json(200, {"object": "chat.completion", "choices": [{"index": 0, "text_missing": True}]})
                return 200
            owner._stopping.wait(fault.sleep_s)
        if body is None:
            self._send_error(400, "the request body is not valid JSON", "invalid_request_error")
            return 400
        try:
            response = owner._complete(body, chat=path.endswith("chat/completions"))
        except _BadRequest as bad:
            self._send_error(bad.status, bad.message, bad.kind)
            return bad.status
        except ChronoprobeError as exc:
            self._send_error(400, str(exc), "invalid_request_error")
            return 400
        self._send_json(200, response)
        return 200


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m chronoprobe.testing.openai_server",
        description="Serve a chronoprobe model as an OpenAI-compatible API on 127.0.0.1.",
    )
    parser.add_argument("--model", default="smollm2", help="model spec to serve (default: smollm2)")
    parser.add_argument("--name", default=None, help="model name clients must send (default: the spec)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: pick a free one)")
    parser.add_argument("--api-key-env", default=None, help="require the key held in this environment variable")
    parser.add_argument("--fault", choices=["429", "500", "garbage", "bad_shape", "slow"], default=None)
    parser.add_argument("--fail-first", type=int, default=1, help="requests the fault applies to (-1: all)")
    parser.add_argument("--retry-after", type=float, default=None, help="Retry-After seconds sent with 429/500")
    args = parser.parse_args(argv)

    try:
        backend = load_backend(args.model)
    except ChronoprobeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            print(f"error: environment variable {args.api_key_env} is empty", file=sys.stderr)
            return 2
    faults = FaultPlan(args.fault, args.fail_first, args.retry_after) if args.fault else None
    server = OpenAIServer(backend, model_name=args.name or args.model, port=args.port, faults=faults, api_key=api_key)
    server.start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
