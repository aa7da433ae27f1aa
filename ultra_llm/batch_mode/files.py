"""Batch files: the request lines of the OpenAI Batch API (which vLLM's ``run-batch`` reads too), split at
the per-batch limits, and the output and error lines that come back.

A request line is ``{"custom_id": <cache key>, "method": "POST", "url": "/v1/chat/completions", "body": ...}``;
the body holds the model, the messages and the sampling parameters, never a key. The custom id is
the answer's cache key, so an output line goes straight into the cache whoever produced it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ultra_base import redact
from ultra_base.errors import InputError, existing_file
from ultra_base.file_limits import check_json_depth
from ultra_base.line_limits import bounded_lines
from ultra_llm.completions import Completion, MalformedCompletion, completion_from_response

CHAT_URL = "/v1/chat/completions"
_PLAIN = json.JSONEncoder(ensure_ascii=False)


@dataclass
class ExportTarget:
    """Where ``export_requests`` writes a tool's requests instead of sending them, and what was written."""

    directory: Path
    stem: str
    max_requests: int
    max_bytes: int
    reserve: Callable[[Path], Path]  # takes a free name for a published file (the server kit's unique_path)
    exported: tuple[list[str], int, int] | None = None  # (paths, requests, cache hits), set by the pass


# Set by export_requests around a tool call: the tool's batch pass writes its requests there and stops.
exporting: ContextVar[ExportTarget | None] = ContextVar("exporting", default=None)


def request_line(key: str, model: str, messages_json: str, sampling: dict[str, Any]) -> bytes:
    """One batch-input line (UTF-8, newline-terminated); ``messages_json`` is the messages' JSON text."""
    options = _PLAIN.encode(sampling)[1:-1]
    body = f'{{"model": {_PLAIN.encode(model)}, "messages": {messages_json}'
    body += f", {options}}}" if options else "}"
    line = f'{{"custom_id": "{key}", "method": "POST", "url": "{CHAT_URL}", "body": {body}}}\n'
    if redact.active():
        line = redact.redact_text(line)
    return line.encode("utf-8")


@dataclass
class Chunk:
    """One batch-input file and the cache keys of its requests, in order."""

    path: Path
    keys: list[str] = field(default_factory=list)
    size: int = 0


class ChunkWriter:
    """Writes request lines into ``directory/<stem>_<n>.jsonl`` files, a new one before a limit would be passed."""

    def __init__(self, directory: Path, stem: str, *, max_requests: int, max_bytes: int) -> None:
        self.directory = Path(directory)
        self.stem = stem
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.chunks: list[Chunk] = []
        self._handle: IO[bytes] | None = None

    def add(self, key: str, line: bytes) -> None:
        if len(line) > self.max_bytes:
            raise InputError(f"one request is {len(line)} bytes, more than batch_max_bytes ({self.max_bytes})")
        chunk = self.chunks[-1] if self.chunks else None
        if chunk is None or len(chunk.keys) >= self.max_requests or chunk.size + len(line) > self.max_bytes:
            chunk = self._next()
        assert self._handle is not None
        self._handle.write(line)
        chunk.keys.append(key)
        chunk.size += len(line)

    def _next(self) -> Chunk:
        self._close_handle()
        self.directory.mkdir(parents=True, exist_ok=True)
        chunk = Chunk(self.directory / f"{self.stem}_{len(self.chunks) + 1}.jsonl")
        self._handle = open(chunk.path, "wb")  # noqa: SIM115 - closed by _close_handle / close
        self.chunks.append(chunk)
        return chunk

    def _close_handle(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None

    def close(self) -> list[Chunk]:
        """Finish the last file; the chunks written."""
        self._close_handle()
        return self.chunks

    def __len__(self) -> int:
        return sum(len(chunk.keys) for chunk in self.chunks)


@dataclass
class Outcome:
    """What one output or error line says about one request."""

    custom_id: str
    reply: Completion | None  # None: the request failed, see error
    error: str | None = None


def read_outcomes(path: str | os.PathLike[str]) -> Iterator[Outcome]:
    """The outcomes in a batch output or error file (OpenAI Batch API or vLLM run-batch), line by line.

    A line that is not a batch output line is an InputError naming the file and the line.
    """
    with open(existing_file(path, what="batch results file"), encoding="utf-8") as handle:
        for number, text in enumerate(bounded_lines(handle, path), start=1):  # each line within a record's size
            if not text.strip():
                continue
            check_json_depth(text, path=str(path), first_line=number)  # before the recursive parser
            try:
                yield outcome_of(json.loads(text))
            except (json.JSONDecodeError, ValueError) as exc:
                raise InputError(
                    f"not a batch output line ({exc}); expected JSON with custom_id and response or error "
                    "(the output file of the OpenAI Batch API or of vLLM run-batch)",
                    path=str(path),
                    line=number,
                ) from None


def outcome_of(line: Any) -> Outcome:
    """One parsed output line as an ``Outcome``; a line of the wrong shape raises ValueError."""
    if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
        raise ValueError("no custom_id")
    custom_id, response, error = line["custom_id"], line.get("response"), line.get("error")
    if isinstance(response, dict) and response.get("status_code") == 200:
        try:
            return Outcome(custom_id, completion_from_response(response.get("body")))
        except MalformedCompletion as exc:
            return Outcome(custom_id, None, str(exc))
    if isinstance(error, dict):
        return Outcome(custom_id, None, f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip())
    if isinstance(response, dict):
        body = response.get("body")
        message = body.get("error", body) if isinstance(body, dict) else body
        if isinstance(message, dict):
            message = message.get("message") or json.dumps(message)[:300]
        return Outcome(custom_id, None, f"{response.get('status_code')} from the endpoint: {message}")
    if error:
        return Outcome(custom_id, None, str(error)[:300])
    raise ValueError("neither a response nor an error")
