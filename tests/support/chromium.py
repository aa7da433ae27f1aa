"""Open a local HTML file in headless Chromium over the DevTools protocol (``--remote-debugging-pipe``,
stdlib only) and report what a user's browser would see: console errors, network requests, and the
values of JavaScript expressions; optionally a PNG screenshot.

    with Browser() as browser:
        page = browser.open(Path("report.html"), checks={"rows": "document.querySelectorAll('tr').length"})
    page.console_errors, page.requests, page.values["rows"]

``python -m tests.support.chromium PAGE.html OUT.png`` writes a screenshot (docs/report.png is made so).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Where Chromium lives: Debian's package, Fedora's, Ubuntu's snap, macOS's app (brew install --cask chromium);
# $ULTRA_CHROMIUM first, then these, then whatever of these names is on PATH.
CANDIDATES = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
)
NAMES = ("chromium", "chromium-browser")
INSTALL_HINT = (
    "Debian: apt-get install chromium; Ubuntu: snap install chromium; Fedora: dnf install chromium; "
    "macOS: brew install --cask chromium; or set ULTRA_CHROMIUM to a Chromium executable"
)
FLAGS = (
    "--headless",
    "--no-sandbox",  # tests run as root in containers
    "--disable-gpu",
    "--remote-debugging-pipe",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--mute-audio",
)


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_chromium() -> str | None:
    """The Chromium executable the browser tests start, or None when there is none."""
    chosen = os.environ.get("ULTRA_CHROMIUM")
    if chosen:
        return chosen if _executable(chosen) else None
    for path in CANDIDATES:
        if _executable(path):
            return path
    return next((found for name in NAMES if (found := shutil.which(name))), None)


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if os.environ.get("ULTRA_CHROMIUM") and not find_chromium():
        return f"ULTRA_CHROMIUM={os.environ['ULTRA_CHROMIUM']} is not an executable file"
    if not find_chromium():
        return f"Chromium is not installed ({INSTALL_HINT}; scripts/test installs it where apt-get can)"
    return None


def snap_visible_dir(chromium: str) -> Path | None:
    """A folder a snap-confined Chromium can read and write (its own common folder under $HOME), or None
    when ``chromium`` is not a snap: a snap sees a private /tmp, so pages and profiles go there."""
    if not os.path.realpath(chromium).startswith("/snap/") and not chromium.startswith("/snap/"):
        return None
    folder = Path.home() / "snap" / "chromium" / "common" / "ultra-eval-tests"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass
class Page:
    """What loading one page showed."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for, itself included
    values: dict[str, Any] = field(default_factory=dict)
    screenshot: bytes | None = None


class Browser:
    """One headless Chromium process, spoken to through fds 3 (commands) and 4 (replies)."""

    def __init__(self, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self._next_id = 0
        self._buffer = b""
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        self._chromium = find_chromium()
        if self._chromium is None:
            raise RuntimeError(chromium_missing())
        self._snap_dir = snap_visible_dir(self._chromium)
        self._profile = tempfile.mkdtemp(prefix="ultra-chromium-", dir=self._snap_dir)
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # above fd 9 first, so that moving them onto 3 and 4 cannot overwrite one with the other (bash: dash
        # reads single-digit fd numbers only)
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_read, from_browser_write)]
        for fd in (to_browser_read, from_browser_write):
            os.close(fd)
        shell = f'exec "$0" "$@" 3<&{ends[0]} 4>&{ends[1]} {ends[0]}<&- {ends[1]}>&-'
        self._log = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            ["bash", "-c", shell, self._chromium, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            pass_fds=tuple(ends),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
        )
        for fd in ends:
            os.close(fd)
        return self

    def __exit__(self, *exc_info: object) -> None:
        with contextlib.suppress(OSError):
            self._send("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def open(
        self,
        path: Path,
        *,
        checks: dict[str, str] | None = None,
        screenshot: tuple[int, int] | None = None,
        viewport: tuple[int, int] | None = None,
    ) -> Page:
        """Load ``path``, wait for its load event, evaluate ``checks`` ({name: JS expression}); ``viewport``: the
        window's size in CSS pixels (``screenshot``'s size when one is taken)."""
        if self._snap_dir is not None:  # a copy the snap can read (the report is one self-contained file)
            path = Path(shutil.copy(path, Path(self._profile) / path.name))
        url = path.resolve().as_uri()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable", session=session)
        if screenshot or viewport:
            width, height = screenshot or viewport
            metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
            self.call("Emulation.setDeviceMetricsOverride", metrics, session=session)
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session=session)
        self._wait_for("Page.loadEventFired", session)
        page = Page(url)
        for name, expression in (checks or {}).items():
            reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session)
            if "exceptionDetails" in reply:
                raise AssertionError(f"check {name!r} threw: {reply['exceptionDetails']}")
            page.values[name] = reply["result"].get("value")
        if screenshot:
            page.screenshot = base64.b64decode(
                self.call("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
            )
        self._drain(0.3)  # late console messages and requests
        for event in (e for e in self._events if e.get("sessionId") == session):
            self._record(page, event)
        return page

    def visit(self, url: str, size: tuple[int, int] = (1100, 1300)) -> str:
        """Load ``url`` (a live server's page) in a new tab; returns the tab's session for ``evaluate`` / ``press``."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Page"):
            self.call(f"{domain}.enable", session=session)
        metrics = {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=session)
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session=session)
        self._wait_for("Page.loadEventFired", session)
        return session

    def evaluate(self, session: str, expression: str) -> Any:
        """The value of a JavaScript expression in the tab (promises awaited)."""
        params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        reply = self.call("Runtime.evaluate", params, session=session)
        if "exceptionDetails" in reply:
            raise AssertionError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def press(self, session: str, key: str) -> None:
        """Press and release one key (a character such as "1" or "j", or "Enter" / "Escape") as a keyboard does."""
        named = {"Enter": ("\r", 13), "Escape": ("", 27)}
        text, code = named.get(key, (key, ord(key.upper()) if len(key) == 1 else 0))
        down = {"type": "keyDown", "key": key, "windowsVirtualKeyCode": code}
        if text:
            down["text"] = text
        self.call("Input.dispatchKeyEvent", down, session=session)
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "windowsVirtualKeyCode": code},
                  session=session)  # fmt: skip

    def wait_until(self, session: str, expression: str, timeout: float = 60.0) -> Any:
        """Poll ``expression`` until it is truthy; its value (AssertionError after ``timeout`` seconds)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = self.evaluate(session, expression)
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"{expression!r} stayed falsy for {timeout} s")

    def screenshot(self, session: str) -> bytes:
        """A PNG of the tab."""
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"}, session=session)["data"])

    @staticmethod
    def _record(page: Page, event: dict[str, Any]) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            page.requests.append(params["request"]["url"])
        elif method == "Runtime.exceptionThrown":
            page.console_errors.append(json.dumps(params["exceptionDetails"])[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            page.console_errors.append(json.dumps(params.get("args"))[:500])
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            page.console_errors.append(params["entry"].get("text", "")[:500])

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        ident = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            for message in self._read(deadline):
                if message.get("id") == ident:
                    if "error" in message:
                        raise RuntimeError(f"{method}: {message['error']}")
                    return message.get("result", {})
                self._events.append(message)

    def _send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _read(self, deadline: float) -> list[dict[str, Any]]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"Chromium did not answer within {self.timeout} s")
        ready, _, _ = select.select([self._from_browser], [], [], remaining)
        if not ready:
            raise TimeoutError(f"Chromium did not answer within {self.timeout} s")
        chunk = os.read(self._from_browser, 1 << 20)
        if not chunk:
            self._log.seek(0)
            tail = self._log.read().decode(errors="replace")[-2000:]
            raise RuntimeError(
                f"Chromium closed the DevTools pipe (exit code {self._process.poll()}); its log:\n{tail}"
            )
        self._buffer += chunk
        *messages, self._buffer = self._buffer.split(b"\0")
        return [json.loads(m) for m in messages if m]

    def _wait_for(self, method: str, session: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == method and e.get("sessionId") == session for e in self._events):
            self._events += self._read(deadline)

    def _drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([self._from_browser], [], [], max(0.0, end - time.monotonic()))
            if ready:
                self._events += self._read(end + self.timeout)


def main(argv: list[str]) -> int:
    """``PAGE.html OUT.png [WIDTH HEIGHT]``: a screenshot of the page's top."""
    page_file, out = Path(argv[0]), Path(argv[1])
    size = (int(argv[2]), int(argv[3])) if len(argv) > 3 else (1100, 1300)
    with Browser() as browser:
        page = browser.open(page_file, screenshot=size)
    out.write_bytes(page.screenshot or b"")
    print(f"wrote {out} ({len(page.screenshot or b'')} bytes); console errors: {len(page.console_errors)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
