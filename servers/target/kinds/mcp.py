"""The ``mcp`` kind: a tool on another MCP server, started over stdio with ``command`` (the official SDK's client).

Each question calls ``tool`` with ``arguments`` (a mapping whose strings are Jinja templates, rendered value by
value in the sandbox, as the http kind's ``body``: ``question``, ``id``, ``history``, ``settings``). The reply
is the tool's structured result (else its text, read as JSON when it is JSON, else as a string: ``answer: '@'``);
``answer``, ``contexts``, ``context_text``, ``context_id``, ``context_score`` and ``citations`` are JMESPath
over it, as in the http kind. One session stays open per asker (calls share it concurrently); a server that
dies is started again on the next call; ``aclose`` stops it. A first word ``python`` runs the Python of ultra.

The server's environment is the SDK's safe set (``HOME``, ``PATH``, ...) plus ``env``, a mapping of names to
text (``${VAR}`` references expanded, their values kept out of every message, file and log). ``env``, like
``command``, comes from a parameter file only: a variable such as ``PYTHONPATH`` or ``LD_PRELOAD`` decides which
code runs. An error about it names the variable, never its value.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

from servers.target.kinds.base import KindContext, TargetCallError, TargetReply, TurnRequest
from servers.target.kinds.replies import ReplyPaths, load_json
from servers.target.kinds.templates import RequestTemplate
from ultra_base.errors import InputError

KEYS = (
    "command", "tool", "arguments", "env", "answer", "contexts", "context_text", "context_id", "context_score",
    "citations",
)  # fmt: skip
SUMMARY = "a tool on an MCP server started over stdio (`command`), called with `arguments`; JMESPath over its result"
START_TIMEOUT = 60.0  # seconds a server may take to start and list its tools
_LOG_TAIL = 600  # characters of the server's stderr a start failure shows
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def open_asker(target: Mapping[str, Any], context: KindContext) -> ToolAsker:
    """An asker calling ``target.tool`` on the server ``target.command`` starts (started on the first call)."""
    command = target.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(p, str) and p for p in command):
        raise InputError(f"target.command must be a list of words, e.g. [python, -m, my_rag.server]; got {command!r}")
    tool = target.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        raise InputError(f"target.tool must name the tool to call on that server; got {tool!r}")
    arguments = target.get("arguments")
    if not isinstance(arguments, Mapping):
        raise InputError(f"target.arguments must be a mapping of the tool's arguments; got {arguments!r}")
    template = RequestTemplate(dict(arguments), setting="target.arguments")
    return ToolAsker(command, tool.strip(), template, ReplyPaths.of(target), context, env=environment(target))


def environment(target: Mapping[str, Any]) -> dict[str, str]:
    """``target.env`` checked: names of environment variables to text (numbers written as text). Messages name
    the variable, never its value (which may be a secret)."""
    env = target.get("env") or {}
    if not isinstance(env, Mapping):
        raise InputError(f"target.env must be a mapping of variable names to values, got a {type(env).__name__}")
    out = {}
    for name, value in env.items():
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise InputError(f"target.env: {name!r} is not an environment variable name (letters, digits, _)")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InputError(f"target.env.{name} must be text or a number, got a {type(value).__name__}")
        if "\0" in str(value):
            raise InputError(f"target.env.{name} holds a NUL character")
        out[name] = str(value)
    return out


class ToolAsker:
    """One stdio session to the server, owned by a task of its own (the SDK's task groups stay in one task)."""

    def __init__(
        self, command: list[str], tool: str, arguments: RequestTemplate, paths: ReplyPaths, context: KindContext,
        *, env: Mapping[str, str] | None = None,
    ) -> None:  # fmt: skip
        self.command = [sys.executable if command[0] == "python" else command[0], *command[1:]]
        self.env = dict(env or {})  # added to the SDK's safe environment; never shown
        self.tool = tool
        self.arguments = arguments
        self.paths = paths
        self.context = context
        self._client: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._starting = asyncio.Lock()
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - the server's stderr; aclose closes it

    async def ask(self, request: TurnRequest) -> TargetReply:
        """The tool's result for ``request``, read with the JMESPath settings."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        client = await self._connected()
        try:
            result = await client.call_tool(
                self.tool, self.arguments.render(request), read_timeout_seconds=self.context.timeout
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._client = None  # dead: the next call starts the server again
                raise TargetCallError("connection", "the MCP server closed the connection", retryable=True) from None
            if exc.code == REQUEST_TIMEOUT:
                detail = f"no result within {self.context.timeout:g} s"
                raise TargetCallError("timeout", detail, retryable=True) from None
            raise TargetCallError("target_error", f"the MCP server refused the call: {str(exc)[:300]}") from None
        if result.is_error:
            raise TargetCallError("target_error", f"the tool failed: {_text(result)[:300]}")
        return self.paths.reply(self._document(result))

    def _document(self, result: Any) -> Any:
        if result.structured_content is not None:
            return result.structured_content
        text = _text(result)
        if text.lstrip()[:1] in ("{", "["):
            return load_json(text, max_bytes=self.context.max_response_bytes, max_depth=self.context.max_json_depth)
        return text

    async def _connected(self) -> Any:
        async with self._starting:
            if self._client is not None:
                return self._client
            if self._owner is not None:  # the last session ended: let its task finish first
                await self._stop()
            ready, self._closing = asyncio.Event(), asyncio.Event()
            errors: list[BaseException] = []
            self._owner = asyncio.create_task(self._serve(ready, self._closing, errors))
            try:
                await asyncio.wait_for(ready.wait(), START_TIMEOUT)
            except asyncio.TimeoutError:
                errors.append(TimeoutError(f"no tool list within {START_TIMEOUT:g} s"))
            if self._client is None:
                await self._stop()
                raise InputError(self._start_failure(errors))
            return self._client

    async def _serve(self, ready: asyncio.Event, closing: asyncio.Event, errors: list[BaseException]) -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=self.command[0], args=self.command[1:], cwd=os.getcwd(),
                                       env=self.env or None)  # fmt: skip
        try:
            async with Client(stdio_client(params, errlog=self._errlog)) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                if self.tool not in names:
                    errors.append(LookupError(f"the server has no tool {self.tool!r}; its tools: {names}"))
                    return
                self._client = client
                ready.set()
                await closing.wait()
        except Exception as exc:  # noqa: BLE001 - reported with the server's stderr when it happens at the start
            errors.append(exc)
        finally:
            self._client = None
            ready.set()

    def _start_failure(self, errors: list[BaseException]) -> str:
        reasons = "; ".join(dict.fromkeys(str(e) or type(e).__name__ for e in errors)) or "it exited"
        self._errlog.seek(0)
        tail = self._errlog.read()[-_LOG_TAIL:].strip()
        said = f"; its stderr ends: {tail}" if tail else "; it wrote nothing to stderr"
        return f"target.command {json.dumps(self.command)} did not give a usable MCP server: {reasons}{said}"

    async def _stop(self) -> None:
        owner, self._owner = self._owner, None
        if self._closing is not None:
            self._closing.set()
        if owner is not None:
            await owner

    async def aclose(self) -> None:
        """Stop the server (its session ends in the task that opened it)."""
        async with self._starting:
            await self._stop()
        self._errlog.close()


def _text(result: Any) -> str:
    """The text blocks of a tool result, joined."""
    return "".join(getattr(block, "text", "") for block in result.content or ())
