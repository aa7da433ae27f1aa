"""The OpenAI Batch API over HTTP: upload a request file, create a batch, poll it, read its output and error files.

``BatchRunner.run`` submits one pass's request files (one batch each, recorded in the ledger the
moment it exists), polls every open batch, reporting progress, and reads each finished batch's
output into the cache. Requests that failed, expired or were cancelled are counted in
``failures`` (cache key -> (times failed, last reason)); the next pass sends them again or, after
``max_retries`` retries, reports them as errors. Files are streamed, never held in memory.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_llm.batch_mode.files import CHAT_URL, Chunk, read_outcomes
from ultra_llm.batch_mode.ledger import BatchLedger
from ultra_llm.cache import CachedAnswer
from ultra_llm.endpoint_errors import host_port, server_message
from ultra_llm.logprobs import keep_logprobs

log = logging.getLogger("ultra.llm")

TERMINAL = ("completed", "failed", "expired", "cancelled", "lost")  # lost: the endpoint no longer knows it
Progress = Callable[[int, int], Awaitable[None] | None]


class BatchRunner:
    """Submits and follows batches on the first endpoint of ``client``'s settings."""

    def __init__(self, client: Any, ledger: BatchLedger, *, progress: Progress | None = None) -> None:
        self.client = client
        self.ledger = ledger
        self.progress = progress
        self.endpoint = client.settings.pool()[0]
        self.label = host_port(self.endpoint.base_url)
        self.limits = client.settings.batch
        self.failures: dict[str, tuple[int, str]] = {}
        self.prompts: dict[str, str] = {}
        self._http: Any = None

    @property
    def where(self) -> str:
        return self.label

    async def run(self, chunks: list[Chunk], resume: set[str]) -> None:
        """Submit ``chunks`` (one batch each), then poll them and the open batches ``resume`` until all finish."""
        active = sorted(resume)
        for batch_id in active:
            log.info(
                "batch %s was sent by an earlier run: following it instead of sending its requests again", batch_id
            )
        for chunk in chunks:
            active.append(await self._submit(chunk))
        await self._follow(active)

    async def _submit(self, chunk: Chunk) -> str:
        api = self._session()
        with open(chunk.path, "rb") as handle:  # streamed from disk, never read whole
            file = (chunk.path.name, handle, "application/jsonl")
            uploaded = await self._call(lambda: api.files.create(file=file, purpose="batch"), "uploading a batch file")
        batch = await self._call(
            lambda: api.batches.create(
                input_file_id=uploaded["id"], endpoint=CHAT_URL, completion_window=self.limits.completion_window
            ),
            "creating a batch",
        )
        self.ledger.record(
            batch["id"],
            endpoint=self.label,
            model_id=self.client.model,
            input_file_id=uploaded["id"],
            keys=chunk.keys,
        )
        self.client.usage.count(self.label, "requests", len(chunk.keys))
        log.info("batch %s created: %d requests (%d bytes)", batch["id"], len(chunk.keys), chunk.size)
        chunk.path.unlink(missing_ok=True)
        return str(batch["id"])

    async def _follow(self, active: list[str]) -> None:
        counts: dict[str, tuple[int, int]] = {}
        while active:
            for batch_id in list(active):
                batch = await self._retrieve(batch_id)
                request_counts = batch.get("request_counts") or {}
                finished = int(request_counts.get("completed") or 0) + int(request_counts.get("failed") or 0)
                counts[batch_id] = (finished, int(request_counts.get("total") or 0))
                if batch.get("status") in TERMINAL:
                    await self._read_results(batch)
                    active.remove(batch_id)
            done, total = (sum(column) for column in zip(*counts.values(), strict=True))
            log.info("batches: %d/%d requests done, %d batches still running", done, total, len(active))
            if self.progress is not None:
                result = self.progress(done, total)
                if asyncio.iscoroutine(result):
                    await result
            if active:
                await asyncio.sleep(self.limits.poll_interval)

    async def _read_results(self, batch: dict[str, Any]) -> None:
        batch_id, status = str(batch["id"]), str(batch.get("status"))
        keys = self.ledger.keys(batch_id)
        wanted, seen = set(keys), set()
        for file_field in ("output_file_id", "error_file_id"):
            if batch.get(file_field):
                with tempfile.TemporaryDirectory(prefix="ultra-batch-") as folder:
                    path = Path(folder) / "results.jsonl"
                    await self._download(str(batch[file_field]), path)
                    for outcome in read_outcomes(path):
                        if outcome.custom_id not in wanted:
                            continue
                        seen.add(outcome.custom_id)
                        self._settle(outcome.custom_id, outcome.reply, outcome.error)
        reason = f"batch {batch_id} {status}" + _errors(batch)
        for key in wanted - seen:  # expired, cancelled or failed before it ran
            self._settle(key, None, reason)
        self.ledger.done(batch_id, status)
        log.info("batch %s %s: %d of %d requests answered", batch_id, status, len(seen), len(keys))

    def _settle(self, key: str, reply: Any, error: str | None) -> None:
        tries = self.failures.get(key, (0, ""))[0]
        if reply is None:
            self.failures[key] = (tries + 1, self.client.redact(error or "no answer"))
            self.client.usage.count(self.label, "failed")
            return
        answer = CachedAnswer(reply.text, reply.reasoning, reply.prompt_tokens, reply.completion_tokens)
        request = {"custom_id": key, "via": "batch"}
        prompt = self.prompts.get(key, "")
        self.client.cache.put(
            key, model_id=self.client.settings.model_id, prompt=prompt, request=request, answer=answer
        )
        keep_logprobs(self.client.cache, key, reply, self.client.settings.model_id)  # for a weighted score
        self.client.batch_answered[key] = tries + 1
        self.failures.pop(key, None)
        self.client.usage.count(self.label, "ok")

    # --- HTTP (the openai client: its auth, its retries of 429, 5xx and lost connections) ----------------
    def _session(self) -> Any:
        if self._http is None:
            import openai

            self._http = openai.AsyncOpenAI(
                base_url=self.endpoint.base_url,
                api_key=self.endpoint.api_key or "EMPTY",
                timeout=self.client.settings.timeout,
                max_retries=self.client.settings.max_retries,
            )
        return self._http

    async def _call(
        self, call: Callable[[], Awaitable[Any]], what: str, *, missing: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """One Batch API call; what it returns as a dict (``missing`` for a 404, if given), or an InputError."""
        import openai

        try:
            result = await call()
        except openai.NotFoundError as exc:
            if missing is not None:
                return missing
            raise InputError(self.client.redact(f"404 from {self.label} {what}: {server_message(exc)}")) from None
        except openai.APIStatusError as exc:
            message = f"{exc.status_code} from {self.label} {what}: {server_message(exc)}"
            raise InputError(self.client.redact(message)) from None
        except openai.APIError as exc:
            raise InputError(self.client.redact(f"{what} on {self.label} failed: {exc}")) from None
        return result.model_dump() if hasattr(result, "model_dump") else dict(result)

    async def _retrieve(self, batch_id: str) -> dict[str, Any]:
        """The batch's state; one the endpoint does not know (deleted, another account) is ``lost``."""
        lost = {"id": batch_id, "status": "lost"}
        batch = await self._call(lambda: self._session().batches.retrieve(batch_id), "polling a batch", missing=lost)
        if batch is lost:
            log.warning("batch %s is unknown to %s: its requests are sent again", batch_id, self.label)
        return batch

    async def _download(self, file_id: str, path: Path) -> None:
        started = time.monotonic()
        api = self._session()
        try:
            async with api.files.with_streaming_response.content(file_id) as response:
                with open(path, "wb") as handle:
                    async for block in response.iter_bytes(1 << 20):
                        handle.write(block)
        except Exception as exc:  # noqa: BLE001 - any failure to fetch the file is the user's to see
            import openai

            if not isinstance(exc, openai.APIError):
                raise
            raise InputError(self.client.redact(f"cannot download {file_id} from {self.label}: {exc}")) from None
        log.info("downloaded %s (%d bytes) in %.1f s", file_id, os.path.getsize(path), time.monotonic() - started)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None


def _errors(batch: dict[str, Any]) -> str:
    errors = batch.get("errors")
    data = errors.get("data") if isinstance(errors, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return f": {data[0].get('message') or data[0].get('code')}"
    return ""
