"""The OpenAI stub with the Batch API: ``/v1/files`` and ``/v1/batches`` next to ``/v1/chat/completions``.

Uploaded files are kept on disk in a temporary folder. A created batch is checked against the
server's own per-batch limits (``max_requests``, ``max_bytes``: a batch past them fails, as the
OpenAI API's does), then answered line by line with the stub's responder, and completes with an
output file and, if any line failed, an error file. Faults: ``hold()`` keeps batches in progress
until ``release()``; ``fail_items(match)`` makes the lines whose messages contain ``match`` fail;
``expire_next(answered)`` makes the next batch expire after ``answered`` lines.

    with BatchStub() as server:
        server.hold()
        ...
        print(server.created, server.uploads)
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tests.support.openai_stub import OpenAIStub, _send_json, _send_raw, chat_completion, content_of

_BOUNDARY = re.compile(r'boundary="?([^";]+)"?')


class BatchStub(OpenAIStub):
    """``OpenAIStub`` plus files and batches (see the module)."""

    def __init__(self, *args: Any, max_requests: int = 50_000, max_bytes: int = 200 * 2**20, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.folder = Path(tempfile.mkdtemp(prefix="batch-stub-"))
        self.files: dict[str, Path] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.uploads = 0
        self.created: list[str] = []
        self.batch_lines: list[int] = []  # requests per created batch
        self._held = threading.Event()
        self._failing: list[str] = []
        self._expire: list[int] = []

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    # --- faults ------------------------------------------------------------------------------------
    def hold(self) -> None:
        """Keep every batch in progress (half its lines counted as done) until ``release()``."""
        self._held.set()

    def release(self) -> None:
        self._held.clear()

    def fail_items(self, match: str) -> None:
        """Lines whose messages contain ``match`` end in the error file (a 500 from the model server)."""
        self._failing.append(match)

    def expire_next(self, answered: int) -> None:
        """The next batch expires after answering its first ``answered`` lines."""
        self._expire.append(answered)

    # --- routes ------------------------------------------------------------------------------------
    async def _handle(self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: Any) -> bool:
        route = path.split("?")[0].rstrip("/")
        if "/files" not in route and "/batches" not in route:
            return await super()._handle(method, path, headers, raw, writer)
        if route.endswith("/batch_stats"):
            stats = {"uploads": self.uploads, "created": self.created, "batch_lines": self.batch_lines}
            return await _send_json(writer, 200, stats)
        if method == "POST" and route.endswith("/files"):
            return await _send_json(writer, 200, self._upload(headers.get("content-type", ""), raw))
        match = re.search(r"/files/([^/]+)/content$", route)
        if method == "GET" and match and match.group(1) in self.files:
            return await _send_raw(writer, 200, self.files[match.group(1)].read_bytes())
        if method == "POST" and route.endswith("/batches"):
            return await _send_json(writer, 200, self._create(json.loads(raw or b"{}")))
        match = re.search(r"/batches/([^/]+)$", route)
        if method == "GET" and match and match.group(1) in self.batches:
            return await _send_json(writer, 200, self.batches[match.group(1)])
        return await _send_json(writer, 404, {"error": {"message": f"no route {method} {path}"}})

    def _upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        found = _BOUNDARY.search(content_type)
        if not found:
            raise ValueError("not multipart")
        content = b""
        for part in raw.split(b"--" + found.group(1).encode()):
            head, _, body = part.partition(b"\r\n\r\n")
            if b'name="file"' in head:
                content = body[:-2] if body.endswith(b"\r\n") else body
        with self._lock:
            self.uploads += 1
            file_id = f"file-{self.uploads}"
        path = self.folder / file_id
        path.write_bytes(content)
        self.files[file_id] = path
        return {"id": file_id, "object": "file", "bytes": len(content), "purpose": "batch", "filename": file_id}

    def _create(self, request: dict[str, Any]) -> dict[str, Any]:
        batch_id = f"batch_{len(self.batches) + 1}"
        batch = {
            "id": batch_id,
            "object": "batch",
            "endpoint": request.get("endpoint"),
            "input_file_id": request.get("input_file_id"),
            "completion_window": request.get("completion_window"),
            "status": "validating",
            "created_at": int(time.time()),
            "output_file_id": None,
            "error_file_id": None,
            "errors": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
        }
        self.batches[batch_id] = batch
        with self._lock:
            self.created.append(batch_id)
        asyncio.get_running_loop().create_task(self._process(batch))
        return dict(batch)

    async def _process(self, batch: dict[str, Any]) -> None:
        source = self.files.get(str(batch["input_file_id"]))
        lines = source.read_bytes().splitlines() if source else []
        self.batch_lines.append(len(lines))
        counts = batch["request_counts"]
        counts["total"] = len(lines)
        size = source.stat().st_size if source else 0
        if not lines or len(lines) > self.max_requests or size > self.max_bytes:
            message = f"{len(lines)} requests / {size} bytes: past the limits ({self.max_requests}, {self.max_bytes})"
            batch.update(status="failed", errors={"data": [{"code": "limit_exceeded", "message": message}]})
            return
        batch["status"] = "in_progress"
        while self._held.is_set():
            counts["completed"] = len(lines) // 2
            await asyncio.sleep(0.02)
        answered = self._expire.pop(0) if self._expire else None
        outputs, errors = [], []
        for number, line in enumerate(lines):
            if answered is not None and number >= answered:
                break
            if number % 500 == 499:
                await asyncio.sleep(0)  # let uploads and polls in while a large batch is answered
            item = json.loads(line)
            body = item["body"]
            if any(match in content_of(body) for match in self._failing):
                error = {"status_code": 500, "body": {"error": {"message": "injected item failure"}}}
                errors.append({"id": f"r{number}", "custom_id": item["custom_id"], "response": error, "error": None})
                continue
            reply = chat_completion(body, self.responder(body), self.model)
            response = {"status_code": 200, "request_id": f"r{number}", "body": reply}
            outputs.append({"id": f"r{number}", "custom_id": item["custom_id"], "response": response, "error": None})
        counts.update(completed=len(outputs), failed=len(errors))
        batch["output_file_id"] = self._store(batch["id"] + "-out", outputs) if outputs else None
        batch["error_file_id"] = self._store(batch["id"] + "-err", errors) if errors else None
        batch["status"] = "expired" if answered is not None else "completed"

    def _store(self, file_id: str, rows: list[dict[str, Any]]) -> str:
        path = self.folder / file_id
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        self.files[file_id] = path
        return file_id


def main() -> None:
    """Serve in the foreground: ``python -m tests.support.batch_server [--latency S]``; prints the port.

    Stops when standard input closes. ``GET /v1/batch_stats`` returns the uploads and batches created.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every chat reply")
    options = parser.parse_args()
    with BatchStub(latency=options.latency) as stub:
        print(stub.port, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
