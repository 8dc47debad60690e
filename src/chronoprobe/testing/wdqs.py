"""A loopback stand-in for the Wikidata Query Service: real SPARQL (pyoxigraph) over Wikidata-shaped RDF.

Run it by hand to try a template offline (``pip install 'chronoprobe[wdqs]'`` brings pyoxigraph)::

    python -m chronoprobe.testing.wdqs --port 8890 [--data FILE.ttl]
    chronoprobe catalogue build --endpoint http://127.0.0.1:8890/sparql --out my-catalogue

It serves SPARQL 1.1 (GET ``?query=`` or a POST form) at ``http://127.0.0.1:PORT/sparql`` and answers
``application/sparql-results+json``, the way WDQS does. Without ``--data`` it serves the default
stand-in data (:mod:`chronoprobe.testing.wdqs_data`: DyKnow's real statements and made-up
subjects); ``--dump FILE.ttl`` writes that data out. It only ever binds 127.0.0.1.

In tests, start it in-process and script faults ahead of the real answers::

    with StubWDQS() as wdqs:                      # or StubWDQS(data=path) / StubWDQS(turtle=text)
        wdqs.faults += [Fault.passthrough(), Fault.throttle(retry_after=1)]
        ... WikidataClient(endpoint=wdqs.url) ...
        wdqs.requests                             # every request seen (method, query, params, headers)

Each request takes the next queued fault (then ``always``, if given); a request with no fault
gets the real answer. The faults: an HTTP status with a body (``Fault(status=500)``,
``Fault.html(503)``), ``throttle`` (429 with Retry-After), ``slow``, ``trickle`` (the real answer a
few bytes at a time), ``truncated``, ``empty``, ``rewritten`` (the real answer changed by a
function: a malformed binding, an odd label or date) and ``passthrough``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import write_text_atomic
from chronoprobe.testing.wdqs_data import default_turtle

HOST = "127.0.0.1"
PATH = "/sparql"
SPARQL_JSON = "application/sparql-results+json"
EMPTY_RESULT = b'{"head": {"vars": []}, "results": {"bindings": []}}'
INSTALL_HINT = "needs pyoxigraph: pip install 'chronoprobe[wdqs]'"
DRIP_BYTES = 64


def _pyoxigraph() -> Any:
    try:
        import pyoxigraph  # deferred: pyoxigraph
    except ImportError:
        raise ConfigError("chronoprobe.testing.wdqs", INSTALL_HINT) from None
    return pyoxigraph


def load_store(data: Path | None = None, *, turtle: str | None = None) -> Any:
    """A pyoxigraph store of ``data`` (a Turtle file), of ``turtle`` (text), or of the default stand-in data."""
    pyoxigraph = _pyoxigraph()
    if turtle is None and data is None:
        turtle = default_turtle()
    store = pyoxigraph.Store()
    try:
        if turtle is not None:
            store.load(turtle.encode("utf-8"), format=pyoxigraph.RdfFormat.TURTLE)
        else:
            assert data is not None
            store.load(path=str(data), format=pyoxigraph.RdfFormat.TURTLE)
    except OSError as exc:
        raise DataError(f"--data {data}", f"cannot read it ({exc.strerror or exc})") from None
    except SyntaxError as exc:
        raise DataError(f"--data {data}" if data else "stand-in data", f"not valid Turtle ({exc})") from None
    return store


@dataclass
class Fault:
    """What to answer instead of (or on the way to) the real answer."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    evaluate: bool = False
    """After the delay, answer the real query instead of ``body``."""
    truncate_to: int | None = None
    """Send only the first bytes of the real answer (with a Content-Length that matches them)."""
    rewrite: Callable[[bytes], bytes] | None = None
    """Send the real answer changed by this function (a malformed binding, an odd label or date)."""
    drip_s: float = 0.0
    """Send the body in pieces of :data:`DRIP_BYTES`, this many seconds apart (an answer that trickles in)."""

    @classmethod
    def passthrough(cls) -> Fault:
        """The real answer (to let requests through before a fault)."""
        return cls(evaluate=True)

    @classmethod
    def throttle(cls, retry_after: float | str = 1) -> Fault:
        """HTTP 429 with a Retry-After header, as WDQS throttles."""
        return cls(status=429, body=b"Too Many Requests", headers={"Retry-After": str(retry_after)})

    @classmethod
    def slow(cls, delay_s: float) -> Fault:
        """Answer only after ``delay_s`` seconds (longer than the client's timeout: a timed-out page)."""
        return cls(delay_s=delay_s, evaluate=True)

    @classmethod
    def truncated(cls, keep: int = 200) -> Fault:
        """The real answer cut after ``keep`` bytes: what WDQS sends when a query overruns mid-stream."""
        return cls(evaluate=True, truncate_to=keep)

    @classmethod
    def rewritten(cls, change: Callable[[bytes], bytes]) -> Fault:
        """The real answer, changed by ``change`` before it is sent."""
        return cls(evaluate=True, rewrite=change)

    @classmethod
    def trickle(cls, pause_s: float) -> Fault:
        """The real answer, a few bytes at a time with ``pause_s`` between them: each read is quick, the whole is not."""
        return cls(evaluate=True, drip_s=pause_s)

    @classmethod
    def html(cls, status: int = 200) -> Fault:
        """An HTML page, as a proxy or a login wall sends instead of SPARQL results."""
        page = b"<!DOCTYPE html>\n<html><head><title>Service unavailable</title></head><body>Try later</body></html>"
        return cls(status=status, body=page, headers={"Content-Type": "text/html; charset=utf-8"})

    @classmethod
    def empty(cls) -> Fault:
        """A well-formed answer with no rows."""
        return cls(body=EMPTY_RESULT, headers={"Content-Type": SPARQL_JSON})


@dataclass
class Seen:
    method: str
    query: str
    params: dict[str, list[str]]
    headers: dict[str, str]


class StubWDQS:
    """Start with ``with StubWDQS() as wdqs: ... wdqs.url ...`` (port 0 = any free port)."""

    def __init__(
        self,
        data: Path | None = None,
        *,
        turtle: str | None = None,
        store: Any = None,
        always: Fault | None = None,
        port: int = 0,
    ) -> None:
        self.store = store if store is not None else load_store(data, turtle=turtle)
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

        self.server = ThreadingHTTPServer((HOST, port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://{HOST}:{self.server.server_address[1]}{PATH}"
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

    def answer(self, query: str) -> bytes:
        """The real JSON answer to a SELECT query (what a request without a fault gets)."""
        result = self.store.query(query)
        return bytes(result.serialize(format=_pyoxigraph().QueryResultsFormat.JSON))

    def _handle(self, handler: BaseHTTPRequestHandler, params: dict[str, list[str]]) -> None:
        if urlparse(handler.path).path != PATH:
            self._send(handler, 404, f"SPARQL is served at {PATH}".encode(), {"Content-Type": "text/plain"})
            return
        with self._lock:
            query = params.get("query", [""])[0]
            self.requests.append(Seen(handler.command, query, params, dict(handler.headers)))
            fault = self.faults.pop(0) if self.faults else self.always
        if fault is not None and fault.delay_s:
            time.sleep(fault.delay_s)
        if fault is None or fault.evaluate or fault.truncate_to is not None:
            try:
                body = self.answer(query)
            except (SyntaxError, ValueError, OSError) as exc:
                self._send(handler, 400, str(exc).encode(), {"Content-Type": "text/plain"})
                return
            if fault is not None and fault.truncate_to is not None:
                body = body[: fault.truncate_to]
            if fault is not None and fault.rewrite is not None:
                body = fault.rewrite(body)
            self._send(handler, 200, body, {"Content-Type": SPARQL_JSON}, fault.drip_s if fault else 0.0)
            return
        self._send(handler, fault.status, fault.body, {"Content-Type": "text/plain", **fault.headers})

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str], drip_s: float = 0.0
    ) -> None:
        try:
            handler.send_response(status)
            for key, value in headers.items():
                handler.send_header(key, value)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            if not drip_s:
                handler.wfile.write(body)
                return
            for start in range(0, len(body), DRIP_BYTES):
                handler.wfile.write(body[start : start + DRIP_BYTES])
                handler.wfile.flush()
                time.sleep(drip_s)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m chronoprobe.testing.wdqs",
        description="Serve SPARQL over Wikidata-shaped RDF at http://127.0.0.1:PORT/sparql (a WDQS stand-in).",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    parser.add_argument("--data", type=Path, help="a Turtle file to serve (default: the stand-in data)")
    parser.add_argument("--dump", type=Path, help="write the default stand-in data to this Turtle file and exit")
    args = parser.parse_args(argv)
    try:
        if args.dump is not None:
            if args.dump.exists():
                raise ConfigError(f"--dump {args.dump}", "exists; refusing to overwrite it")
            write_text_atomic(args.dump, default_turtle())
            print(f"wrote the stand-in data to {args.dump}")
            return 0
        if not 0 <= args.port <= 65535:
            raise ConfigError("--port", f"{args.port} is not a port number")
        stub = StubWDQS(args.data, port=args.port)
    except (ConfigError, DataError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: --port {args.port}: cannot listen ({exc.strerror or exc})", file=sys.stderr)
        return 2
    # Ctrl-C stops it, also when it was started from a shell that ignores SIGINT (a background job's child)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with stub:
        print(f"serving SPARQL at {stub.url} ({args.data or 'stand-in data'}); Ctrl-C stops", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
