"""Finding the servers the ``ultra`` commands start: the built-in ones, a pipeline's, their tool tables,
and the scratch folder their logs go to when no run folder holds them."""

from __future__ import annotations

import shutil
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path

from ultra_client.calls.server_info import ServerLocation, ToolInfo
from ultra_client.calls.server_pool import ULTRA_HOME, ServerPool, locate_server
from ultra_client.errors import UltraError, located
from ultra_client.pipeline.model import Pipeline


@asynccontextmanager
async def scratch_logs(command: str):
    """A temporary folder for server logs: removed unless a failure left a log with something in it.

    A kept log is named in the error (once), so no unnamed ``ultra-*-logs-*`` folder is left behind.
    """
    folder = Path(tempfile.mkdtemp(prefix=f"ultra-{command}-logs-"))
    keep = False
    try:
        yield folder
    except UltraError as exc:
        logs = logs_with_content(folder)
        keep = bool(logs)
        if logs and not any(log in str(exc) for log in logs):
            noted = type(exc).__new__(type(exc), f"{exc}\n  (log: {', '.join(logs)})")  # the log named ...
            noted.__dict__.update(exc.__dict__)  # ... the class and attributes kept (an exit code, a tool's reason)
            raise noted from None
        raise
    except BaseException:
        keep = bool(logs_with_content(folder))
        raise
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def logs_with_content(folder: Path) -> list[str]:
    try:
        return [str(log) for log in sorted(folder.iterdir()) if log.is_file() and log.stat().st_size]
    except OSError:
        return []


def builtin_servers(home: Path = ULTRA_HOME) -> dict[str, str]:
    """{name: relative path} of the server packages that ship with ultra (in the checkout ``home``)."""
    root = home / "servers"
    return {
        p.name: f"servers/{p.name}"
        for p in sorted(root.iterdir())
        if p.is_dir() and (p / "__init__.py").exists() and ((p / "server.py").exists() or (p / "__main__.py").exists())
    }


def locate_named_server(name: str) -> ServerLocation:
    """A built-in server by name, or a server package at a path; else an error listing the built-in servers."""
    builtins = builtin_servers()
    try:
        return locate_server(name, builtins.get(name, name), [Path.cwd()])
    except UltraError:
        if name in builtins:
            raise
    where = Path(name).expanduser()
    where = where if where.is_absolute() else Path.cwd() / where
    raise UltraError(
        f"server '{name}' does not exist: it is not a built-in server and there is no server package at {where}; "
        f"the built-in servers: {', '.join(builtins)}"
    )


def pipeline_locations(pipeline: Pipeline, stdio: bool = False) -> list[ServerLocation]:
    """Each server's package; a path that leads nowhere is an error at its line of the pipeline.

    ``stdio`` (``--stdio``), or ``transport: stdio`` on a server's entry, runs it as an MCP subprocess.
    """
    search = [Path.cwd(), pipeline.path.resolve().parent, pipeline.path.resolve().parent.parent]
    locations = []
    for alias, location in pipeline.servers.items():
        as_stdio = stdio or pipeline.transports.get(alias) == "stdio"
        try:
            locations.append(locate_server(alias, location, search, stdio=as_stdio))
        except UltraError as exc:
            raise located(pipeline.path, pipeline.server_lines.get(alias), str(exc)) from None
    return locations


def tool_table(pool: ServerPool) -> dict[str, dict[str, ToolInfo]]:
    return {alias: server.tools for alias, server in pool.servers.items()}
