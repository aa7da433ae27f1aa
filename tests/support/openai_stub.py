"""A real, local, OpenAI-compatible HTTP server for tests and benchmarks (loopback only).

It answers ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` deterministically from the
request content, counts requests and the peak number in flight, and injects faults on demand:
slow replies, hangs (client time-outs), 429 with ``Retry-After``, 5xx, other 4xx, malformed JSON
bodies and truncated bodies. No network beyond 127.0.0.1; every wait is bounded and ends when
the server stops. It runs on asyncio, so a thousand slow replies cost no threads.

    with OpenAIStub() as stub:
        stub.add_fault("status", status=429, headers={"Retry-After": "1"}, times=1)
        client = AsyncOpenAI(base_url=stub.base_url, api_key="x")
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Responder = Callable[[dict[str, Any]], str]

MAX_SLEEP = 30.0  # no fault may hold a thread longer than this


def content_of(request: dict[str, Any]) -> str:
    """All message contents of a chat request joined, the text the replies are keyed on."""
    parts = []
    for message in request.get("messages", []):
        content = message.get("content", "")
        if isinstance(content, list):
            content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        parts.append(str(content))
    return "\n".join(parts)


def request_digest(request: dict[str, Any]) -> str:
    """A stable hash of a chat request's messages, to recognise a repeated request."""
    return hashlib.sha256(json.dumps(request.get("messages", []), sort_keys=True).encode()).hexdigest()


def hashed_grade(request: dict[str, Any]) -> str:
    """The default reply: a UMBRELA-style marker whose grade 0-3 is a hash of the request content."""
    grade = int(hashlib.sha256(content_of(request).encode()).hexdigest(), 16) % 4
    return f"##final score: {grade}"


def embed_text(text: str, dimensions: int = 8) -> list[float]:
    """A deterministic unit vector for ``text`` (same text, same vector)."""
    digest = hashlib.sha256(text.encode()).digest()
    values = [byte - 127.5 for byte in digest[:dimensions]]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


@dataclass
class Fault:
    """One injected fault: applies to requests whose content contains ``match`` (all if None)."""

    kind: str  # "delay" | "hang" | "status" | "malformed" | "truncated" | "reply"
    times: int | None = None  # how many requests it applies to; None = every matching request
    match: str | None = None
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "injected fault"
    seconds: float = 0.0
    text: str = ""
    reasoning: str | None = None  # "reply": also sent as the message's reasoning_content
    logprobs: list[dict[str, Any]] | None = None  # "reply": sent as choices[0].logprobs.content (token logprobs)
    used: int = 0


@dataclass
class Served:
    """What the stub saw of one request."""

    path: str
    body: dict[str, Any]
    authorization: str
    outcome: str  # "ok" or the kind of fault served
    started: float
    ended: float = 0.0
    header_names: tuple[str, ...] = ()  # lower-cased, as received


class OpenAIStub:
    """The server, run on its own event loop in a background thread.

    Use as a context manager or call ``start()`` / ``stop()``. ``latency`` delays every reply.
    """

    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0, model: str = "stub-model") -> None:
        self.responder: Responder = responder or hashed_grade
        self.latency = latency
        self.model = model
        self.faults: list[Fault] = []
        self.served: list[Served] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._stopping: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._port = 0

    # --- life cycle -------------------------------------------------------------------------
    def start(self) -> OpenAIStub:
        """Listen on a free port of 127.0.0.1 and serve in a background thread."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._open())
            except BaseException as exc:  # noqa: BLE001 - reported to start()
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._close())
            loop.close()

        self._thread = threading.Thread(target=run, name="openai-stub", daemon=True)
        self._thread.start()
        if not ready.wait(10) or failure:
            raise RuntimeError(f"the OpenAI stub did not start: {failure}")
        return self

    async def _open(self) -> None:
        self._stopping = asyncio.Event()
        self._server = await asyncio.start_server(self._serve_connection, "127.0.0.1", 0, backlog=1024)
        self._port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        assert self._server is not None and self._stopping is not None
        self._stopping.set()
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def stop(self) -> None:
        """Stop serving; replies being delayed are dropped at once."""
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- configuration and counters --------------------------------------------------------
    def add_fault(self, kind: str, **options: Any) -> Fault:
        """Inject a fault (see ``Fault``); faults are tried in the order they were added."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; known: {FAULT_KINDS}")
        fault = Fault(kind=kind, **options)
        with self._lock:
            self.faults.append(fault)
        return fault

    def reset(self) -> None:
        """Forget faults and counters (keeps the responder and latency)."""
        with self._lock:
            self.faults.clear()
            self.served.clear()
            self.max_in_flight = 0

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.served)

    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of all chat requests received, in arrival order."""
        with self._lock:
            return [s.body for s in self.served if s.path.endswith("/chat/completions")]

    def _pick_fault(self, text: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.match is not None and fault.match not in text:
                    continue
                if fault.times is not None and fault.used >= fault.times:
                    continue
                fault.used += 1
                return fault
        return None

    # --- HTTP/1.1, just enough for the openai client -----------------------------------------
    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                method, path, headers, raw = request
                keep_open = await self._handle(method, path, headers, raw, writer)
                if not keep_open:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, asyncio.CancelledError):
            pass  # the client went away, or the stub is stopping
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        if method == "GET" and path.split("?")[0].rstrip("/").endswith("/stats"):
            with self._lock:  # not counted as a request
                stats = {"requests": len(self.served), "max_in_flight": self.max_in_flight}
            return await _send_json(writer, 200, stats)
        try:
            body = json.loads(raw or b"{}") if method == "POST" else {}
        except json.JSONDecodeError:
            return await _send_json(
                writer, 400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}}
            )
        record = Served(
            path, body, headers.get("authorization", ""), "ok", time.monotonic(), header_names=tuple(headers)
        )
        with self._lock:
            self.served.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(method, path, body, record, writer)
        finally:
            record.ended = time.monotonic()
            with self._lock:
                self.in_flight -= 1

    async def _answer(
        self, method: str, path: str, body: dict[str, Any], record: Served, writer: asyncio.StreamWriter
    ) -> bool:
        route = path.split("?")[0].rstrip("/")
        is_chat, is_embed = route.endswith("/chat/completions"), route.endswith("/embeddings")
        if method != "POST" or not (is_chat or is_embed):
            return await _send_json(
                writer, 404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}}
            )
        text = content_of(body) if is_chat else json.dumps(body.get("input"))
        if self.latency:
            await asyncio.sleep(self.latency)
        fault = self._pick_fault(text)
        reply_text, reasoning, logprobs = None, None, None
        if fault is not None:
            record.outcome = fault.kind
            if fault.kind == "delay":
                await asyncio.sleep(min(fault.seconds, MAX_SLEEP))
            elif fault.kind == "reply":
                reply_text, reasoning, logprobs = fault.text, fault.reasoning, fault.logprobs
            elif fault.kind == "hang":
                await asyncio.sleep(min(fault.seconds or MAX_SLEEP, MAX_SLEEP))
                return False
            elif fault.kind == "status":
                error = {"error": {"message": fault.message, "type": "stub_error", "code": fault.status}}
                return await _send_json(writer, fault.status, error, fault.headers)
            elif fault.kind == "malformed":
                return await _send_raw(writer, 200, b'{"id": "chatcmpl-x", "choices": [{"message": ')
            elif fault.kind == "truncated":
                payload = b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": []}'
                await _send_raw(writer, 200, payload[: len(payload) // 2], declared_length=len(payload) + 100)
                return False
        if is_embed:
            return await _send_json(writer, 200, embeddings(body, self.model))
        if reply_text is None:
            reply_text = self.responder(body)
        return await _send_json(writer, 200, chat_completion(body, reply_text, self.model, reasoning, logprobs))


FAULT_KINDS = ("delay", "hang", "status", "malformed", "truncated", "reply")
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests"}


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    """One HTTP/1.1 request (method, path, lower-cased headers, body), or None at end of stream."""
    line = await reader.readline()
    if not line:
        return None
    method, path, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    body = await reader.readexactly(length) if length else b""
    return method, path, headers, body


async def _send_json(
    writer: asyncio.StreamWriter, status: int, data: Any, headers: dict[str, str] | None = None
) -> bool:
    return await _send_raw(writer, status, json.dumps(data).encode(), headers=headers)


async def _send_raw(
    writer: asyncio.StreamWriter,
    status: int,
    payload: bytes,
    *,
    headers: dict[str, str] | None = None,
    declared_length: int | None = None,
) -> bool:
    """Write one response; True to keep the connection open."""
    lines = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
        "Content-Type: application/json",
        f"Content-Length: {declared_length if declared_length is not None else len(payload)}",
    ]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
    await writer.drain()
    return True


_WORD = re.compile(r"\S+")


def chat_completion(
    request: dict[str, Any], reply: str, model: str, reasoning: str | None = None, logprobs: list[Any] | None = None
) -> dict[str, Any]:
    """A chat.completion object whose usage counts whitespace-separated words (``reasoning``: reasoning_content;
    ``logprobs``: the token log-probabilities, ``choices[0].logprobs.content``)."""
    prompt_tokens = len(_WORD.findall(content_of(request)))
    completion_tokens = len(_WORD.findall(reply))
    message = {"role": "assistant", "content": reply}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    token_logprobs = None if logprobs is None else {"content": logprobs}
    return {
        "id": "chatcmpl-" + request_digest(request)[:12],
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", model),
        "choices": [{"index": 0, "finish_reason": "stop", "message": message, "logprobs": token_logprobs}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def embeddings(request: dict[str, Any], model: str) -> dict[str, Any]:
    """An embeddings list object with one deterministic vector per input string."""
    inputs = request.get("input", [])
    if isinstance(inputs, str):
        inputs = [inputs]
    data = [{"object": "embedding", "index": i, "embedding": embed_text(str(text))} for i, text in enumerate(inputs)]
    tokens = sum(len(_WORD.findall(str(text))) for text in inputs)
    return {
        "object": "list",
        "data": data,
        "model": request.get("model", model),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def main() -> None:
    """Serve in the foreground: ``python -m tests.support.openai_stub [--latency S]``; prints the port.

    Stops when standard input closes. ``GET /v1/stats`` returns the request count (not counting
    itself) and the peak number in flight.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    options = parser.parse_args()
    with OpenAIStub(latency=options.latency) as stub:
        print(stub.port, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
