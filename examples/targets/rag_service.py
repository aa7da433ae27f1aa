"""The example RAG system (rag.py) served over HTTP with the standard library, for examples/eval_target_http.yaml.

    python examples/targets/rag_service.py --port 8765

POST /ask with {"question": ..., "id": ..., "history": [...], "settings": {...}} answers
{"answer": ..., "contexts": [{"text": ..., "id": ..., "score": ...}]}. GET /health answers {"status": "ok"}.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

import rag  # noqa: E402

MAX_REQUEST_BYTES = 1_000_000


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self._reply(200, {"status": "ok"} if self.path == "/health" else {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        if self.path != "/ask":
            return self._reply(404, {"error": "not found"})
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            return self._reply(413, {"error": "request too large"})
        try:
            request = json.loads(self.rfile.read(length))
            question = request["question"]
        except (ValueError, KeyError, TypeError):
            return self._reply(400, {"error": "expected JSON with a question"})
        self._reply(200, rag.answer({**request, "question": str(question)}))

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # quiet: one line per request is noise here
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    rag.index()  # read the corpus before the first request
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"serving the example RAG system on http://{args.host}:{server.server_port}/ask", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
