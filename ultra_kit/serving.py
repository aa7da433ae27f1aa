"""The MCP server class of every ultra server: the SDK's ``MCPServer``, serving stdio, with these additions.

- ``$ULTRA_HOME``, when set, becomes the working directory when serving starts
  (``ultra_kit.paths.project_root.enter_project_root``).
- A failure outside a tool's body says why (the SDK's own message is the bare ``Error executing tool <name>``): a
  result that does not match the declared result type names the keys and what is wrong (``unexpected_reason``).
- Unknown arguments are rejected, naming the closest parameter (``ultra_kit.wrapping.argument_check.ArgumentCheck``),
  and every input schema says ``additionalProperties: false``.
- The lifeline (``ultra_kit.lifeline``) is installed when stdio serving starts, so a server
  whose client died stops even in the middle of a tool. When stdin closes (the client's way of
  stopping a stdio server) while a tool is still running, the server stops at once as on SIGTERM
  (``lifeline.stop_now``) instead of finishing a result nobody will read: the SDK's client would
  otherwise wait 2 s before sending SIGTERM.
- A line on stdin that is not a JSON-RPC message (not JSON, binary, nested deeper than the JSON
  parser allows) gets a JSON-RPC error reply with id null, ``-32700 Parse error`` for text that is
  not JSON, ``-32600 Invalid Request`` for JSON that is not a message, and a warning in the log.
  A request (``method`` and ``id``) nested deeper than the SDK's parser allows, at any depth, gets
  ``-32602 Invalid params`` with its id, naming the depth and the limit, so that its client stops waiting
  at once (its top level is read without recursion, ``top_level_members``).
  The SDK's stdio transport turns such a line into an exception item that its dispatcher drops
  silently; here the item is answered before the dispatcher sees it. This reads the SDK's
  ``MCPServer._lowlevel_server`` (the one thing ``run_stdio_async`` itself uses); if a future SDK
  lacks it, serving falls back to the SDK's own loop (lines dropped, the server still survives).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
from typing import Any

from ultra_kit import lifeline

log = logging.getLogger("ultra.server")
_running = [0]  # tool calls in progress in this process (the event loop's thread only)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@functools.cache
def server_class() -> type:
    """``MCPServer`` with the stdio additions (built on first use: importing the SDK takes a while)."""
    from mcp.server.mcpserver import MCPServer

    class UltraServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            """The SDK's ``call_tool``; arguments that fail the input schema are described in one sentence."""
            from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
            from pydantic import ValidationError

            check = getattr(self, "argument_checks", {}).get(name)  # unknown names (the SDK drops them unseen)
            problem = check.problem(arguments or {}) if check is not None else None
            if problem:
                raise ToolError(f"Error executing tool {name}: {problem}")
            arguments = typed_arguments(self, name, arguments)
            _running[0] += 1
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError as exc:  # outside the tool's body (the kit maps the body's own crashes)
                raise ToolError(f"Error executing tool {name}: {unexpected_reason(name, exc.__cause__)}") from exc
            except ToolError as exc:
                cause = exc.__cause__
                if not isinstance(cause, ValidationError):
                    raise
                from ultra_kit.validation import describe_errors

                schema = next((tool.input_schema for tool in await self.list_tools() if tool.name == name), {})
                raise ToolError(
                    f"Error executing tool {name}: {describe_errors(cause.errors(), schema or {}, arguments)}"
                ) from cause
            finally:
                _running[0] -= 1

        async def list_tools(self) -> list[Any]:
            """The SDK's listing; each input schema says ``additionalProperties: false`` (``call_tool`` enforces it)."""
            tools = await super().list_tools()
            return [
                tool.model_copy(update={"input_schema": {**tool.input_schema, "additionalProperties": False}})
                for tool in tools
            ]

        async def run_stdio_async(self) -> None:
            from ultra_kit.paths.project_root import enter_project_root

            enter_project_root()
            lifeline.install()
            lowlevel = getattr(self, "_lowlevel_server", None)
            if lowlevel is None or not hasattr(lowlevel, "create_initialization_options"):
                await super().run_stdio_async()
                return
            await serve_stdio(lowlevel)

    return UltraServer


def typed_arguments(app: Any, name: str, arguments: dict[str, Any] | None) -> dict[str, Any] | None:
    """The call's arguments with a setting typed int/float/bool written as one ``${VAR}`` read as its kind
    (``ultra_kit.wrapping.typed_settings``), before the SDK validates them; ToolError naming the reference."""
    from mcp.server.mcpserver.exceptions import ToolError

    from ultra_base.errors import InputError
    from ultra_kit.wrapping.typed_settings import read_arguments

    kinds = getattr(app, "typed_settings", {}).get(name)
    if not kinds or not arguments:
        return arguments
    try:
        return read_arguments(arguments, kinds)
    except InputError as exc:
        raise ToolError(f"Error executing tool {name}: {exc}") from None


def unexpected_reason(name: str, cause: BaseException | None) -> str:
    """Why the SDK failed a call outside the tool's body, for its caller (the traceback goes to the log): a result
    that does not match the declared result type (a bug in the tool) names each key and what is wrong with it."""
    from pydantic import ValidationError

    log.error("%s failed outside its body", name, exc_info=cause)
    if isinstance(cause, ValidationError):
        problems = [
            f"{'.'.join(map(str, e.get('loc') or ())) or 'the result'}: {e.get('msg', '')}" for e in cause.errors()
        ]
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        return f"its result does not match its declared result type (a bug in the tool): {shown}"
    text = str(cause or "").strip()
    kind = type(cause).__name__ if cause is not None else "an error"
    return f"unexpected error: {kind}: {text}" if text else f"unexpected error: {kind}"


async def serve_stdio(lowlevel: Any) -> None:
    """Serve ``lowlevel`` (the SDK's low-level server) over stdio, answering unreadable lines."""
    import anyio
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream(0)
        async with anyio.create_task_group() as group:
            group.start_soon(_forward, read_stream, send, write_stream)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()


async def _forward(read_stream: Any, send: Any, write_stream: Any) -> None:
    """Pass messages on; answer the exceptions that stand for unreadable lines."""
    import anyio

    try:
        async with send:
            async for item in read_stream:
                if isinstance(item, Exception):
                    await _answer_unreadable(item, write_stream)
                else:
                    await send.send(item)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
    if _running[0]:
        log.warning("stdin closed while %d tool call(s) ran; stopping now", _running[0])
        lifeline.stop_now()


async def _answer_unreadable(exc: Exception, write_stream: Any) -> None:
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    code, message = _classify(exc)
    request_id, depth = _too_deep_request(exc) if code == PARSE_ERROR else (None, 0)
    first_line = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
    data = {}  # the error's data, when it has some (an unset field is left out of the reply)
    if request_id is not None:
        limit = parser_depth_limit()
        code, data = INVALID_PARAMS, {"data": {"depth": depth, "max_depth": limit}}
        message = (
            f"Invalid params: the request is nested {depth} levels deep; this server reads at most {limit} levels "
            "(the limit of the MCP SDK's JSON parser)"
        )
        log.warning("stdin: a line nested %d levels deep (request id %r); answered %d", depth, request_id, code)
    else:
        log.warning("stdin: a line that is not a JSON-RPC message (%s); answered %d %s", first_line, code, message)
    error = mcp_types.ErrorData(code=code, message=message, **data)
    reply = mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await write_stream.send(SessionMessage(reply))


def _too_deep_request(exc: Exception) -> tuple[int | str | None, int]:
    """(id, nesting depth) of a request the SDK's parser refused as too deep, at any depth (a line too deep for
    the ``json`` module too is read without recursion); (None, 0) for anything else (not JSON, not a request)."""
    import json

    errors = exc.errors() if callable(getattr(exc, "errors", None)) else []  # type: ignore[attr-defined]
    line = next((e.get("input") for e in errors if isinstance(e, dict) and isinstance(e.get("input"), str)), None)
    scanned = top_level_members(line) if line is not None else None
    if scanned is None:
        return None, 0
    members, depth = scanned
    method, request_id = (json.loads(members.get(key) or "null") for key in ("method", "id"))
    if not isinstance(method, str) or isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None, 0
    return (request_id, depth) if depth > parser_depth_limit() else (None, 0)


_WS = r"[ \t\n\r]*"
_STRING = r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"'
_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_VALUE = re.compile(_WS + rf"(?:({_STRING}|{_NUMBER}|true|false|null)|([\[{{]))")  # 1: a scalar; 2: a bracket
_KEY = re.compile(_WS + rf"({_STRING}){_WS}:")
_AFTER = re.compile(_WS + r"([,\]}]|\Z)")
_EMPTY = re.compile(_WS + r"[\]}]")


def top_level_members(text: str) -> tuple[dict[str, str | None], int] | None:
    """The members of the JSON object ``text`` as {key: the value's JSON text, or None for an array or object},
    and its nesting depth (a scalar is 0); None if ``text`` is not strict JSON (NaN is not) or not an object.

    Read token by token with a stack of open brackets, never recursing, so any depth is read (a million levels
    in about a second).
    """
    stack: list[str] = []
    members: dict[str, str | None] = {}
    deepest, position, key = 0, 0, ""
    while True:  # at a value
        value = _VALUE.match(text, position)
        if value is None:
            return None
        position = value.end()
        if stack == ["{"]:
            members[key] = value.group(1)
        opening = value.group(2)
        if opening:
            stack.append(opening)
            deepest = max(deepest, len(stack))
            empty = _EMPTY.match(text, position)
            if empty and text[empty.end() - 1] == ("]" if opening == "[" else "}"):
                position = empty.end()
                stack.pop()
            elif opening == "{":
                found = _KEY.match(text, position)
                if found is None:
                    return None
                position, key = found.end(), (json.loads(found.group(1)) if len(stack) == 1 else key)
                continue
            else:
                continue
        while True:  # after a value: a comma, a closing bracket or the end
            after = _AFTER.match(text, position)
            if after is None:
                return None
            position, mark = after.end(), after.group(1)
            if not stack:
                return (members, deepest) if mark == "" and text.lstrip(" \t\n\r")[:1] == "{" else None
            if mark == ",":
                if stack[-1] == "{":
                    found = _KEY.match(text, position)
                    if found is None:
                        return None
                    position, key = found.end(), (json.loads(found.group(1)) if len(stack) == 1 else key)
                break
            if mark != ("]" if stack[-1] == "[" else "}"):
                return None
            stack.pop()


@functools.cache
def parser_depth_limit() -> int:
    """The deepest nesting (as ``top_level_members`` counts it) of a value the SDK's JSON-RPC parser reads, found
    by trying it (about a millisecond, once)."""
    import mcp_types

    def reads(depth: int) -> bool:
        try:
            mcp_types.jsonrpc_message_adapter.validate_json("[" * depth + "0" + "]" * depth, by_name=False)
        except Exception as exc:  # noqa: BLE001 - any error but a JSON one means the text was read
            return _classify(exc)[0] != PARSE_ERROR
        return True

    low, high = 1, 1 << 16  # reads(low) holds; reads(high) is assumed not to
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if reads(middle) else (low, middle)
    return low


def _classify(exc: Exception) -> tuple[int, str]:
    """-32700 for text that is not JSON (or too deep to parse), -32600 for JSON that is not a message."""
    errors = getattr(exc, "errors", None)
    kinds: set[str] = set()
    if callable(errors):
        try:
            kinds = {str(error.get("type", "")) for error in errors()}
        except Exception:  # noqa: BLE001 - an exception without pydantic's errors() is a parse error
            kinds = set()
    if not kinds or kinds & {"json_invalid", "recursion_loop"}:
        return PARSE_ERROR, "Parse error"
    return INVALID_REQUEST, "Invalid Request"
