"""A real HTTP service on 127.0.0.1 for the target tests: a small RAG reply, and faults on chosen paths.

Every request is recorded (path, headers, JSON body) in ``Service.seen``. Paths:
  /ask             {"answer": "A:<question>", "contexts": [{"text", "id", "score"}], "usage": {...}}
  /slow            /ask after ``slow_seconds``
  /flaky429        429 with Retry-After: 1 the first time an id is asked, then /ask
  /flaky500        500 the first time an id is asked, then /ask
  /always500       500 every time
  /junk            200 with a body that is not JSON
  /truncated       a Content-Length larger than the body, then the connection closed
  /drop            the connection closed without a reply
  /sse             server-sent events: the answer in three pieces, then the passages, then [DONE]
  /sse_cut         two events, then the connection closed inside a chunk
  /big             a 50 MB JSON body
  /deep            JSON nested 200 deep
  /redirect        302 to ``other`` (another host: localhost vs 127.0.0.1), path /ask
  /v1/chat/completions  an OpenAI-compatible chat reply ("chat:" + the last message) with Azure-style citations
  /refusal         an answer that is empty for ids ending in 'e', very long for ids ending in 'l'
The item with id "ok" is answered well on every path (as /sse on the stream paths).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BIG_BYTES = 50 * 1024 * 1024


def reply_for(body: dict[str, Any]) -> dict[str, Any]:
    question = str(body.get("question", ""))
    ident = str(body.get("id", "x"))
    return {
        "answer": f"A:{question}",
        "contexts": [
            {"text": f"passage one for {question}", "id": f"{ident}-d1", "score": 2.5},
            {"text": "passage two", "id": f"{ident}-d2", "score": 1.0},
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3},
    }


class Service:
    """The server and what it saw; ``other_url`` is where /redirect sends."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.seen: list[dict[str, Any]] = []
        self.asked: dict[str, int] = {}
        self.slow_seconds = 0.2
        self.lock = threading.Lock()
        self.other_url = ""
        handler = type("Handler", (_Handler,), {"service": self})
        self.server = ThreadingHTTPServer((host, 0), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Service:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def count(self, path: str) -> int:
        return sum(1 for s in self.seen if s["path"] == path)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    service: Service

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._handle({})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"raw": raw.decode()}
        self._handle(body)

    def _handle(self, body: dict[str, Any]) -> None:
        service = self.service
        path = self.path.split("?")[0]
        with service.lock:
            service.seen.append({"path": path, "headers": dict(self.headers), "body": body})
            key = f"{path}:{body.get('id')}"
            service.asked[key] = service.asked.get(key, 0) + 1
            first = service.asked[key] == 1
        if body.get("id") == "ok":  # the item that every fault path answers well
            return self._sse(body, first) if path.startswith("/sse") else self._ask(body, first)
        handler = getattr(self, "_" + path.strip("/").replace("/", "_"), None)
        if handler is None:
            return self._json(404, {"error": "no such path"})
        handler(body, first)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    def _ask(self, body: dict[str, Any], first: bool) -> None:
        self._json(200, reply_for(body))

    def _slow(self, body: dict[str, Any], first: bool) -> None:
        time.sleep(self.service.slow_seconds)
        self._ask(body, first)

    def _flaky429(self, body: dict[str, Any], first: bool) -> None:
        if first:
            return self._json(429, {"error": "slow down"}, {"Retry-After": "1"})
        self._ask(body, first)

    def _flaky500(self, body: dict[str, Any], first: bool) -> None:
        if first:
            return self._json(500, {"error": "oops"})
        self._ask(body, first)

    def _always500(self, body: dict[str, Any], first: bool) -> None:
        self._json(500, {"error": "down"})

    def _junk(self, body: dict[str, Any], first: bool) -> None:
        raw = b"<html>not json"
        self.send_response(200)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _truncated(self, body: dict[str, Any], first: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b'{"answer": "cut')
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(2)

    def _drop(self, body: dict[str, Any], first: bool) -> None:
        self.close_connection = True
        self.connection.shutdown(2)

    def _sse(self, body: dict[str, Any], first: bool, cut: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [{"delta": "Hel"}, {"delta": "lo "}, {"delta": str(body.get("question"))},
                  {"contexts": [{"text": "streamed passage", "id": "s1"}]}]  # fmt: skip
        lines = [f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"]
        if cut:
            lines = lines[:2]
        for line in lines:
            data = line.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        if cut:
            self.wfile.write(b'40\r\ndata: {"delta"')  # a chunk announced longer than what follows
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(b"0\r\n\r\n")

    def _sse_cut(self, body: dict[str, Any], first: bool) -> None:
        self._sse(body, first, cut=True)

    def _big(self, body: dict[str, Any], first: bool) -> None:
        filler = "x" * (BIG_BYTES - 40)
        raw = json.dumps({"answer": "big", "pad": filler}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(raw)

    def _deep(self, body: dict[str, Any], first: bool) -> None:
        raw = ('{"answer": "deep", "x": ' + "[" * 200 + "]" * 200 + "}").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _redirect(self, body: dict[str, Any], first: bool) -> None:
        self.send_response(307)
        self.send_header("Location", f"{self.service.other_url}/ask")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _v1_chat_completions(self, body: dict[str, Any], first: bool) -> None:
        last = body["messages"][-1]["content"]
        citations = [{"content": f"cited for {last}", "id": "c1"}, {"content": "second", "id": "c2"}]
        message = {"role": "assistant", "content": f"chat:{last}", "context": {"citations": citations}}
        self._json(200, {"choices": [{"message": message}], "usage": {"prompt_tokens": 11, "completion_tokens": 2}})

    def _refusal(self, body: dict[str, Any], first: bool) -> None:
        ident = str(body.get("id", ""))
        answer = "" if ident.endswith("e") else "y" * 50 if ident.endswith("l") else "fine"
        self._json(200, {"answer": answer})
