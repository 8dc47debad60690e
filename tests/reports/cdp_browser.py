"""A headless Chromium driven over the Chrome DevTools Protocol, for the card's browser test.

Starts ``chromium --headless`` with its own profile and a proxy that refuses everything,
attaches to the first page over a websocket and records what the page does: every request
it sends (``Network.requestWillBeSent``), console messages and uncaught exceptions.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_browser() -> str | None:
    override = os.environ.get("CHRONOPROBE_CHROMIUM")
    if override:
        return override if shutil.which(override) or Path(override).is_file() else None
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageLog:
    requests: list[str] = field(default_factory=list)
    console: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    log_entries: list[dict[str, Any]] = field(default_factory=list)

    def errors(self) -> list[str]:
        found = [
            f"console.{c.get('type')}: {c.get('args')}" for c in self.console if c.get("type") in ("error", "assert")
        ]
        found += [f"exception: {e.get('exceptionDetails', e)}" for e in self.exceptions]
        found += [f"log {e.get('source')}: {e.get('text')}" for e in self.log_entries if e.get("level") == "error"]
        return found


class Browser:
    """``with Browser(binary, tmp) as b: b.open(url); b.evaluate(js); b.screenshot(path)``."""

    def __init__(self, binary: str, profile: Path, width: int = 1280, height: int = 900) -> None:
        self.binary, self.profile, self.width, self.height = binary, profile, width, height
        self.log = PageLog()
        self._id = 0

    def __enter__(self) -> Self:
        import websocket  # websocket-client, from the test extra

        self.profile.mkdir(parents=True, exist_ok=True)
        args = [
            self.binary,
            "--headless=new",
            "--no-sandbox",  # CI runs as root
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-extensions",
            "--disable-sync",
            "--proxy-server=http://127.0.0.1:9",  # anything that tries the network fails (and is recorded)
            "--proxy-bypass-list=<-loopback>",
            "--remote-debugging-port=0",
            "--remote-allow-origins=*",
            f"--user-data-dir={self.profile}",
            f"--window-size={self.width},{self.height}",
            "about:blank",
        ]
        # its own process group: Debian's `chromium` is a shell launcher, and the browser it starts must go too
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        port = self._wait_for_port()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as listing:
            targets = json.loads(listing.read())
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        return self

    def _wait_for_port(self) -> int:
        active = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if active.is_file():
                first = active.read_text().splitlines()[:1]
                if first and first[0].isdigit():
                    return int(first[0])
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.binary} exited with {self.process.returncode} before DevTools started")
            time.sleep(0.1)
        raise RuntimeError(f"{self.binary}: DevTools did not start within 30 s")

    def __exit__(self, *exc: object) -> None:
        try:
            self.ws.close()
        finally:
            self._signal_group(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.process.wait()
            self._signal_group(signal.SIGKILL)  # whatever the launcher left running

    def _signal_group(self, number: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, number)

    # --- protocol ---------------------------------------------------------------------------

    def _record(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.log.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            args = [a.get("value", a.get("description")) for a in params.get("args", [])]
            self.log.console.append({"type": params.get("type"), "args": args})
        elif method == "Runtime.exceptionThrown":
            self.log.exceptions.append(params)
        elif method == "Log.entryAdded":
            self.log.log_entries.append(params.get("entry", {}))

    def _receive(self, deadline: float) -> dict[str, Any]:
        self.ws.settimeout(max(deadline - time.monotonic(), 0.05))
        message: dict[str, Any] = json.loads(self.ws.recv())
        self._record(message)
        return message

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        wanted = self._id
        self.ws.send(json.dumps({"id": wanted, "method": method, "params": params}))
        deadline = time.monotonic() + 30
        while True:
            message = self._receive(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def wait_for(self, event: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive(deadline)
            if message.get("method") == event:
                return message

    def settle(self, seconds: float = 0.5) -> None:
        """Read the events that arrive within ``seconds`` (late requests, console output)."""
        import websocket

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self._receive(deadline)
            except websocket.WebSocketTimeoutException:
                return

    # --- page -------------------------------------------------------------------------------

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.settle()

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluate: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params |= {
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
            }
        data = self.send("Page.captureScreenshot", **params)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


def is_local(url: str, page: str) -> bool:
    """The page itself, a ``data:`` URI, or an in-page anchor: nothing that leaves the file."""
    return url.startswith("data:") or re.sub(r"#.*$", "", url) == page
