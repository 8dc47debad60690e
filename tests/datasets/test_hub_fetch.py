"""A hub dataset file (``recency eval --data hf:...``) fails at once when the hub cannot be asked at all,
and still gets the hub client's retries when the hub answers with a transient error.

The hub here is a loopback stand-in on 127.0.0.1 (``HF_ENDPOINT``) serving one file the way the
Hugging Face resolve endpoint does; the hub cache is the test's own folder.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from chronoprobe.datasets.recencyqa import DEFAULT_HUB_FILE, load_recencyqa
from chronoprobe.errors import DataError

ASSETS = Path(__file__).resolve().parents[1] / "assets"
REPO_ID = "someone/recency"
FILE = DEFAULT_HUB_FILE
COMMIT = "0123456789abcdef0123456789abcdef01234567"
FAST_S = 5.0
"""Far below the ~25 s the hub client's retries take, far above the ~1 s connection probe."""


class StubHub(ThreadingHTTPServer):
    """Serves ``FILE`` of the dataset ``REPO_ID``; the first ``failures`` requests get a 503."""

    def __init__(self, body: bytes, failures: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.body, self.failures = body, failures
        self.requests: list[tuple[str, int]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: StubHub

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def _answer(self, send_body: bool) -> None:
        hub = self.server
        status = 200 if self.path == f"/datasets/{REPO_ID}/resolve/main/{FILE}" else 404
        if status == 200 and hub.failures > 0:
            hub.failures -= 1
            status = 503
        hub.requests.append((self.command, status))
        self.send_response(status)
        self.send_header("X-Repo-Commit", COMMIT)
        if status == 200:
            self.send_header("ETag", f'"{hashlib.sha256(hub.body).hexdigest()}"')
            self.send_header("Content-Length", str(len(hub.body)))
        else:
            self.send_header("Content-Length", "0")
        self.end_headers()
        if send_body and status == 200:
            self.wfile.write(hub.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture()
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hub client's cache in the test's folder (it reads HF_HUB_CACHE once, at import)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    return tmp_path / "hub"


def serve(body: bytes, failures: int) -> Iterator[StubHub]:
    hub = StubHub(body, failures)
    thread = threading.Thread(target=hub.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        hub.shutdown()
        hub.server_close()


@pytest.fixture()
def flaky_hub() -> Iterator[StubHub]:
    """A hub that answers 503 twice (once to the client's first look, once to its first retry), then serves."""
    yield from serve((ASSETS / "recency_sample.json").read_bytes(), failures=2)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_hub_that_refuses_connections_fails_at_once_in_one_line(
    hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    started = time.monotonic()
    with pytest.raises(DataError) as caught:
        load_recencyqa(f"hf:{REPO_ID}")
    assert time.monotonic() - started < FAST_S
    message = str(caught.value)
    assert "\n" not in message and f"hf:{REPO_ID}" in message and "127.0.0.1 cannot be reached" in message
    assert "--data" in message


@pytest.mark.e2e
def test_transient_errors_are_retried_and_offline_mode_serves_the_cache(
    hub_cache: Path, flaky_hub: StubHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", flaky_hub.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # set after huggingface_hub was imported: it must still count
    started = time.monotonic()
    with pytest.raises(DataError, match="HF_HUB_OFFLINE is set"):
        load_recencyqa(f"hf:{REPO_ID}")
    assert time.monotonic() - started < FAST_S and flaky_hub.requests == []

    monkeypatch.delenv("HF_HUB_OFFLINE")
    items = load_recencyqa(f"hf:{REPO_ID}")  # two 503s, then the file: the retries are kept
    assert items == load_recencyqa(ASSETS / "recency_sample.json")
    assert [status for _, status in flaky_hub.requests] == [503, 503, 200, 200]
    assert [command for command, _ in flaky_hub.requests][-1] == "GET"
    assert any(hub_cache.rglob(Path(FILE).name))

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    seen = len(flaky_hub.requests)
    assert load_recencyqa(f"hf:{REPO_ID}") == items  # cached: offline still works, and asks nothing
    assert len(flaky_hub.requests) == seen
    assert json.loads(next(hub_cache.rglob(Path(FILE).name)).read_text())[0]["q_id"] == items[0].q_id
