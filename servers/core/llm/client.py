"""The LLM client shared by the judge, generation and retriever servers.

Chat completions and embeddings against any OpenAI-compatible endpoint (the ``openai`` async
client), or a local in-process model (``servers.core.llm.local``, optional extra ``local-llm``).
It bounds the requests in flight, retries time-outs, connection errors, 429 (honouring
``Retry-After``) and 5xx with exponential backoff and full jitter, fails at once on other 4xx
with the server's message, answers repeated requests from the on-disk cache, and counts tokens.
The API key lives only in memory: it is never part of a cache key, a result, a log line or an
error message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
from collections.abc import Awaitable, Callable
from typing import Any

from servers.core.llm.cache import AnswerCache, CachedAnswer, NoCache, cache_key
from servers.core.llm.endpoint_errors import connection_failure, retry_after, server_message
from servers.core.llm.http import lean_http_client
from servers.core.llm.replies import Reply, Usage
from servers.core.llm.settings import LLMSettings

__all__ = ["LLMClient", "LLMSettings", "Reply", "Usage"]

log = logging.getLogger("ultra.llm")

# Parameters an endpoint may reject; dropped (and said once) when the server names them in a 400.
OPTIONAL_PARAMS = ("seed", "frequency_penalty", "presence_penalty", "top_p", "temperature", "response_format")
REASONING_MAX_TOKENS = 4096
# The openai client's telemetry headers: no endpoint needs them, and each costs header handling per request.
TELEMETRY_HEADERS = (
    "X-Stainless-Lang",
    "X-Stainless-Package-Version",
    "X-Stainless-OS",
    "X-Stainless-Arch",
    "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version",
    "X-Stainless-Async",
)
PER_REQUEST_TELEMETRY = ("x-stainless-retry-count", "x-stainless-read-timeout")


class _Retry(Exception):
    """A transient failure: wait ``delay`` seconds (None = backoff) and try again."""

    def __init__(self, reason: str, delay: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay


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
        self._slots = asyncio.Semaphore(settings.max_workers)
        self._openai: Any = None
        self._post_options: dict[str, Any] = {}
        self._local: Any = None
        self._local_lock = asyncio.Lock()
        self._pending: dict[str, asyncio.Future[Reply]] = {}
        self._secret = settings.api_key

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._openai is not None:
            await self._openai.close()
            self._openai = None

    # --- public API ------------------------------------------------------------------------
    async def chat(self, messages: list[dict[str, Any]], sampling: dict[str, Any], *, prompt: str) -> Reply:
        """One chat completion; ``prompt`` (name and hash of the prompt file) is part of the cache key."""
        sampling = self._effective_sampling(sampling)
        key = cache_key(
            model_id=self.settings.model_id,
            base_url=self._endpoint(),
            messages=messages,
            sampling=sampling,
            prompt_version=prompt,
        )
        hit = self.cache.get(key)
        if hit is not None:
            reply = Reply("ok", hit.text, hit.reasoning, None, hit.prompt_tokens, hit.completion_tokens, cached=True)
        elif key in self._pending:
            # The same request is already on its way (e.g. two docids with the same text): share its answer.
            first = await asyncio.shield(self._pending[key])
            reply = Reply(
                first.status,
                first.text,
                first.reasoning,
                first.error,
                first.prompt_tokens,
                first.completion_tokens,
                cached=first.status == "ok",
            )
        else:

            def commit(reply: Reply) -> None:
                answer = CachedAnswer(reply.text, reply.reasoning, reply.prompt_tokens, reply.completion_tokens)
                request = {"messages": messages, "sampling": sampling}
                self.cache.put(key, model_id=self.settings.model_id, prompt=prompt, request=request, answer=answer)

            if self.settings.backend == "local":
                call = lambda: self._local_chat(messages, sampling)  # noqa: E731
            else:
                call = lambda: self._openai_chat(messages, sampling)  # noqa: E731
            future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
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
        self.usage.add(reply)
        return reply

    async def embed(self, texts: list[str]) -> Reply:
        """Embeddings of ``texts`` (``reply.vectors``), cached like chat answers."""
        model = self.settings.embedding_model or self.settings.model_id
        key = cache_key(
            model_id=model,
            base_url=self._endpoint(),
            messages=[{"input": texts}],
            sampling={},
            prompt_version="embeddings",
        )
        hit = self.cache.get(key)
        if hit is not None:
            reply = Reply("ok", "", None, None, hit.prompt_tokens, 0, cached=True, vectors=json.loads(hit.text))
        else:
            call = self._local_embed if self.settings.backend == "local" else self._openai_embed

            def commit(reply: Reply) -> None:
                answer = CachedAnswer(json.dumps(reply.vectors), None, reply.prompt_tokens, 0)
                self.cache.put(key, model_id=model, prompt="embeddings", request={"input": texts}, answer=answer)

            reply = await self._with_retries(lambda: call(model, texts), commit)
        self.usage.add(reply)
        return reply

    def redact(self, text: str) -> str:
        """``text`` with the API key and anything shaped like a key replaced by ``***``."""
        if self._secret:
            text = text.replace(self._secret, "***")
        return re.sub(r"\b(sk-[A-Za-z0-9_\-*]{6,})", "***", text)

    # --- retries -----------------------------------------------------------------------------
    async def _with_retries(self, call: Callable[[], Awaitable[Reply]], commit: Callable[[Reply], None]) -> Reply:
        """Call until it succeeds or the retries run out; ``commit`` stores a success before its slot frees,
        so a killed process loses at most the requests in flight."""
        attempts = 0
        last_reason = ""
        for attempt in range(self.settings.max_retries + 1):
            attempts += 1
            try:
                async with self._slots:
                    reply = await call()
                    commit(reply)
                reply.attempts = attempts
                return reply
            except _Fail as exc:
                return Reply("error", error=self.redact(str(exc)), attempts=attempts)
            except _Retry as exc:
                last_reason = self.redact(exc.reason)
                if attempt == self.settings.max_retries:
                    break
                delay = exc.delay if exc.delay is not None else self._backoff(attempt)
                log.info("retrying in %.2f s after: %s", delay, last_reason)
                await asyncio.sleep(delay)
        tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
        return Reply("error", error=f"gave up after {tries}: {last_reason}", attempts=attempts)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter."""
        ceiling = min(self.settings.backoff_max, self.settings.backoff_base * 2**attempt)
        return random.uniform(0, ceiling)

    # --- the OpenAI-compatible backend ----------------------------------------------------------
    def _client(self) -> Any:
        if self._openai is None:
            import openai

            self._openai = openai.AsyncOpenAI(
                base_url=self.settings.base_url,
                api_key=self.settings.api_key or "EMPTY",
                timeout=self.settings.timeout,
                max_retries=0,  # retries are ours: one policy, counted
                http_client=lean_http_client(openai, self.settings.timeout),
                default_headers=dict.fromkeys(TELEMETRY_HEADERS, openai.Omit()),
            )
            self._post_options = {"headers": dict.fromkeys(PER_REQUEST_TELEMETRY, openai.Omit())}
        return self._openai

    def _endpoint(self) -> str:
        if self.settings.backend == "local":
            return "local"
        return self.settings.base_url

    def _effective_sampling(self, sampling: dict[str, Any]) -> dict[str, Any]:
        """Reasoning models take no temperature-like settings and a larger token budget."""
        sampling = dict(sampling)
        if self.settings.reasoning:
            for name in ("temperature", "top_p", "frequency_penalty", "presence_penalty"):
                sampling.pop(name, None)
            budget = max(int(sampling.pop("max_tokens", 0) or 0), REASONING_MAX_TOKENS)
            sampling["max_completion_tokens"] = budget
        return sampling

    async def _openai_chat(self, messages: list[dict[str, Any]], sampling: dict[str, Any]) -> Reply:
        response = await self._request(
            "/chat/completions", {"model": self.settings.model_id, "messages": messages, **sampling}
        )
        try:
            message = response["choices"][0]["message"]
            text = message.get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise _Retry("malformed reply: no choices[0].message in the response") from None
        if not isinstance(text, str):
            raise _Retry("malformed reply: message content is not text")
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        usage = response.get("usage") or {}
        return Reply(
            "ok",
            text,
            reasoning if isinstance(reasoning, str) else None,
            prompt_tokens=_count(usage, "prompt_tokens"),
            completion_tokens=_count(usage, "completion_tokens"),
        )

    async def _openai_embed(self, model: str, texts: list[str]) -> Reply:
        response = await self._request("/embeddings", {"model": model, "input": texts})
        try:
            items = sorted(response["data"], key=lambda d: d["index"])
            vectors = [list(map(float, item["embedding"])) for item in items]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise _Retry("malformed reply: no embeddings in the response") from None
        if len(vectors) != len(texts):
            raise _Retry(f"malformed reply: {len(vectors)} embeddings for {len(texts)} inputs")
        return Reply("ok", prompt_tokens=_count(response.get("usage") or {}, "prompt_tokens"), vectors=vectors)

    async def _request(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST once through the openai client, mapping failures to _Retry / _Fail.

        The client's low-level ``post`` keeps its auth, base URL, time-out and error types but
        skips the typed parameter transformation of ``create()``, about 1 ms of CPU per request,
        which at 32 requests in flight is what bounds throughput on a small machine. Parameters
        the endpoint rejects are dropped (and said once).
        """
        import openai

        kwargs = {k: v for k, v in body.items() if k not in self.dropped}
        for _ in range(len(OPTIONAL_PARAMS) + 1):
            try:
                response = await self._client().post(path, body=kwargs, cast_to=object, options=self._post_options)
                if not isinstance(response, dict):
                    raise _Retry(f"malformed reply: expected a JSON object, got {type(response).__name__}")
                return response
            except openai.RateLimitError as exc:
                raise _Retry(f"429 rate limited: {server_message(exc)}", retry_after(exc.response)) from None
            except openai.APIConnectionError as exc:  # APITimeoutError too: aiohttp reports a refusal as one
                raise _Retry(connection_failure(exc, self.settings.base_url, self.settings.timeout)) from None
            except openai.APIStatusError as exc:
                if exc.status_code >= 500:
                    raise _Retry(
                        f"{exc.status_code} server error: {server_message(exc)}", retry_after(exc.response)
                    ) from None
                rejected = self._rejected_param(exc, kwargs)
                if rejected is None:
                    raise _Fail(f"{exc.status_code} from the endpoint: {server_message(exc)}") from None
                kwargs = {k: v for k, v in kwargs.items() if k != rejected}
            except (openai.APIResponseValidationError, json.JSONDecodeError, ValueError) as exc:
                raise _Retry(f"malformed reply: {type(exc).__name__}") from None
        raise _Fail("the endpoint rejected every optional parameter")  # pragma: no cover - bounded loop

    def _rejected_param(self, exc: Any, kwargs: dict[str, Any]) -> str | None:
        """The optional parameter a 400/422 complains about, remembered so it is dropped from now on."""
        if exc.status_code not in (400, 422):
            return None
        message = server_message(exc)
        for name in OPTIONAL_PARAMS:
            if name in kwargs and re.search(rf"\b{name}\b", message):
                if name not in self.dropped:
                    log.warning("the endpoint rejects '%s'; sending requests without it (%s)", name, message[:200])
                    self.dropped.add(name)
                return name
        return None

    # --- the local backend -----------------------------------------------------------------------
    async def _local_chat(self, messages: list[dict[str, Any]], sampling: dict[str, Any]) -> Reply:
        import anyio.to_thread

        from servers.core.llm import local

        async with self._local_lock:  # one model, one generation at a time
            if self._local is None:
                self._local = await anyio.to_thread.run_sync(local.load_chat_model, self.settings.model_id)
            max_tokens = int(sampling.get("max_tokens") or sampling.get("max_completion_tokens") or 256)
            text, n_in, n_out = await anyio.to_thread.run_sync(local.generate, self._local, messages, max_tokens)
        return Reply("ok", text, prompt_tokens=n_in, completion_tokens=n_out)

    async def _local_embed(self, model: str, texts: list[str]) -> Reply:
        import anyio.to_thread

        from servers.core.llm import local

        async with self._local_lock:
            vectors = await anyio.to_thread.run_sync(local.embed, self.settings.embedding_model, texts)
        return Reply("ok", vectors=vectors)


def _count(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return int(value) if isinstance(value, (int, float)) else 0
