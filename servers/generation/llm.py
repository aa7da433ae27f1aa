"""Generation over the shared LLM client (``ultra_llm``): settings, one client per process, batch answers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

PROMPT_VERSION = "generation"  # the rendered prompt text is in the messages, so it is part of the cache key


def llm_settings(*, generation_llm: dict[str, Any]):
    """Checked ``LLMSettings`` from the ``generation_llm`` setting; keys left out come from parameter.yaml.

    Errors name the setting and its keys (``generation_llm.timeout`` ...) as the user writes them.
    """
    from ultra_kit.llm_mapping import settings_for

    return settings_for(generation_llm, server="generation", setting="generation_llm")


_clients: dict[tuple[int, Any, str], Any] = {}


def shared_client(settings: Any, cache_path: str):
    """The LLMClient for a generate call.

    A local model is loaded once per server process: its client is kept per (event loop, settings,
    cache). An OpenAI-compatible client is cheap and holds connections, so each call gets its own
    and closes it (``owned`` is True).
    """
    from ultra_llm.cache import open_cache
    from ultra_llm.client import LLMClient

    if settings.backend != "local":
        return LLMClient(settings, open_cache(cache_path)), True
    key = (id(asyncio.get_running_loop()), settings, cache_path)
    client = _clients.get(key)
    if client is None:
        client = LLMClient(settings, open_cache(cache_path))
        _clients[key] = client
    return client, False


def messages_for(prompt: str, *, system_prompt: str) -> list[dict[str, str]]:
    """The chat messages of one prompt: an optional system message, then the prompt as the user's."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return messages + [{"role": "user", "content": prompt}]


@dataclass
class Generated:
    """One answer with its status and token counts."""

    answer: str
    status: str
    error: str | None
    prompt_tokens: int
    completion_tokens: int
    cached: bool


async def generate_all(
    client: Any,
    prompts: Sequence[str],
    sampling: dict[str, Any],
    *,
    system_prompt: str,
    on_done: Callable[[int, int], Awaitable[None]] | None = None,
) -> tuple[list[Generated], dict[str, int]]:
    """Answer every prompt (bounded concurrency in the client); returns answers in order and this call's usage."""
    from ultra_llm.client import Usage

    usage = Usage()
    done = 0

    async def one(prompt: str) -> Generated:
        nonlocal done
        reply = await client.chat(messages_for(prompt, system_prompt=system_prompt), sampling, prompt=PROMPT_VERSION)
        usage.add(reply)
        done += 1
        if on_done is not None:
            await on_done(done, len(prompts))
        ok = reply.status == "ok"
        return Generated(
            reply.text if ok else "",
            reply.status,
            None if ok else reply.error,
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.cached,
        )

    results = await asyncio.gather(*(one(p) for p in prompts))
    return list(results), usage.as_dict()
