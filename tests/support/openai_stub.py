"""A real, local, OpenAI-compatible HTTP server for tests and benchmarks (loopback only).

It answers ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` deterministically from the
request content, counts requests and the peak number in flight, and injects faults on demand:
slow replies, hangs (client time-outs), 429 with ``Retry-After``, 5xx, other 4xx, malformed JSON
bodies and truncated bodies. No network beyond 127.0.0.1; every wait is bounded and ends when
the server stops.

    with OpenAIStub() as stub:
        stub.add_fault("status", status=429, headers={"Retry-After": "1"}, times=1)
        client = AsyncOpenAI(base_url=stub.base_url, api_key="x")
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


class OpenAIStub:
    """The server; use as a context manager or call ``start()`` / ``stop()``."""

    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0, model: str = "stub-model") -> None:
        self.responder: Responder = responder or hashed_grade
        self.latency = latency
        self.model = model
        self.faults: list[Fault] = []
        self.served: list[Served] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- life cycle -------------------------------------------------------------------------
    def start(self) -> OpenAIStub:
        """Listen on a free port of 127.0.0.1 and serve in a background thread."""
        stub = self

        class Handler(_Handler):
            owner = stub

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.request_queue_size = 256
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; sleeping fault handlers wake up at once."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "start() the stub first"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- configuration and counters --------------------------------------------------------
    def add_fault(self, kind: str, **options: Any) -> Fault:
        """Inject a fault (see ``Fault``); faults are tried in the order they were added."""
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

    # --- internals used by the handler -----------------------------------------------------
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

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(min(seconds, MAX_SLEEP))


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIStub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr logging
        return

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        stub = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
            return
        record = Served(self.path, body, self.headers.get("Authorization", ""), "ok", time.monotonic())
        with stub._lock:
            stub.served.append(record)
            stub.in_flight += 1
            stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
        try:
            self._answer(stub, body, record)
        finally:
            record.ended = time.monotonic()
            with stub._lock:
                stub.in_flight -= 1

    def _answer(self, stub: OpenAIStub, body: dict[str, Any], record: Served) -> None:
        is_chat = self.path.rstrip("/").endswith("/chat/completions")
        is_embed = self.path.rstrip("/").endswith("/embeddings")
        if not (is_chat or is_embed):
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        text = content_of(body) if is_chat else json.dumps(body.get("input"))
        if stub.latency:
            stub._sleep(stub.latency)
        fault = stub._pick_fault(text)
        if fault is not None:
            record.outcome = fault.kind
            if self._serve_fault(stub, fault):
                return
        if is_chat:
            reply = fault.text if fault is not None and fault.kind == "reply" else stub.responder(body)
            self._send_json(200, chat_completion(body, reply, stub.model))
        else:
            self._send_json(200, embeddings(body, stub.model))

    def _serve_fault(self, stub: OpenAIStub, fault: Fault) -> bool:
        """Serve ``fault``; True when the response is complete, False to go on answering normally."""
        if fault.kind == "delay":
            stub._sleep(fault.seconds)
            return False
        if fault.kind == "reply":
            return False
        if fault.kind == "hang":
            stub._sleep(fault.seconds or MAX_SLEEP)
            self.close_connection = True
            return True
        if fault.kind == "status":
            error = {"error": {"message": fault.message, "type": "stub_error", "code": fault.status}}
            self._send_json(fault.status, error, fault.headers)
            return True
        if fault.kind == "malformed":
            self._send_raw(200, b'{"id": "chatcmpl-x", "choices": [{"message": ', "application/json")
            return True
        if fault.kind == "truncated":
            payload = b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": []}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload) + 100))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            return True
        raise ValueError(f"unknown fault kind {fault.kind!r}")

    def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(data).encode(), "application/json", headers)

    def _send_raw(self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


_WORD = re.compile(r"\S+")


def chat_completion(request: dict[str, Any], reply: str, model: str) -> dict[str, Any]:
    """A chat.completion object whose usage counts whitespace-separated words."""
    prompt_tokens = len(_WORD.findall(content_of(request)))
    completion_tokens = len(_WORD.findall(reply))
    return {
        "id": "chatcmpl-" + request_digest(request)[:12],
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", model),
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}, "logprobs": None}
        ],
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
