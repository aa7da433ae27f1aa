"""Build an ``MCPServer`` for one server package: settings defaults, error mapping, annotations."""

from __future__ import annotations

import functools
import inspect
import logging
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
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
        tool = with_settings(fn, settings, context_type=Context, raise_as=ToolError)
        app.add_tool(tool, name=fn.__name__, annotations=annotations)
    return app


@dataclass(frozen=True)
class ServerSpec:
    """What ``build_server`` needs, importable without MCP so ``ultra call`` can run a tool in-process.

    ``load_tools`` imports the tool modules (which import no MCP at module level) and returns the
    tool functions; ``create_app`` builds the MCP server from them.
    """

    name: str
    package_dir: Path
    load_tools: Callable[[], Sequence[Callable[..., Any]]]
    instructions: str = ""

    def create_app(self) -> MCPServer:
        """The MCP server with every tool."""
        return build_server(self.name, self.load_tools(), package_dir=self.package_dir, instructions=self.instructions)

    def settings(self) -> dict[str, Any]:
        """The defaults from the package's ``parameter.yaml``."""
        return load_parameter_file(self.package_dir / PARAMETER_FILE)


def tool_settings(fn: Callable[..., Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The settings among ``fn``'s parameters, with their ``parameter.yaml`` defaults."""
    return {name: settings[name] for name in inspect.signature(fn).parameters if name in settings}


def with_settings(
    fn: Callable[..., Any],
    settings: dict[str, Any],
    *,
    context_type: type,
    raise_as: Callable[[str], Exception],
) -> Callable[..., Any]:
    """Wrap ``fn`` so its settings default to ``settings`` and a user's mistakes become ``raise_as(message)``.

    The wrapper has keyword-only parameters with resolved annotations, so the MCP SDK derives the
    same input schema as for ``fn`` except for the defaults. Tool modules import ``Context`` only
    for type checking; ``context_type`` is what the name ``Context`` in their annotations means
    (the SDK's class for a server, a placeholder for an in-process call).
    """
    hints = typing.get_type_hints(fn, localns={"Context": context_type}, include_extras=True)
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
            with _tool_errors(fn.__name__, raise_as):
                return await fn(**prepare(kwargs))
    else:

        def tool(**kwargs: Any) -> Any:
            with _tool_errors(fn.__name__, raise_as):
                return fn(**prepare(kwargs))

    functools.update_wrapper(tool, fn, assigned=("__module__", "__name__", "__qualname__", "__doc__"), updated=())
    tool.__signature__ = signature.replace(
        parameters=parameters, return_annotation=hints.get("return", signature.return_annotation)
    )
    tool.__annotations__ = dict(hints)
    return tool


def user_error_message(exc: BaseException) -> str | None:
    """The message for an exception that is the user's mistake (bad input, missing file), else None."""
    if isinstance(exc, InputError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"{exc.filename}: file not found; check the path"
    if isinstance(exc, PermissionError):
        return f"{exc.filename}: permission denied"
    return None


class _tool_errors:
    """Context manager mapping a user's mistakes to ``raise_as(message)``; everything else stays a crash."""

    def __init__(self, tool_name: str, raise_as: Callable[[str], Exception]) -> None:
        self.tool_name = tool_name
        self.raise_as = raise_as

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        if exc is None or (isinstance(self.raise_as, type) and isinstance(exc, self.raise_as)):
            return False
        message = user_error_message(exc)
        if message is not None:
            if isinstance(exc, InputError):
                log.info("%s: %s", self.tool_name, message)
            raise self.raise_as(message) from None
        log.exception("%s crashed", self.tool_name)
        return False
