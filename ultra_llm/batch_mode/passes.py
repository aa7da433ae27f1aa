"""Batch mode and request export: a tool's LLM work run in passes over the cache.

``in_passes(client, judge)`` runs ``judge`` (a tool's judging coroutine) once when the client is
online. In batch mode (``mode: batch``) or under ``export_requests`` it runs it in passes: in a pass
every request the cache cannot answer is written to a batch-input file and answered at once with a
placeholder, so no coroutine waits and memory stays flat whatever the number of requests; the pass's
result is thrown away. Between passes the files go to the Batch API (``batch_api``) and the answers
into the cache; a pass with nothing to send is the tool's real result. Requests that depend on
earlier answers (a repair request after an unreadable reply) simply come in the next pass.

Under ``export_requests`` the first pass's files are the export, and the tool stops there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from ultra_base.errors import InputError
from ultra_llm.batch_mode.api import BatchRunner, Progress
from ultra_llm.batch_mode.files import ChunkWriter, ExportTarget, exporting, request_line
from ultra_llm.batch_mode.ledger import BatchLedger
from ultra_llm.cache import NoCache
from ultra_llm.completions import Completion

T = TypeVar("T")
DEFERRED = "deferred to a batch"
F = TypeVar("F", bound=Callable[..., Any])


def runs_in_passes(tool: F) -> F:
    """Declare that ``tool`` runs its LLM work through ``in_passes``, so its requests can be exported
    (``export_requests`` finds such tools in its server's tool list)."""
    tool.__runs_in_passes__ = True  # type: ignore[attr-defined]
    return tool


def can_run_in_passes(tool: Callable[..., Any]) -> bool:
    """True for a tool declared with ``runs_in_passes``."""
    return getattr(tool, "__runs_in_passes__", False) is True


class RequestsExported(InputError):
    """The tool's requests were written to files (``export_requests``); the tool itself stops here."""

    def __init__(self, target: ExportTarget) -> None:
        paths, requests, _ = target.exported or ([], 0, 0)
        super().__init__(f"{requests} requests written to {paths}: the tool stops here (export_requests)")


class Collector:
    """One pass's requests the cache could not answer: written to files, each key once."""

    def __init__(
        self,
        writer: ChunkWriter,
        *,
        in_flight: dict[str, str],
        failures: dict[str, tuple[int, str]],
        prompts: dict[str, str],
        max_retries: int,
    ) -> None:
        self.writer = writer
        self.in_flight = in_flight
        self.failures = failures
        self.prompts = prompts
        self.max_retries = max_retries
        self.seen: set[str] = set()
        self.resume: set[str] = set()  # batch ids of earlier runs that hold requests of this pass

    def defer(self, key: str, model: str, messages_json: str, sampling: dict[str, Any], *, prompt: str) -> Completion:
        """Write the request (once) and answer with a placeholder; after too many failed batches, the error."""
        tries, reason = self.failures.get(key, (0, ""))
        if tries > self.max_retries:
            return Completion("error", error=f"failed in {tries} batches: {reason}", attempts=tries)
        if key not in self.seen:
            self.seen.add(key)
            batch_id = self.in_flight.get(key)
            if batch_id is not None:
                self.resume.add(batch_id)
            else:
                self.writer.add(key, request_line(key, model, messages_json, sampling))
                self.prompts.setdefault(key, prompt)
        return Completion("error", error=DEFERRED)

    @property
    def waiting(self) -> int:
        """Requests this pass could not answer (written now or in an earlier run's open batch)."""
        return len(self.seen)


async def in_passes(client: Any, judge: Callable[[], Awaitable[T]], *, progress: Progress | None = None) -> T:
    """``await judge()``; in batch mode or under ``export_requests``, in passes (see the module)."""
    target = exporting.get()
    if client.settings.mode != "batch" and target is None:
        return await judge()
    if isinstance(client.cache, NoCache):
        raise InputError("batch mode and export_requests need an answer cache: set the tool's cache path")
    if client.settings.backend != "openai":
        raise InputError("batch mode and export_requests need the openai backend")
    ledger = BatchLedger(client.cache.path)
    runner = BatchRunner(client, ledger, progress=progress) if target is None else None
    folder = Path(tempfile.mkdtemp(prefix=".ultra-batch-", dir=target.directory if target else None))
    try:
        while True:
            writer = _writer(client, folder, target)
            collector = Collector(
                writer,
                in_flight={} if target else ledger.in_flight(endpoint=runner.label, model_id=client.model),
                failures=runner.failures if runner else {},
                prompts=runner.prompts if runner else {},
                max_retries=client.settings.max_retries,
            )
            client.start_pass(collector)
            try:
                result = await judge()
            finally:
                client.collector = None
                chunks = writer.close()
            if not collector.waiting:
                return result
            if target is not None:
                target.exported = (_publish(chunks, target), len(writer), client.usage.cache_hits)
                raise RequestsExported(target)
            await runner.run(chunks, collector.resume)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if runner is not None:
            await runner.aclose()
        ledger.close()


def _writer(client: Any, folder: Path, target: ExportTarget | None) -> ChunkWriter:
    if target is not None:
        return ChunkWriter(folder, target.stem, max_requests=target.max_requests, max_bytes=target.max_bytes)
    limits = client.settings.batch
    return ChunkWriter(folder, "requests", max_requests=limits.max_requests, max_bytes=limits.max_bytes)


def _publish(chunks: list[Any], target: ExportTarget) -> list[str]:
    """Move the written files to reserved names in the export folder: ``<stem>.jsonl`` or ``<stem>_<n>.jsonl``."""
    paths = []
    for i, chunk in enumerate(chunks, start=1):
        name = f"{target.stem}.jsonl" if len(chunks) == 1 else f"{target.stem}_{i}.jsonl"
        final = target.reserve(target.directory / name)
        os.replace(chunk.path, final)
        paths.append(str(final))
    return paths
