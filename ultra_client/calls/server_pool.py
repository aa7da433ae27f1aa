"""Find server packages, start them (in this process, or as stdio subprocesses), and learn their tools."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from ultra_base.file_limits import loads_limited
from ultra_client.calls.local_server import last_lines
from ultra_client.calls.server_info import ServerLocation, ToolInfo
from ultra_client.errors import UltraError

ULTRA_HOME = Path(__file__).resolve().parents[2]
PASSTHROUGH_ENV = (
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_HOME",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "OMP_NUM_THREADS",
    "TMPDIR",
    "VIRTUAL_ENV",
    "CUDA_VISIBLE_DEVICES",
    "ULTRA_ALLOW_OUTSIDE_OUTPUT",
    "ULTRA_HOME",
    "ULTRA_READ_ROOTS",
    "ULTRA_ALLOW_OUTSIDE_READS",
    "ULTRA_LLM_ESTIMATE",  # ultra run --estimate: a stdio server's LLM client sends nothing either
)
START_TIMEOUT = 120.0


def log_name(alias: str) -> str:
    """``alias`` as a file name in a log folder (``ultra call`` takes a server's path: ``servers/mine``)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in alias) or "server"


def locate_server(alias: str, location: str, search_dirs: list[Path], stdio: bool = False) -> ServerLocation:
    """Resolve a server path from the pipeline (relative to the working directory, the pipeline, or ultra)."""
    raw = Path(location).expanduser()
    candidates = [raw] if raw.is_absolute() else [base / raw for base in [*search_dirs, ULTRA_HOME]]
    for candidate in candidates:
        if candidate.is_dir() and ((candidate / "__main__.py").exists() or (candidate / "server.py").exists()):
            package_dir = candidate.resolve()
            root, parts = package_dir, []
            while (root / "__init__.py").exists():
                parts.insert(0, root.name)
                root = root.parent
            if not parts:
                raise UltraError(f"server '{alias}': {package_dir} is not a Python package (no __init__.py)")
            module = ".".join(parts) if (package_dir / "__main__.py").exists() else ".".join([*parts, "server"])
            return ServerLocation(alias=alias, module=module, root=root, package_dir=package_dir, stdio=stdio)
    tried = ", ".join(str(c) for c in candidates)
    raise UltraError(f"server '{alias}': no server package at '{location}' (looked in {tried})")


def server_parameters(location: ServerLocation) -> dict[str, Any]:
    """The server's own parameter.yaml (defaults of its settings), read without starting it."""
    from ultra_base.errors import InputError
    from ultra_kit.settings import load_parameter_file

    try:
        return load_parameter_file(location.package_dir / "parameter.yaml")
    except InputError as exc:
        raise UltraError(str(exc)) from None


def server_env(
    location: ServerLocation,
    *,
    log_path: Path | None = None,
    references: Iterable[str] = (),
    parameter_file: Path | None = None,
) -> dict[str, str]:
    """Environment for the subprocess: the SDK's safe defaults plus PYTHONPATH and offline-model switches.

    Also the variables that ``${VAR}`` references need (those of the server's parameter.yaml and
    ``references``, from the run's parameter file), when set, with their names in
    ``ULTRA_SECRET_VARS`` so the server never echoes their values; the client's pid (the server's
    lifeline) and the server's log path (named in its crash reports); the run's parameter file and the
    server's alias in it (``ultra_kit.wrapping.pinned``: the keys only a parameter file may set).
    """
    from ultra_base import redact
    from ultra_kit import lifeline
    from ultra_kit.settings import env_references

    env = {name: os.environ[name] for name in PASSTHROUGH_ENV if name in os.environ}
    try:
        needed = env_references(server_parameters(location)) | set(references)
    except UltraError:  # an unreadable parameter.yaml: the server reports it itself when it starts
        needed = set(references)
    needed = {name for name in needed if name in os.environ}
    env.update({name: os.environ[name] for name in sorted(needed)})
    if needed:
        env[redact.SECRET_NAMES_ENV] = ",".join(sorted(needed))
    if threading.current_thread() is threading.main_thread():  # PDEATHSIG follows the spawning thread
        env[lifeline.PARENT_PID_ENV] = str(os.getpid())
    if log_path is not None:
        env[lifeline.LOG_PATH_ENV] = str(log_path.resolve())
    python_path = [str(location.root), str(ULTRA_HOME)]
    if os.environ.get("PYTHONPATH"):
        python_path.append(os.environ["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(python_path))
    env["PYTHONUNBUFFERED"] = "1"
    if parameter_file is not None:
        from ultra_kit.wrapping.pinned import RUN_PARAMETERS_ENV, SERVER_ALIAS_ENV

        env[RUN_PARAMETERS_ENV] = str(Path(parameter_file).resolve())
        env[SERVER_ALIAS_ENV] = location.alias
    return env


def parameter_references(path: Path) -> dict[str, set[str]]:
    """Per server alias, the ``${VAR}`` names in a run's parameter file (empty if there is none yet)."""
    from ultra_client.pipeline.params import read_parameter_file
    from ultra_kit.settings import env_references

    if not path.is_file():
        return {}
    return {alias: env_references(values) for alias, values in read_parameter_file(path).items()}


@dataclass
class RunningServer:
    """A started server: its client session, tools and stderr log."""

    location: ServerLocation
    log_path: Path
    settings: dict[str, Any]
    client: Any = None
    tools: dict[str, ToolInfo] = field(default_factory=dict)
    error: BaseException | None = None
    transport = "stdio"

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None, progress: Any) -> dict[str, Any]:
        """The tool's structured result over MCP; ToolRefused for an error result, other exceptions for a
        server that died or a timeout."""
        from ultra_client.calls.local_server import ToolRefused

        if self.client is None:
            raise ConnectionError("the server is not running")
        result = await call_tool_checked(self.client, tool, args, timeout, progress)
        if result.is_error:
            raise ToolRefused(result_text(result, " ").strip())
        return structured_result(result)

    def log_tail(self, lines: int = 25) -> str:
        return last_lines(self.log_path, lines)


async def call_tool_checked(client: Any, tool: str, args: dict[str, Any], timeout: float | None, progress: Any) -> Any:
    """``client.call_tool``; a result that does not match the tool's output schema raises ToolRefused naming
    the output key (the server answered: it is not a dead server). JSON has no NaN or infinity, so the SDK
    sends such a number as null, which a ``number`` output refuses."""
    from ultra_client.calls.local_server import ToolRefused

    try:
        return await client.call_tool(tool, args, read_timeout_seconds=timeout, progress_callback=progress)
    except RuntimeError as exc:
        problem = exc.__cause__
        if not str(exc).startswith("Invalid structured content") or not hasattr(problem, "absolute_path"):
            raise
        key = ".".join(str(part) for part in problem.absolute_path) or "(the whole result)"
        if (
            getattr(problem, "validator", None) == "type"
            and problem.instance is None
            and "number" in str(problem.validator_value)
        ):
            raise ToolRefused(f"output {key} is NaN or infinite, not a finite number (sent as null over MCP)") from None
        raise ToolRefused(f"output {key} does not match the tool's output schema: {problem.message}") from None


class ServerPool:
    """Starts every server once, keeps it until exit: in this process through its ``SPEC``, or (a
    location marked ``stdio``, a package without ``SPEC``) as an MCP subprocess, started concurrently."""

    def __init__(
        self,
        locations: list[ServerLocation],
        log_dir: Path,
        references: dict[str, set[str]] | None = None,
        parameter_file: Path | None = None,
    ) -> None:
        self.references = references or {}  # per alias: ${VAR} names of the run's parameter file
        self.parameter_file = parameter_file  # the run's: its pinned keys are trusted (ultra_kit.wrapping.pinned)
        self.locations = locations
        self.servers: dict[str, Any] = {}  # alias -> RunningServer or LocalServer, in the pipeline's order
        self.log_dir = log_dir
        self._stop = anyio.Event()
        self._group: Any = None

    async def __aenter__(self) -> ServerPool:
        from ultra_client.calls.local_server import load_local

        self.log_dir.mkdir(parents=True, exist_ok=True)
        subprocesses = {}
        for loc in self.locations:
            settings = server_parameters(loc)
            local = None
            if not loc.stdio:
                log = self.log_dir / f"{log_name(loc.alias)}.log"
                local = load_local(loc, log, settings, self.references.get(loc.alias, set()))
            if local is None:
                stderr_log = self.log_dir / f"{log_name(loc.alias)}.stderr.log"
                subprocesses[loc.alias] = RunningServer(loc, stderr_log, settings)
            self.servers[loc.alias] = local or subprocesses[loc.alias]
        if not subprocesses:
            return self
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        ready = {alias: anyio.Event() for alias in subprocesses}
        for alias, server in subprocesses.items():
            self._group.start_soon(self._serve, server, ready[alias])
        try:
            with anyio.move_on_after(START_TIMEOUT):
                for event in ready.values():
                    await event.wait()
        except BaseException as exc:  # cancelled while starting (a --deadline, Ctrl-C): leave the group cleanly
            group, self._group = self._group, None
            self._stop.set()
            group.cancel_scope.cancel()
            await group.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        for alias, server in subprocesses.items():
            if server.client is None:
                cause = server.error or TimeoutError(f"no answer within {START_TIMEOUT:.0f} s")
                await self.__aexit__(None, None, None)
                raise UltraError(self.describe_start_failure(alias, cause))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._group is not None:
            group, self._group = self._group, None
            await group.__aexit__(None, None, None)

    async def _serve(self, server: RunningServer, ready: anyio.Event) -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        from ultra_client.calls import stdio_lines

        stdio_lines.install()  # whole lines to the SDK's reader: large results read in linear time
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", server.location.module],
            env=server_env(
                server.location,
                log_path=server.log_path,
                references=self.references.get(server.location.alias, ()),
                parameter_file=self.parameter_file,
            ),
            cwd=os.getcwd(),
        )
        try:
            with open(server.log_path, "w", encoding="utf-8") as errlog:
                async with Client(stdio_client(params, errlog=errlog)) as client:
                    listing = await client.list_tools()
                    server.tools = {t.name: tool_info(t, server.settings) for t in listing.tools}
                    server.client = client
                    ready.set()
                    await self._stop.wait()
        except Exception as exc:  # noqa: BLE001 - reported with the server's log tail
            server.error = exc
        finally:
            server.client = None if server.error else server.client
            ready.set()

    def describe_start_failure(self, alias: str, cause: BaseException) -> str:
        """Why a stdio server did not start: the command, what failed, its stderr tail, and what to do.

        A package with a ``SPEC`` whose module runs nothing (no ``__main__.py``) exits at once: the
        message says so and how to fix it, instead of the SDK's task-group error.
        """
        from ultra_kit.inprocess import load_spec

        server = self.servers[alias]
        command = f"`python -m {server.location.module}` (in {os.getcwd()})"
        reasons = "; ".join(dict.fromkeys(str(e) or type(e).__name__ for e in innermost_errors(cause)))
        closed = reasons == "Connection closed"
        what = f"failed to start: {command} " + (
            "exited or closed its output before answering" if closed else f"failed ({reasons})"
        )
        if server.log_tail():
            return self.describe_failure(alias, what)
        message = self.describe_failure(alias, what) + " and wrote nothing to its stderr"
        location = server.location
        if closed and not (location.package_dir / "__main__.py").exists():
            message += f"\n  {location.package_dir.name} has no __main__.py, so nothing in it runs an MCP server: "
            if load_spec(location.module, location.root) is None:
                message += f"add {location.package_dir}/__main__.py that starts the server"
            else:
                message += (
                    f"run it in-process (without --stdio, --timeout or 'transport: stdio'), or add "
                    f"{location.package_dir}/__main__.py with `from {location.module} import SPEC` and "
                    "`SPEC.create_app().run()`"
                )
        return message

    def describe_failure(self, alias: str, what: str) -> str:
        """A message naming the server, what went wrong, and the end of its stderr log.

        A Python traceback in the log is cut down to its final exception line; the full log stays on disk.
        """
        server = self.servers[alias]
        where = server.location.module + (", in-process" if server.transport == "in-process" else "")
        message = f"server '{alias}' ({where}) {what}"
        tail = server.log_tail()
        if "Traceback (most recent call last)" in tail:
            last = [line for line in tail.splitlines() if line.strip() and not line.startswith((" ", "\t"))]
            message += f"\n  {last[-1] if last else 'the server crashed'}\n  (full log: {server.log_path})"
        elif tail:
            message += f"\n--- last lines of {server.log_path} ---\n{tail}"
        return message


def innermost_errors(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or ``[exc]`` for a plain exception."""
    inner = getattr(exc, "exceptions", None)  # BaseExceptionGroup (a builtin from Python 3.11)
    if not isinstance(inner, tuple) or not inner:
        return [exc]
    return [leaf for sub in inner for leaf in innermost_errors(sub)]


def tool_info(tool: Any, settings: dict[str, Any]) -> ToolInfo:
    """ToolInfo from an MCP tool listing entry and the server's parameter.yaml."""
    from ultra_kit.factory import OWN_ENV_META
    from ultra_kit.inprocess import OUTPUTS_FROM

    schema = tool.input_schema or {}
    properties = list((schema.get("properties") or {}).keys())
    output_schema = tool.output_schema or {}
    return ToolInfo(
        name=tool.name,
        description=(tool.description or "").strip(),
        parameters=properties,
        required=set(schema.get("required") or []),
        outputs=list((output_schema.get("properties") or {}).keys()),
        settings={name: settings[name] for name in properties if name in settings},
        input_schema=schema,
        required_outputs=set(output_schema.get("required") or []),
        outputs_from=output_schema.get(OUTPUTS_FROM),
        own_env=frozenset((getattr(tool, "meta", None) or {}).get(OWN_ENV_META, ())),
    )


def result_text(result: Any, separator: str = "") -> str:
    """The text blocks of a tool result, joined."""
    return separator.join(getattr(block, "text", "") for block in result.content)


def structured_result(result: Any) -> dict[str, Any]:
    """The tool's structured output, or its text parsed as JSON, or ``{"result": text}``."""
    if isinstance(result.structured_content, dict):
        return result.structured_content
    text = result_text(result)
    try:
        parsed = loads_limited(text, path="the tool's result")
    except ValueError:  # not JSON, or nested too deeply: the text as it is
        return {"result": text}
    return parsed if isinstance(parsed, dict) else {"result": parsed}
