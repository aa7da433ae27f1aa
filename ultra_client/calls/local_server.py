"""A server whose tools run in this process (through its ``SPEC``), called as the pool calls a stdio server.

``ultra run`` uses it by default: no subprocess, no MCP SDK, the same tool functions, defaults and
argument checks (``ultra_kit.inprocess``). What a stdio server gives for free is kept:

- a log file per server (``logs/<alias>.log`` in the run folder): the tool's log records and the
  traceback of a crash go there, and a crash is reported with its last line and the log's path;
- ``${VAR}`` values the settings reference are never echoed (``ultra_base.redact``);
- a step ``timeout`` still ends a hung step. A sync tool runs in a worker thread, which Python
  cannot stop: the step fails at once with its name, and ``ultra`` then exits the process
  (``HungStep``), since the thread would otherwise keep it alive.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ultra_client.calls.server_info import ServerLocation, ToolInfo
    from ultra_kit.factory import ServerSpec
    from ultra_kit.inprocess import LocalTool


def last_lines(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a log file ('' when it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


class ToolRefused(Exception):
    """The tool answered with an error (the user's mistake): the message an MCP client would show."""


class ToolCrashed(Exception):
    """An in-process tool raised an unexpected exception; its traceback is in the server's log."""


class HungStep(Exception):
    """An in-process step passed its timeout while its thread may still run: ``ultra`` reports it and exits.

    Not an UltraError, so a sweep does not go on to its next trial beside the busy thread.
    """


@dataclass
class LocalServer:
    """A server package loaded in this process: its tools, its settings and its log file."""

    location: ServerLocation
    log_path: Path
    settings: dict[str, Any]
    spec: ServerSpec
    secrets: set[str] = field(default_factory=set)
    tools: dict[str, ToolInfo] = field(default_factory=dict)
    local: dict[str, LocalTool] = field(default_factory=dict)
    transport = "in-process"

    def learn(self) -> LocalServer:
        """Wrap the tools as ``build_server`` does and list them: what the start-up checks read. Nothing is
        written (``ultra_client.calls.described``: a stdio server's description, before it starts)."""
        from ultra_client.calls.server_info import ToolInfo
        from ultra_kit.inprocess import local_tools

        self.local = local_tools(self.spec)
        self.tools = {
            name: ToolInfo(
                t.name,
                t.description,
                t.parameters,
                t.required,
                t.outputs,
                t.settings,
                required_outputs=t.required_outputs,
                outputs_from=t.outputs_from,
                own_env=t.own_env,
            )
            for name, t in self.local.items()
        }
        return self

    def start(self) -> None:
        """Wrap the tools and name the secrets; create the (empty) log file."""
        from ultra_base import redact
        from ultra_kit.settings import env_references

        self.learn()
        redact.remember_environment(env_references(self.settings) | self.secrets)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.touch()

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None, progress: Any) -> dict[str, Any]:
        """The tool's structured result; ToolRefused, ToolCrashed or TimeoutError otherwise."""
        import anyio

        from ultra_kit.inprocess import ProgressContext, ToolFailure, call_local_tool
        from ultra_kit.wrapping.errors import ToolCrash

        if tool not in self.local:
            raise ToolRefused(f"Unknown tool: {tool}")
        with _logging_to(self.log_path) as handler:
            try:
                with anyio.fail_after(timeout):
                    return await call_local_tool(
                        self.local[tool], args, context=ProgressContext(progress), abandon_on_cancel=True
                    )
            except ToolFailure as exc:
                raise ToolRefused(str(exc)) from None
            except TimeoutError:
                raise
            except ToolCrash:  # the tool's wrapper logged the traceback
                raise ToolCrashed(f"in tool {tool}") from None
            except Exception:  # noqa: BLE001 - a crash outside the tool function: its traceback goes to the log
                from ultra_base.redact import redact_text

                handler.stream.write(redact_text(traceback.format_exc()))
                raise ToolCrashed(f"in tool {tool}") from None

    def log_tail(self, lines: int = 25) -> str:
        return last_lines(self.log_path, lines)


class _logging_to:
    """Send log records (INFO and up) to ``path`` while a tool runs."""

    def __init__(self, path: Path) -> None:
        self.handler = logging.FileHandler(path, encoding="utf-8")
        self.handler.setLevel(logging.INFO)
        self.handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self.root = logging.getLogger()
        self.level = self.root.level

    def __enter__(self) -> logging.FileHandler:
        self.root.addHandler(self.handler)
        if self.level > logging.INFO or self.level == logging.NOTSET:
            self.root.setLevel(logging.INFO)
        return self.handler

    def __exit__(self, *exc_info: object) -> None:
        self.root.removeHandler(self.handler)
        self.root.setLevel(self.level)
        self.handler.close()


def load_local(location: ServerLocation, log_path: Path, settings: dict[str, Any], secrets: set[str]):
    """A started LocalServer for ``location``, or None when the package has no importable ``SPEC``."""
    from ultra_kit.inprocess import load_spec

    spec = load_spec(location.module, location.root)
    if spec is None:
        return None
    server = LocalServer(location, log_path, settings, spec, set(secrets))
    server.start()
    return server
