"""A loopback stand-in for the Wikidata Query Service, for tests.

It answers SPARQL queries by evaluating them with pyoxigraph over
``tests/assets/wikidata_fixture.ttl``; scripted faults (status codes, headers,
garbage bodies, delays) can be queued ahead of the real answers.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pyoxigraph

FIXTURE = Path(__file__).resolve().parents[1] / "assets" / "wikidata_fixture.ttl"


def fixture_store() -> pyoxigraph.Store:
    store = pyoxigraph.Store()
    store.load(path=str(FIXTURE), format=pyoxigraph.RdfFormat.TURTLE)
    return store


@dataclass
class Fault:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    evaluate: bool = False
    """After the delay, answer the real query instead of ``body``."""


@dataclass
class Seen:
    method: str
    query: str
    params: dict[str, list[str]]
    headers: dict[str, str]


class StubWDQS:
    """Start with ``with StubWDQS() as wdqs: ... wdqs.url ...``."""

    def __init__(self, always: Fault | None = None) -> None:
        self.store = fixture_store()
        self.faults: list[Fault] = []
        self.always = always
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                stub._handle(self, parse_qs(urlparse(self.path).query))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                stub._handle(self, parse_qs(self.rfile.read(length).decode("utf-8")))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> StubWDQS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)

    @property
    def count(self) -> int:
        return len(self.requests)

    def _handle(self, handler: BaseHTTPRequestHandler, params: dict[str, list[str]]) -> None:
        with self._lock:
            query = params.get("query", [""])[0]
            self.requests.append(Seen(handler.command, query, params, dict(handler.headers)))
            fault = self.faults.pop(0) if self.faults else self.always
        if fault is not None and fault.delay_s:
            time.sleep(fault.delay_s)
        if fault is None or fault.evaluate:
            try:
                body = self.store.query(query).serialize(format=pyoxigraph.QueryResultsFormat.JSON)  # type: ignore[arg-type]  # a SELECT gives solutions: pyoxigraph types the result as any query's
            except (SyntaxError, ValueError, OSError) as exc:
                self._send(handler, 400, str(exc).encode(), {"Content-Type": "text/plain"})
                return
            self._send(handler, 200, body, {"Content-Type": "application/sparql-results+json"})
            return
        self._send(handler, fault.status, fault.body, {"Content-Type": "text/plain", **fault.headers})

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]) -> None:
        try:
            handler.send_response(status)
            for key, value in headers.items():
                handler.send_header(key, value)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)
