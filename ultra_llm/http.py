"""The one place that reaches into httpx's private attributes: a leaner ``send`` for the openai client.

The openai package's aiohttp transport costs about half the CPU per request of the default httpx
transport, which bounds throughput at 32 requests in flight on a small machine. Our ``send`` goes
straight to the transport (``AsyncClient._transport``, ``AsyncClient._set_timeout``), skipping the
generic client's auth, cookie and redirect layers (another ~0.1 ms per request). When a future
httpx renames those attributes, ``send`` falls back to the public path, and
``tests/llm/test_http.py`` fails so that someone looks.
"""

from __future__ import annotations

from typing import Any

PRIVATE_ATTRIBUTES = ("_transport", "_set_timeout")


def has_private_path(client: Any) -> bool:
    """Whether ``client`` still has the httpx internals the lean path uses."""
    return all(hasattr(client, name) for name in PRIVATE_ATTRIBUTES)


def lean_http_client(openai: Any, timeout: float) -> Any:
    """An ``openai.DefaultAioHttpClient`` with the lean ``send``, or None without the ``aiohttp`` extra."""
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return None

    class LeanAioHttpClient(openai.DefaultAioHttpClient):
        async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            if kwargs or not has_private_path(self):
                return await super().send(request, stream=stream, **kwargs)
            self._set_timeout(request)
            response = await self._transport.handle_async_request(request)
            response.request = request
            if response.is_redirect:
                await response.aclose()
                return await super().send(request, stream=stream)
            if not stream:
                try:
                    await response.aread()
                except BaseException:
                    await response.aclose()
                    raise
            return response

    try:
        return LeanAioHttpClient(timeout=timeout)
    except RuntimeError:
        return None
