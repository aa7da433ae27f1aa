"""What each ``ultra`` command does: build, run, call, tools, mcp-config (async, no argument parsing)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import yaml

from servers.core.files import atomic_write_json, atomic_write_text
from ultra_client.dataflow import check_dataflow, settings_used
from ultra_client.errors import UltraError, located
from ultra_client.params import (
    MergeReport,
    expand_settings,
    merge_settings,
    parameter_path,
    read_parameter_file,
    write_parameter_file,
)
from ultra_client.pipeline import Pipeline, load_pipeline, require_file
from ultra_client.runner import Runner, link_written_files, result_text, structured_result
from ultra_client.servers import (
    ULTRA_HOME,
    ServerLocation,
    ServerPool,
    ToolInfo,
    locate_server,
    parameter_references,
)
from ultra_client.yaml_lines import ShapeError, load_yaml_value, require_regular_file

if TYPE_CHECKING:
    from servers.core.factory import ServerSpec


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
        logs = _logs_with_content(folder)
        keep = bool(logs)
        if logs and not any(log in str(exc) for log in logs):
            raise UltraError(f"{exc}\n  (log: {', '.join(logs)})") from None
        raise
    except BaseException:
        keep = bool(_logs_with_content(folder))
        raise
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def _logs_with_content(folder: Path) -> list[str]:
    try:
        return [str(log) for log in sorted(folder.iterdir()) if log.is_file() and log.stat().st_size]
    except OSError:
        return []


def builtin_servers() -> dict[str, str]:
    """{name: relative path} of the server packages that ship with ultra."""
    root = ULTRA_HOME / "servers"
    return {
        p.name: f"servers/{p.name}"
        for p in sorted(root.iterdir())
        if p.is_dir()
        and p.name != "core"
        and (p / "__init__.py").exists()
        and ((p / "server.py").exists() or (p / "__main__.py").exists())
    }


def pipeline_locations(pipeline: Pipeline) -> list[ServerLocation]:
    """Each server's package; a path that leads nowhere is an error at its line of the pipeline."""
    search = [Path.cwd(), pipeline.path.resolve().parent, pipeline.path.resolve().parent.parent]
    locations = []
    for alias, location in pipeline.servers.items():
        try:
            locations.append(locate_server(alias, location, search))
        except UltraError as exc:
            raise located(pipeline.path, pipeline.server_lines.get(alias), str(exc)) from None
    return locations


def tool_table(pool: ServerPool) -> dict[str, dict[str, ToolInfo]]:
    return {alias: server.tools for alias, server in pool.servers.items()}


def build_parameters(pipeline: Pipeline, pool: ServerPool, target: Path) -> MergeReport:
    """Check the dataflow, then write (or merge into) the parameter file at ``target``."""
    tools = tool_table(pool)
    check_dataflow(pipeline, tools)
    defaults = settings_used(pipeline, tools)
    report = MergeReport()
    if target.exists():
        merged, report = merge_settings(defaults, read_parameter_file(target))
    else:
        merged = defaults
    write_parameter_file(target, pipeline.path.name, merged)
    return report


async def build(pipeline_file: str) -> tuple[Path, MergeReport]:
    """``ultra build``: start the servers, check the pipeline, write its parameter file."""
    pipeline = load_pipeline(require_file(pipeline_file))
    target = parameter_path(pipeline.path)
    async with scratch_logs("build") as logs, ServerPool(pipeline_locations(pipeline), logs) as pool:
        report = build_parameters(pipeline, pool, target)
    return target, report


def new_run_folder(output_dir: Path, stem: str) -> Path:
    """Reserve ``<output_dir>/<stem>_<timestamp>`` with mkdir (atomic), or ``..._2``, ``_3`` ... if taken."""
    stamp = datetime.now().strftime("%Y%m%d_%H%M%S")
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        for counter in range(1, 10_000):
            folder = output_dir / (f"{stem}_{stamp}_{counter}" if counter > 1 else f"{stem}_{stamp}")
            try:
                folder.mkdir()
            except FileExistsError:
                continue  # another run started in the same second
            (folder / "logs").mkdir()
            return folder
    except OSError as exc:
        why = "it is a file, not a folder" if output_dir.is_file() else (exc.strerror or str(exc))
        raise UltraError(f"--output-dir {output_dir}: cannot create a run folder there ({why})") from None
    raise UltraError(f"--output-dir {output_dir}: every run folder name for {stem}_{stamp} is taken")


def write_output(path: Path, write: Callable[[Path], object]) -> None:
    """``write(path)``; an OSError becomes an UltraError naming the file."""
    try:
        write(path)
    except OSError as exc:
        raise UltraError(f"{path}: cannot write: {exc.strerror or exc}") from None


async def run(
    pipeline_file: str, param_file: str | None, timeout: float | None, output_dir: str, deadline: float | None = None
) -> Path:
    """``ultra run``: build if needed, run every step, write ``output/<pipeline>_<timestamp>/``.

    ``deadline`` bounds the whole run (start-up included): past it the servers are stopped and no
    ``memory.json`` is written.
    """
    pipeline = load_pipeline(require_file(pipeline_file))
    target = Path(param_file) if param_file else parameter_path(pipeline.path)
    if param_file:
        require_regular_file(target, "parameter")
    # read before any server starts, so a mistake in it costs nothing
    raw = read_parameter_file(target, list(pipeline.servers)) if target.exists() else None
    locations = pipeline_locations(pipeline)
    folder = new_run_folder(Path(output_dir), pipeline.stem)
    started = time.time()
    print(f"[ultra] run folder: {folder}", file=sys.stderr)
    try:
        with anyio.fail_after(deadline):
            async with ServerPool(locations, folder / "logs", parameter_references(target)) as pool:
                if raw is None:
                    build_parameters(pipeline, pool, target)
                    print(f"[ultra] built {target}", file=sys.stderr)
                    raw = read_parameter_file(target)
                else:
                    check_dataflow(pipeline, tool_table(pool))
                _note_missing_settings(settings_used(pipeline, tool_table(pool)), raw, target)
                write_output(folder / "parameters.yaml", lambda p: atomic_write_text(p, target.read_text("utf-8")))
                settings = {alias: expand_settings(values, target) for alias, values in raw.items()}
                runner = Runner(pipeline, pool, settings, default_timeout=timeout)
                memory = await runner.run()
    except TimeoutError:
        if deadline is None:
            raise
        raise UltraError(
            f"{pipeline.path}: the run passed its --deadline of {deadline:g} s and was stopped "
            f"(servers stopped, no memory.json written); raise --deadline to give it more time"
        ) from None
    write_output(folder / "memory.json", lambda p: atomic_write_json(p, memory))
    write_output(folder / "files", lambda p: link_written_files(memory, p, started))
    timings = {"steps": runner.timings, "total_seconds": round(time.time() - started, 3)}
    write_output(folder / "timings.json", lambda p: atomic_write_json(p, timings))
    for name, seconds in runner.timings:
        print(f"[ultra]   {name}: {seconds:.2f} s", file=sys.stderr)
    for name, scores in score_summary(memory).items():
        print(f"{name}: {json.dumps(scores)}")
    return folder


def score_summary(memory: dict[str, Any]) -> dict[str, dict[str, float]]:
    """The numeric entries of every ``eval_res*`` variable (aggregates, not per-item lists)."""
    return {
        name: {key: value for key, value in result.items() if isinstance(value, (int, float))}
        for name, result in memory.items()
        if name.startswith("eval_res") and isinstance(result, dict)
    }


def _note_missing_settings(used: dict[str, dict[str, Any]], raw: dict[str, dict[str, Any]], target: Path) -> None:
    """Say which settings the parameter file lacks (the servers' defaults apply to them)."""
    missing = [f"{alias}.{name}" for alias, names in used.items() for name in names if name not in raw.get(alias, {})]
    if missing:
        print(
            f"[ultra] note: {target} has no value for {', '.join(missing)}; the servers' defaults apply "
            "(run `ultra build` to add them)",
            file=sys.stderr,
        )


def parse_assignments(pairs: list[str], info: ToolInfo) -> dict[str, Any]:
    """``key=value`` (value parsed as YAML); ``setting.sub=value`` edits one key of a mapping setting."""
    args: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise UltraError(f"argument '{pair}' is not key=value")
        try:
            value = load_yaml_value(text) if text else ""
        except ShapeError as exc:
            raise UltraError(f"argument '{key}': {exc.problem}") from None
        except yaml.YAMLError as exc:
            raise UltraError(
                f"argument '{pair}': the value is not valid YAML ({getattr(exc, 'problem', exc)})"
            ) from None
        name, _, rest = key.partition(".")
        if name not in info.parameters:
            raise UltraError(f"'{info.name}' has no parameter '{name}'; its parameters: {info.parameters}")
        if not rest:
            args[name] = value
            continue
        base = args.get(name, json.loads(json.dumps(info.settings.get(name, {}))))
        if not isinstance(base, dict):
            raise UltraError(f"'{name}' is not a mapping, so '{key}' cannot be set")
        node = base
        parts = rest.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
        args[name] = base
    return args


async def call(target: str, pairs: list[str], timeout: float | None, *, stdio: bool = False) -> dict[str, Any]:
    """``ultra call server.tool key=value ...``: the tool's structured result.

    A server package that exposes a ``SPEC`` runs the tool in this process (no MCP round trip);
    ``stdio=True``, a ``timeout`` (only a subprocess can be stopped), or a server without ``SPEC``
    start the server over stdio instead. Both give the same result.
    """
    server, _, tool = target.partition(".")
    if not server or not tool:
        raise UltraError(f"'{target}' is not server.tool, e.g. evaluation.evaluate_trec")
    location = locate_server(server, builtin_servers().get(server, server), [Path.cwd()])
    if not stdio and timeout is None:
        from servers.core.inprocess import load_spec

        spec = load_spec(location.module, location.root)
        if spec is not None:
            return await call_in_process(target, spec, pairs)
    from servers.core.settings import env_references

    references = {server: env_references(list(pairs))}  # ${VAR} typed in the arguments: the server expands it
    async with scratch_logs("call") as logs, ServerPool([location], logs, references) as pool:
        running = pool.servers[server]
        if tool not in running.tools:
            raise UltraError(f"server '{server}' has no tool '{tool}'; its tools: {sorted(running.tools)}")
        args = parse_assignments(pairs, running.tools[tool])
        try:
            result = await running.client.call_tool(tool, args, read_timeout_seconds=timeout)
        except Exception as exc:  # noqa: BLE001 - reported with the server's log
            raise UltraError(pool.describe_failure(server, f"stopped answering ({exc})")) from None
    if result.is_error:
        raise UltraError(f"{target} failed: {result_text(result, ' ').strip()}")
    return structured_result(result)


async def call_in_process(target: str, spec: ServerSpec, pairs: list[str]) -> dict[str, Any]:
    """Run ``server.tool`` in this process; its log goes to a scratch file, kept (and named) on a crash."""
    import logging
    import traceback

    from servers.core.inprocess import ToolFailure, call_local_tool, local_tools

    server, _, name = target.partition(".")
    tools = local_tools(spec)
    if name not in tools:
        raise UltraError(f"server '{server}' has no tool '{name}'; its tools: {sorted(tools)}")
    tool = tools[name]
    info = ToolInfo(tool.name, tool.description, tool.parameters, tool.required, [], tool.settings)
    args = parse_assignments(pairs, info)
    async with scratch_logs("call") as logs:
        log_path = logs / f"{server}.stderr.log"
        handler = logging.FileHandler(log_path, encoding="utf-8")
        root = logging.getLogger()
        root.addHandler(handler)
        try:
            return await call_local_tool(tool, args)
        except ToolFailure as exc:
            raise UltraError(f"{target} failed: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a crash: the traceback goes to the log
            handler.stream.write(traceback.format_exc())
            raise UltraError(f"{target} failed: Error executing tool {name}: {exc}\n  (full log: {log_path})") from None
        finally:
            root.removeHandler(handler)
            handler.close()


async def list_tools(server: str | None) -> dict[str, dict[str, ToolInfo]]:
    """``ultra tools [server]``: every tool of the built-in servers (or of one)."""
    servers = builtin_servers()
    if server is not None:
        servers = {server: servers.get(server, server)}
    locations = [locate_server(name, path, [Path.cwd()]) for name, path in servers.items()]
    async with scratch_logs("tools") as logs, ServerPool(locations, logs) as pool:
        return tool_table(pool)


def describe_tools(table: dict[str, dict[str, ToolInfo]]) -> str:
    """Human-readable listing: per tool, its settings with defaults, variables and outputs."""
    lines: list[str] = []
    for alias, tools in table.items():
        lines.append(f"{alias}")
        for info in tools.values():
            summary = info.description.splitlines()[0] if info.description else ""
            lines.append(f"  {alias}.{info.name}: {summary}")
            variables = [v + ("" if v in info.required else "?") for v in info.variables]
            lines.append(f"    variables: {', '.join(variables) or '-'}")
            for name, default in info.settings.items():
                lines.append(f"    setting {name} = {json.dumps(default, ensure_ascii=False)}")
            lines.append(f"    outputs: {', '.join(info.outputs) or '-'}")
    return "\n".join(lines)


def mcp_config(host: str) -> dict[str, Any]:
    """The JSON block an agent host needs to start every built-in server over stdio."""
    entries: dict[str, Any] = {}
    for name in builtin_servers():
        entry = {
            "command": sys.executable,
            "args": ["-m", f"servers.{name}"],
            "env": {"PYTHONPATH": str(ULTRA_HOME)},
        }
        entries[f"ultra-{name}"] = {"type": "stdio", **entry} if host == "vscode" else entry
    return {"servers": entries} if host == "vscode" else {"mcpServers": entries}


def serve(server: str) -> None:
    """``ultra serve name``: run one built-in server in this process over stdio."""
    location = locate_server(server, builtin_servers().get(server, server), [Path.cwd()])
    sys.path.insert(0, str(location.root))
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    import runpy

    runpy.run_module(location.module, run_name="__main__")
