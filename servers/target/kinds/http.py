"""The ``http`` kind: a JSON service (or one that streams server-sent events) asked with a templated body.

Headers go only to the host of ``url``: a redirect to another host (scheme, name or port) is followed without
them. Redirects are followed by hand (at most ``MAX_REDIRECTS``) so that this holds. The reply is read up to
``max_response_bytes``, parsed within ``max_json_depth``, and read with the JMESPath expressions of the target.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from servers.target import fastjson
from servers.target.kinds.base import KindContext, TargetCallError, TargetReply, TurnRequest
from servers.target.kinds.replies import ReplyPaths, load_json
from servers.target.kinds.templates import RequestTemplate
from ultra_base.errors import InputError

KEYS = ("url", "method", "headers", "body", "answer", "contexts", "context_text", "context_id", "context_score",
        "citations", "stream", "stream_delta")  # fmt: skip
SUMMARY = "a JSON service (or server-sent events): `body` rendered per question, the reply read with JMESPath"
METHODS = ("POST", "GET", "PUT")
MAX_REDIRECTS = 5
CHUNK = 65536


def open_asker(target: Mapping[str, Any], context: KindContext) -> HttpAsker:
    """An asker for ``target`` (checked here: url, method, headers, body, paths)."""
    return HttpAsker(target, context)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``: what headers are bound to."""
    parts = urlsplit(url)
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delay seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class HttpAsker:
    """One aiohttp session for the whole run (its connections reused)."""

    def __init__(self, target: Mapping[str, Any], context: KindContext) -> None:
        url = target.get("url")
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise InputError(f"target.url must be an http:// or https:// address, got {url!r}")
        method = str(target.get("method") or "POST").upper()
        if method not in METHODS:
            raise InputError(f"target.method must be one of {', '.join(METHODS)}, got {target.get('method')!r}")
        headers = target.get("headers") or {}
        if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
            raise InputError("target.headers must be a mapping of header name to text")
        body = target.get("body")
        if method == "GET" and not isinstance(body, (Mapping, type(None))):
            raise InputError("target.body of a GET request must be a mapping (sent as the query string)")
        self.url, self.method, self.headers = url, method, {str(k): v for k, v in headers.items()}
        self.body = RequestTemplate(body, setting="target.body") if body not in (None, "") else None
        self.stream = bool(target.get("stream"))
        self.paths = ReplyPaths.of(target, answer_required=not self.stream)
        self.delta = _compiled(target.get("stream_delta"), "stream_delta") if self.stream else None
        if self.stream and self.delta is None:
            raise InputError("target.stream is true but target.stream_delta is empty; give the JMESPath of each piece")
        self.context = context
        self._session: Any = None
        self._timeout: Any = None  # aiohttp.ClientTimeout, made with the session (aiohttp is imported late)
        typed = self.body is None or method == "GET" or any(k.lower() == "content-type" for k in self.headers)
        self._headers_of = {  # by the rendered body's type: the Content-Type it goes with, unless headers name one
            kind: self.headers if typed else {**self.headers, "Content-Type": value}
            for kind, value in ((str, "text/plain; charset=utf-8"), (object, "application/json"))
        }

    async def _open(self) -> Any:
        import aiohttp

        if self._session is None:
            connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(connector=connector, auto_decompress=True)
            self._timeout = aiohttp.ClientTimeout(total=self.context.timeout)
        return self._session

    async def ask(self, request: TurnRequest) -> TargetReply:
        """Send ``request``; the reply read, or ``TargetCallError``."""
        import aiohttp

        session = await self._open()
        method, url = self.method, self.url
        kwargs, headers = self._payload(request)  # headers: shared, never changed (a redirect copies them)
        timeout = self._timeout
        try:
            for _ in range(MAX_REDIRECTS + 1):
                async with session.request(
                    method, url, headers=headers, allow_redirects=False, timeout=timeout, **kwargs
                ) as response:
                    if response.status in (301, 302, 303, 307, 308) and "Location" in response.headers:
                        url, method, headers, kwargs = self._redirected(response, url, method, headers, kwargs)
                        continue
                    return await self._read(response)
            raise TargetCallError("http_status", f"more than {MAX_REDIRECTS} redirects")
        except TargetCallError:
            raise
        except asyncio.TimeoutError:
            raise TargetCallError(
                "timeout", f"no complete reply within {self.context.timeout:g} s", retryable=True
            ) from None
        except aiohttp.ClientPayloadError as exc:
            reason, what = ("unreadable", "the event stream was cut mid-way") if self.stream else (
                "connection", "the connection closed before the whole reply arrived")  # fmt: skip
            raise TargetCallError(reason, f"{what} ({type(exc).__name__})", retryable=True) from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientOSError) as exc:
            raise TargetCallError("connection", f"{type(exc).__name__}: {_first_line(exc)}", retryable=True) from None
        except aiohttp.ClientError as exc:
            raise TargetCallError("connection", f"{type(exc).__name__}: {_first_line(exc)}", retryable=True) from None

    def _payload(self, request: TurnRequest) -> tuple[dict[str, Any], dict[str, str]]:
        """The request's body as aiohttp arguments, and the headers it goes with."""
        if self.body is None:
            return {}, self._headers_of[object]
        rendered = self.body.render(request)
        if self.method == "GET":
            params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in rendered.items()}
            return {"params": params}, self._headers_of[object]
        if isinstance(rendered, str):
            return {"data": rendered.encode()}, self._headers_of[str]
        return {"data": fastjson.dumps(rendered)}, self._headers_of[object]

    def _redirected(self, response: Any, url: str, method: str, headers: dict[str, str], kwargs: dict[str, Any]):
        """The next request of a redirect: another origin gets none of the configured headers."""
        location = urljoin(url, response.headers["Location"])
        if urlsplit(location).scheme not in ("http", "https"):
            raise TargetCallError("http_status", f"a redirect to a non-http address ({response.status})")
        if origin(location) != origin(self.url):
            headers = {k: v for k, v in headers.items() if k not in self.headers}
        if response.status in (301, 302, 303) and method != "GET":
            method, kwargs = "GET", {}
            headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        return location, method, headers, kwargs

    async def _read(self, response: Any) -> TargetReply:
        if not 200 <= response.status < 300:
            await self._drain(response)
            retryable = response.status == 429 or response.status >= 500
            wait = retry_after(response.headers.get("Retry-After"))
            raise TargetCallError("http_status", f"HTTP {response.status}", retryable=retryable, retry_after=wait)
        if self.stream:
            return await self._read_stream(response)
        data = await self._body(response)
        return self.paths.reply(load_json(data, max_bytes=self.context.max_response_bytes,
                                          max_depth=self.context.max_json_depth))  # fmt: skip

    async def _body(self, response: Any) -> bytes:
        limit = self.context.max_response_bytes
        length = response.content_length
        if length is not None and length > limit:
            raise TargetCallError("unreadable", f"the reply is {length} bytes, more than max_response_bytes {limit}")
        if length is not None and "Content-Encoding" not in response.headers:  # read as sent: at most length
            return await response.read()
        chunks, size = [], 0
        async for chunk in response.content.iter_chunked(CHUNK):
            size += len(chunk)
            if size > limit:
                raise TargetCallError("unreadable", f"the reply is more than max_response_bytes {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _drain(self, response: Any) -> None:
        with contextlib.suppress(Exception):  # the status is what the caller learns
            await response.content.read(min(self.context.max_response_bytes, 65536))

    async def _read_stream(self, response: Any) -> TargetReply:
        """Server-sent events read to the end: the answer is the pieces ``stream_delta`` selects, joined; the
        passages and citations those of the last event that has them."""
        limit, depth = self.context.max_response_bytes, self.context.max_json_depth
        pieces: list[str] = []
        last_with_passages: Any = None
        size = 0
        async for raw in response.content:
            size += len(raw)
            if size > limit:
                raise TargetCallError("unreadable", f"the event stream is more than max_response_bytes {limit} bytes")
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            event = load_json(data, max_bytes=limit, max_depth=depth)
            piece = self.delta.search(event)
            if isinstance(piece, str):
                pieces.append(piece)
            if self.paths.passages(event) or self.paths.citation_list(event):
                last_with_passages = event
        reply = self.paths.reply(last_with_passages, answer="".join(pieces)) if last_with_passages is not None else None
        return reply or TargetReply("".join(pieces))

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _compiled(text: Any, key: str) -> Any:
    import jmespath
    from jmespath.exceptions import JMESPathError

    if not text:
        return None
    try:
        return jmespath.compile(str(text))
    except JMESPathError as exc:
        raise InputError(f"target.{key} is not a JMESPath expression: {text!r} ({exc})") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [""])[0][:200]
