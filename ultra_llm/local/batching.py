"""Batched generation for the local backend: concurrent chat requests share one forward pass per step.

A CPU decoding step of a small model costs about the same for one row as for eight, so requests made
at the same time (an answer judge gathers all its items at once) are generated together, left-padded,
by ``local.generate_batch``. Requests join a batch when they share a token budget and sampling; greedy
decoding gives each row the text it would get alone (up to floating-point ties). A row with a JSON
schema is decoded under it, whatever the other rows do (``local_schema``).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

MAX_BATCH = 8  # rows generated together; more rows pad more and gain less on 2 cores

Schema = dict[str, Any] | None
Waiting = tuple[list[dict[str, Any]], tuple[int, float, float], "asyncio.Future[tuple[str, int, int]]", Schema]


class Batcher:
    """The chat requests waiting for one local model in one event loop, drained batch by batch."""

    def __init__(self, model_id: str, max_batch: int = MAX_BATCH) -> None:
        self.model_id = model_id
        self.max_batch = max_batch
        self.waiting: list[Waiting] = []
        self.draining = False

    async def chat(
        self, messages: list[dict[str, Any]], budget: tuple[int, float, float], schema: Schema = None
    ) -> tuple[str, int, int]:
        """(text, prompt tokens, completion tokens) of ``messages``; ``budget``: (max tokens, temperature, top_p);
        ``schema``: the JSON schema the reply is decoded under, if any."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[str, int, int]] = loop.create_future()
        self.waiting.append((messages, budget, future, schema))
        if not self.draining:
            self.draining = True
            loop.create_task(self._drain())
        return await future

    def _next_batch(self) -> list[Waiting]:
        budget = self.waiting[0][1]
        batch = [w for w in self.waiting if w[1] == budget][: self.max_batch]
        self.waiting = [w for w in self.waiting if all(w is not b for b in batch)]
        return [b for b in batch if not b[2].done()]  # a cancelled caller needs no answer

    async def _drain(self) -> None:
        import anyio.to_thread

        from ultra_llm.local import models as local

        try:
            await asyncio.sleep(0)  # the requests made in the same turn join the first batch
            loaded = await anyio.to_thread.run_sync(local.load_chat_model, self.model_id)
            while self.waiting:
                batch = self._next_batch()
                if not batch:
                    continue
                max_tokens, temperature, top_p = batch[0][1]
                schemas = [row[3] for row in batch]
                constrained = {"schemas": schemas} if any(schemas) else {}
                run = functools.partial(local.generate_batch, temperature=temperature, top_p=top_p, **constrained)
                try:
                    results = await anyio.to_thread.run_sync(run, loaded, [row[0] for row in batch], max_tokens)
                except Exception as exc:  # noqa: BLE001 - every caller of the batch gets it
                    _fail(batch, exc)
                    continue
                for (_, _, future, _), result in zip(batch, results, strict=True):
                    if not future.done():
                        future.set_result(result)
        except BaseException as exc:  # the model failed to load, or the loop is closing
            _fail(self.waiting, exc if isinstance(exc, Exception) else RuntimeError("local generation was stopped"))
            self.waiting = []
            if not isinstance(exc, Exception):
                raise
        finally:
            self.draining = False


def _fail(rows: list[Waiting], exc: Exception) -> None:
    for _, _, future, _ in rows:
        if not future.done():
            future.set_exception(exc)


_batchers: dict[tuple[int, str], Batcher] = {}


async def chat(
    model_id: str,
    messages: list[dict[str, Any]],
    max_tokens: int,
    *,
    temperature: float,
    top_p: float,
    schema: Schema = None,
) -> tuple[str, int, int]:
    """The local model's completion of ``messages`` (under the JSON ``schema``, if any), generated in a batch
    with the requests made meanwhile."""
    key = (id(asyncio.get_running_loop()), model_id)
    batcher = _batchers.get(key)
    if batcher is None:
        batcher = _batchers[key] = Batcher(model_id)
    return await batcher.chat(messages, (max_tokens, temperature, top_p), schema)
