"""A small Chrome DevTools Protocol client for headless Chromium (Debian's `chromium`).

Used by the report and JupyterLab tests to load a page, run JavaScript in it, and collect
console errors, uncaught exceptions, every network request and every failed request.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import websocket  # websocket-client

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--remote-debugging-port=0",
    "--window-size=1400,1000",
]


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    """One headless browser with one page. Use as a context manager."""

    def __init__(self, binary: str | None = None, *, timeout_s: float = 30.0) -> None:
        self.binary = binary or chromium_binary()
        if self.binary is None:
            raise RuntimeError("chromium is not installed; `make test` installs it with apt")
        self.timeout_s = timeout_s
        self.console_errors: list[str] = []
        self.exceptions: list[str] = []
        self.requests: list[str] = []
        self.failed_requests: list[str] = []
        self._id = 0

    def __enter__(self) -> Chromium:
        self._dir = tempfile.mkdtemp(prefix="flashback-chromium-")
        self._proc = subprocess.Popen(
            [self.binary, *FLAGS, f"--user-data-dir={self._dir}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self._dir) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout_s
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self._proc.poll() is not None:
                self.__exit__(None, None, None)
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        self._ws = websocket.create_connection(
            pages[0]["webSocketDebuggerUrl"], timeout=self.timeout_s
        )
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if getattr(self, "_ws", None) is not None:
                self._ws.close()
        finally:
            if getattr(self, "_proc", None) is not None:
                self._proc.kill()
                self._proc.wait(timeout=10)
            shutil.rmtree(self._dir, ignore_errors=True)

    def _on_event(self, msg: dict) -> None:
        m, p = msg.get("method"), msg.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.console_errors.append(
                " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
            )
        elif m == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.exceptions.append(d.get("exception", {}).get("description") or d.get("text", ""))
        elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.console_errors.append(p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
        elif m == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])
        elif m == "Network.loadingFailed":
            self.failed_requests.append(f"{p.get('errorText')} (request {p.get('requestId')})")

    def send(self, method: str, **params: Any) -> dict:
        """Sends one CDP command and returns its result, recording events that arrive."""
        self._id += 1
        my_id = self._id
        self._ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self._ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._on_event(msg)

    def pump(self, seconds: float) -> None:
        """Processes events for `seconds`."""
        end = time.monotonic() + seconds
        self._ws.settimeout(0.1)
        try:
            while time.monotonic() < end:
                try:
                    self._on_event(json.loads(self._ws.recv()))
                except websocket.WebSocketTimeoutException:
                    pass
        finally:
            self._ws.settimeout(self.timeout_s)

    def offline(self) -> None:
        """Cuts the page off the network: any request but file:/data: fails."""
        self.send(
            "Network.emulateNetworkConditions",
            offline=True,
            latency=0,
            downloadThroughput=-1,
            uploadThroughput=-1,
        )

    def screenshot(self, path: str | Path, *, full_page: bool = True) -> Path:
        """Saves a PNG of the page (the whole document when ``full_page``)."""
        import base64

        params: dict[str, Any] = {"format": "png"}
        if full_page:
            m = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": m["width"],
                "height": m["height"],
                "scale": 1,
            }
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", **params)["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def navigate(self, url: str) -> None:
        self.send("Page.navigate", url=url)

    def evaluate(self, expression: str) -> Any:
        r = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluation failed: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    def wait_for(self, expression: str, *, timeout_s: float = 30.0, poll_s: float = 0.25) -> Any:
        """Polls a JavaScript expression until it is truthy; returns its value (or the last)."""
        deadline = time.monotonic() + timeout_s
        value = None
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            self.pump(poll_s)
        return value
