"""The LLM client shared by the judge, generation and retriever servers.

Chat completions and embeddings against any OpenAI-compatible endpoint or pool of endpoints (the
``openai`` async client, routed by ``ultra_llm.pool``), or a local in-process model
(``ultra_llm.local.models``, optional extra ``local-llm``). In a batch pass (``ultra_llm.batch_mode.passes``)
a request the cache cannot answer is handed to the pass's collector instead of being sent.
It bounds the requests in flight, retries time-outs, connection errors, 429 (honouring
``Retry-After``) and 5xx with exponential backoff and full jitter, fails at once on other 4xx
with the server's message, answers repeated requests from the on-disk cache (with their token log-probabilities:
``ultra_llm.logprobs``), counts tokens, and keeps the API key in memory only (never in a key, result, log or message).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ultra_base.errors import InputError
from ultra_base.file_limits import loads_limited
from ultra_llm.cache import AnswerCache, CachedAnswer, NoCache, cache_key, encode
from ultra_llm.completions import Completion, MalformedCompletion, Usage, completion_from_response, token_count
from ultra_llm.endpoint_errors import connection_failure, rejected_param, retry_after, server_message
from ultra_llm.estimate import unsent
from ultra_llm.http import lean_http_client
from ultra_llm.logprobs import LOGPROB_PARAMS, keep_logprobs, kept_logprobs
from ultra_llm.pool import EndpointPool, Member
from ultra_llm.settings import LLMSettings

__all__ = ["LLMClient", "LLMSettings", "Completion", "Usage"]

log = logging.getLogger("ultra.llm")

# Parameters an endpoint may reject; dropped (and said once) when the server names them in a 400.
OPTIONAL_PARAMS = ("seed", "frequency_penalty", "presence_penalty", "top_p", "temperature", "response_format")
OPTIONAL_PARAMS += LOGPROB_PARAMS
REASONING_MAX_TOKENS = 4096
# The openai client's telemetry headers: no endpoint needs them, and each costs header handling per request.
_STAINLESS = ("Lang", "Package-Version", "OS", "Arch", "Runtime", "Runtime-Version", "Async")
TELEMETRY_HEADERS = tuple(f"X-Stainless-{name}" for name in _STAINLESS)
PER_REQUEST_TELEMETRY = ("x-stainless-retry-count", "x-stainless-read-timeout")


class _Retry(Exception):
    """A transient failure: wait ``delay`` seconds (None = backoff) and try again."""

    def __init__(self, reason: str, delay: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay
        self.member: Member | None = None  # the endpoint it failed on


class _Fail(Exception):
    """A permanent failure: report ``reason`` without retrying."""


class LLMClient:
    """Asynchronous chat and embeddings with bounded concurrency, retries, cache and accounting.

    Create it inside the event loop that uses it; ``await client.aclose()`` (or ``async with``).
    """

    def __init__(self, settings: LLMSettings, cache: AnswerCache | NoCache | None = None) -> None:
        self.settings = settings
        self.cache = cache if cache is not None else NoCache()
        self.usage = Usage()
        self.dropped: set[str] = set()
        self.pool = EndpointPool(
            settings.pool() if settings.backend == "openai" else (),
            drain_after=settings.drain_after,
            cool_down=settings.cool_down,
            usage=self.usage,
        )
        self._local_slots = asyncio.Semaphore(settings.max_workers)
        self._post_options: dict[str, Any] = {}
        self._local_lock = asyncio.Lock()
        self._pending: dict[str, asyncio.Future[Completion]] = {}
        self._secrets = sorted({settings.api_key, *(e.api_key for e in settings.endpoints)} - {""}, key=len)[::-1]
        # A batch pass (ultra_llm.batch_mode.passes) sets these: where misses go, and which answers its batches brought.
        self.collector: Any = None
        self.batch_answered: dict[str, int] = {}
        self._counted: set[str] = set()
        self._answered: set[str] = set()  # keys this client stored online: never refreshed (see chat)
        self._warned_online = False

    def start_pass(self, collector: Any) -> None:
        """Begin a batch pass (``ultra_llm.batch_mode.passes``): misses go to ``collector``, counts start again."""
        self.collector = collector
        self.usage.restart()
        self._counted.clear()

    @property
    def model(self) -> str:
        """The model as the cache knows it: the same whichever endpoint answers; a local model is marked."""
        return f"local:{self.settings.model_id}" if self.settings.backend == "local" else self.settings.model_id

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.pool.aclose()

    # --- public API ------------------------------------------------------------------------
    async def chat(
        self, messages: list[dict[str, Any]], sampling: dict[str, Any], *, prompt: str, refresh: bool = False
    ) -> Completion:
        """One chat completion; ``prompt`` (name and hash of the prompt file) is part of the cache key.
        ``refresh``: ask again rather than use an answer an earlier online run stored (``ultra_llm.asking``)."""
        sampling = self._effective_sampling(sampling)
        messages_json = encode(messages)
        key = cache_key(model_id=self.model, messages_json=messages_json, sampling=sampling, prompt_version=prompt)
        hit = self.cache.get(key)
        refresh = refresh and hit is not None and key not in self._answered and key not in self.batch_answered
        if refresh and self.cache.via(key) is None:  # an earlier online run's answer: a fresh one replaces it
            hit = None
        if hit is not None:
            fresh = None if key in self._counted else self.batch_answered.get(key)
            if fresh is not None:  # brought by this run's batches: requests, not a cache hit (counted once a pass)
                self._counted.add(key)
            reply = Completion(
                "ok",
                hit.text,
                hit.reasoning,
                None,
                hit.prompt_tokens,
                hit.completion_tokens,
                cached=fresh is None,
                attempts=fresh or 0,
                logprobs=kept_logprobs(self.cache, key) if sampling.get("logprobs") else None,
            )
        elif (collector := unsent(self) or self.collector) is not None:  # unsent: ultra run --estimate, never sent
            return collector.defer(key, self.settings.model_id, messages_json, sampling, prompt=prompt)
        elif key in self._pending:
            # The same request is already on its way (e.g. two docids with the same text): share its answer.
            first = await asyncio.shield(self._pending[key])
            reply = dataclasses.replace(first, cached=first.status == "ok", attempts=0, vectors=None)
        else:
            reply = await self._send_chat(key, messages, sampling, prompt)
        self.usage.add(reply)
        return reply

    async def _send_chat(
        self, key: str, messages: list[dict[str, Any]], sampling: dict[str, Any], prompt: str
    ) -> Completion:
        from ultra_llm.batch_mode.files import exporting

        if exporting.get() is not None:
            raise InputError("this tool cannot export its requests (it does not run its LLM calls in passes)")
        if self.settings.mode == "batch" and not self._warned_online:
            self._warned_online = True
            log.warning("this tool does not run in batch passes: its requests go online to the endpoint(s)")

        def commit(reply: Completion) -> None:
            answer = CachedAnswer(reply.text, reply.reasoning, reply.prompt_tokens, reply.completion_tokens)
            request = {"messages": messages, "sampling": sampling}
            self.cache.put(key, model_id=self.settings.model_id, prompt=prompt, request=request, answer=answer)
            keep_logprobs(self.cache, key, reply, self.settings.model_id)
            self._answered.add(key)

        if self.settings.backend == "local":
            call = lambda _member: self._local_chat(messages, sampling)  # noqa: E731
        else:
            call = lambda member: self._openai_chat(member, messages, sampling)  # noqa: E731
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            reply = await self._with_retries(call, commit)
            future.set_result(reply)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            del self._pending[key]
        return reply

    async def embed(self, texts: list[str]) -> Completion:
        """Embeddings of ``texts`` (``reply.vectors``), cached like chat answers."""
        model = self.settings.embedding_model or self.settings.model_id
        marked = f"local:{model}" if self.settings.backend == "local" else model
        key = cache_key(model_id=marked, messages=[{"input": texts}], sampling={}, prompt_version="embeddings")
        hit = self.cache.get(key)
        if hit is not None:
            vectors = loads_limited(hit.text, path="the answer cache")
            reply = Completion("ok", "", None, None, hit.prompt_tokens, 0, cached=True, vectors=vectors)
        elif (estimating := unsent(self)) is not None and self.settings.backend != "local":  # a local model runs
            reply = estimating.defer(key, marked, [{"input": texts}], {}, prompt="embeddings")
        else:
            if self.settings.backend == "local":
                call = lambda _member: self._local_embed(model, texts)  # noqa: E731
            else:
                call = lambda member: self._openai_embed(member, model, texts)  # noqa: E731

            def commit(reply: Completion) -> None:
                answer = CachedAnswer(json.dumps(reply.vectors), None, reply.prompt_tokens, 0)
                self.cache.put(key, model_id=model, prompt="embeddings", request={"input": texts}, answer=answer)

            reply = await self._with_retries(call, commit)
        self.usage.add(reply)
        return reply

    def redact(self, text: str) -> str:
        """``text`` with the API key and anything shaped like a key replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return re.sub(r"\b(sk-[A-Za-z0-9_\-*]{6,})", "***", text)

    # --- retries -----------------------------------------------------------------------------
    async def _with_retries(
        self, call: Callable[[Member | None], Awaitable[Completion]], commit: Callable[[Completion], None]
    ) -> Completion:
        """Call until it succeeds or the retries run out; ``commit`` stores a success before its slot frees,
        so a killed process loses at most the requests in flight. A request that failed on one endpoint of
        a pool is retried at once on another one, when another one is healthy."""
        attempts = 0
        last_reason = ""
        failed_on: Member | None = None
        for attempt in range(self.settings.max_retries + 1):
            attempts += 1
            try:
                reply = await self._attempt(call, commit, failed_on)
                reply.attempts = attempts
                return reply
            except _Fail as exc:
                return Completion("error", error=self.redact(str(exc)), attempts=attempts)
            except _Retry as exc:
                last_reason = self.redact(exc.reason)
                failed_on = exc.member
                if attempt == self.settings.max_retries:
                    break
                if failed_on is not None and self.pool.healthy_elsewhere(failed_on):
                    log.info("retrying on another endpoint after: %s", last_reason)
                    continue
                delay = exc.delay if exc.delay is not None else self._backoff(attempt)
                log.info("retrying in %.2f s after: %s", delay, last_reason)
                await asyncio.sleep(delay)
        tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
        return Completion("error", error=f"gave up after {tries}: {last_reason}", attempts=attempts)

    async def _attempt(
        self,
        call: Callable[[Member | None], Awaitable[Completion]],
        commit: Callable[[Completion], None],
        avoid: Member | None,
    ) -> Completion:
        """One try on one slot: the local model's, or the least-loaded endpoint's."""
        if self.settings.backend == "local":
            async with self._local_slots:
                reply = await call(None)
                commit(reply)
            return reply
        member = await self.pool.acquire(avoid)
        outcome = "cancelled"
        try:
            reply = await call(member)
            commit(reply)
            outcome = "ok"
            return reply
        except _Retry as exc:
            exc.member, outcome = member, "retry"
            raise
        except _Fail:
            outcome = "fail"
            raise
        finally:
            self.pool.release(member, outcome)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter."""
        ceiling = min(self.settings.backoff_max, self.settings.backoff_base * 2**attempt)
        return random.uniform(0, ceiling)

    # --- the OpenAI-compatible backend ----------------------------------------------------------
    def _client(self, member: Member) -> Any:
        if member.client is None:
            import openai

            endpoint = member.endpoint
            member.client = openai.AsyncOpenAI(
                base_url=endpoint.base_url,
                api_key=endpoint.api_key or "EMPTY",
                timeout=self.settings.timeout,
                max_retries=0,  # retries are ours: one policy, counted
                http_client=lean_http_client(openai, self.settings.timeout),
                default_headers=dict.fromkeys(TELEMETRY_HEADERS, openai.Omit()),
            )
            self._post_options = {"headers": dict.fromkeys(PER_REQUEST_TELEMETRY, openai.Omit())}
        return member.client

    def _effective_sampling(self, sampling: dict[str, Any]) -> dict[str, Any]:
        """The settings' temperature when they set one; reasoning models take no temperature-like settings and
        a larger token budget."""
        sampling = dict(sampling)
        if self.settings.temperature is not None:
            sampling["temperature"] = self.settings.temperature
        if self.settings.reasoning:
            for name in ("temperature", "top_p", "frequency_penalty", "presence_penalty"):
                sampling.pop(name, None)
            budget = max(int(sampling.pop("max_tokens", 0) or 0), REASONING_MAX_TOKENS)
            sampling["max_completion_tokens"] = budget
        return sampling

    async def _openai_chat(
        self, member: Member, messages: list[dict[str, Any]], sampling: dict[str, Any]
    ) -> Completion:
        body = {"model": member.endpoint.model_id, "messages": messages, **sampling}
        response = await self._request(member, "/chat/completions", body)
        try:
            return completion_from_response(response)
        except MalformedCompletion as exc:
            raise _Retry(str(exc)) from None

    async def _openai_embed(self, member: Member, model: str, texts: list[str]) -> Completion:
        response = await self._request(member, "/embeddings", {"model": model, "input": texts})
        try:
            items = sorted(response["data"], key=lambda d: d["index"])
            vectors = [list(map(float, item["embedding"])) for item in items]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise _Retry("malformed reply: no embeddings in the response") from None
        if len(vectors) != len(texts):
            raise _Retry(f"malformed reply: {len(vectors)} embeddings for {len(texts)} inputs")
        tokens = token_count(response.get("usage") or {}, "prompt_tokens")
        return Completion("ok", prompt_tokens=tokens, vectors=vectors)

    async def _request(self, member: Member, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST once through the openai client, mapping failures to _Retry / _Fail.

        The client's low-level ``post`` keeps its auth, base URL, time-out and error types but
        skips the typed parameter transformation of ``create()``, about 1 ms of CPU per request,
        which at 32 requests in flight is what bounds throughput on a small machine. Parameters
        the endpoint rejects are dropped (and said once).
        """
        import openai

        kwargs, started = {k: v for k, v in body.items() if k not in self.dropped}, time.monotonic()
        for _ in range(len(OPTIONAL_PARAMS) + 1):
            try:
                response = await self._client(member).post(
                    path, body=kwargs, cast_to=object, options=self._post_options
                )
                if not isinstance(response, dict):
                    raise _Retry(f"malformed reply: expected a JSON object, got {type(response).__name__}")
                return response
            except openai.RateLimitError as exc:
                raise _Retry(f"429 rate limited: {server_message(exc)}", retry_after(exc.response)) from None
            except openai.APIConnectionError as exc:  # APITimeoutError too: aiohttp reports a refusal as one
                reason = connection_failure(exc, member.endpoint.base_url, self.settings.timeout, started)
                raise _Retry(reason) from None
            except openai.APIStatusError as exc:
                if exc.status_code >= 500:
                    raise _Retry(
                        f"{exc.status_code} server error: {server_message(exc)}", retry_after(exc.response)
                    ) from None
                rejected = rejected_param(exc, kwargs, OPTIONAL_PARAMS, self.dropped)
                if rejected is None:
                    raise _Fail(f"{exc.status_code} from the endpoint: {server_message(exc)}") from None
                kwargs = {k: v for k, v in kwargs.items() if k != rejected}
            except (openai.APIResponseValidationError, json.JSONDecodeError, ValueError) as exc:
                raise _Retry(f"malformed reply: {type(exc).__name__}") from None
        raise _Fail("the endpoint rejected every optional parameter")  # pragma: no cover - bounded loop

    # --- the local backend -----------------------------------------------------------------------
    async def _local_chat(self, messages: list[dict[str, Any]], sampling: dict[str, Any]) -> Completion:
        from ultra_llm.local import batching as local_batch
        from ultra_llm.local.schema import schema_of

        max_tokens = int(sampling.get("max_tokens") or sampling.get("max_completion_tokens") or 256)
        temperature, top_p = float(sampling.get("temperature") or 0), float(sampling.get("top_p") or 1)
        try:
            schema = schema_of(sampling.get("response_format"))  # decoded under it (ultra_llm.local.schema)
        except InputError as exc:
            raise _Fail(str(exc)) from None
        # one model per process; concurrent requests are generated together (ultra_llm.local.batching)
        text, n_in, n_out = await local_batch.chat(
            self.settings.model_id, messages, max_tokens, temperature=temperature, top_p=top_p, schema=schema
        )
        return Completion("ok", text, prompt_tokens=n_in, completion_tokens=n_out)

    async def _local_embed(self, model: str, texts: list[str]) -> Completion:  # noqa: ARG002 - the setting names the model
        import anyio.to_thread

        from ultra_llm.local import models as local

        async with self._local_lock:
            vectors = await anyio.to_thread.run_sync(local.embed, self.settings.embedding_model, texts)
        return Completion("ok", vectors=vectors)
