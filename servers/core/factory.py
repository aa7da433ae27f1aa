"""Build an ``MCPServer`` for one server package: settings defaults, error mapping, annotations."""

from __future__ import annotations

import functools
import inspect
import logging
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from servers.core.errors import InputError
from servers.core.settings import expand_env, load_parameter_file

if typing.TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__version__ = "0.1.0"

log = logging.getLogger("ultra.server")

PARAMETER_FILE = "parameter.yaml"


def tool_hints(*, read_only: bool = False, idempotent: bool = True, open_world: bool = False) -> Callable:
    """Decorator recording MCP tool annotations on a tool function (read by ``build_server``)."""

    def mark(fn: Callable) -> Callable:
        fn.__tool_hints__ = {"read_only": read_only, "idempotent": idempotent, "open_world": open_world}
        return fn

    return mark


def build_server(
    name: str,
    tools: Sequence[Callable[..., Any]],
    *,
    package_dir: str | Path,
    instructions: str = "",
) -> MCPServer:
    """Create the MCP server ``name`` with ``tools``, defaults taken from ``package_dir/parameter.yaml``.

    A tool parameter whose name is a key of ``parameter.yaml`` is a *setting*: its default in the
    published input schema is the file's value, and ``${VAR}`` references in it are expanded from
    the environment when the tool is called. ``InputError`` (and ``FileNotFoundError``) raised by
    a tool reach the caller as ``ToolError`` with the same message.
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    settings = load_parameter_file(Path(package_dir) / PARAMETER_FILE)
    app = MCPServer(name, version=__version__, instructions=instructions or None)
    for fn in tools:
        hints = getattr(fn, "__tool_hints__", {"read_only": False, "idempotent": True, "open_world": False})
        annotations = ToolAnnotations(
            read_only_hint=hints["read_only"],
            idempotent_hint=hints["idempotent"],
            open_world_hint=hints["open_world"],
        )
        app.add_tool(with_settings(fn, settings), name=fn.__name__, annotations=annotations)
    return app


def tool_settings(fn: Callable[..., Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The settings among ``fn``'s parameters, with their ``parameter.yaml`` defaults."""
    return {name: settings[name] for name in inspect.signature(fn).parameters if name in settings}


def with_settings(fn: Callable[..., Any], settings: dict[str, Any]) -> Callable[..., Any]:
    """Wrap ``fn`` so its settings default to ``settings`` and expected failures become ToolError.

    The wrapper has keyword-only parameters with resolved annotations, so the MCP SDK derives the
    same input schema as for ``fn`` except for the defaults.
    """
    hints = typing.get_type_hints(fn, include_extras=True)
    signature = inspect.signature(fn)
    parameters = []
    for param in signature.parameters.values():
        default = settings.get(param.name, param.default)
        parameters.append(
            param.replace(
                kind=inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=hints.get(param.name, param.annotation),
            )
        )
    setting_names = {name for name in signature.parameters if name in settings}

    def prepare(kwargs: dict[str, Any]) -> dict[str, Any]:
        return {key: expand_env(value) if key in setting_names else value for key, value in kwargs.items()}

    if inspect.iscoroutinefunction(fn):

        async def tool(**kwargs: Any) -> Any:
            with _tool_errors(fn.__name__):
                return await fn(**prepare(kwargs))
    else:

        def tool(**kwargs: Any) -> Any:
            with _tool_errors(fn.__name__):
                return fn(**prepare(kwargs))

    functools.update_wrapper(tool, fn, assigned=("__module__", "__name__", "__qualname__", "__doc__"), updated=())
    tool.__signature__ = signature.replace(
        parameters=parameters, return_annotation=hints.get("return", signature.return_annotation)
    )
    tool.__annotations__ = dict(hints)
    return tool


class _tool_errors:
    """Context manager mapping a user's mistakes to ToolError; everything else stays a crash."""

    def __init__(self, tool_name: str) -> None:
        self.tool_name = tool_name

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        if exc is None:
            return False
        from mcp.server.mcpserver.exceptions import ToolError

        if isinstance(exc, ToolError):
            return False
        if isinstance(exc, InputError):
            log.info("%s: %s", self.tool_name, exc)
            raise ToolError(str(exc)) from None
        if isinstance(exc, FileNotFoundError):
            raise ToolError(f"{exc.filename}: file not found; check the path") from None
        if isinstance(exc, PermissionError):
            raise ToolError(f"{exc.filename}: permission denied") from None
        log.exception("%s crashed", self.tool_name)
        return False
