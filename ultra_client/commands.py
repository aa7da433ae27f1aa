"""What the `ultra` commands build, run, tools, mcp-config and serve do (async; `call` is in calls/calling.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio

from ultra_base.errors import add_read_root
from ultra_client.calls.server_info import ServerLocation, ToolInfo
from ultra_client.calls.server_pool import (
    ULTRA_HOME,
    ServerPool,
    locate_server,
    parameter_references,
    server_parameters,
)
from ultra_client.errors import UltraError, as_ultra_error, located
from ultra_client.gates.spec import check_gate_variables
from ultra_client.pipeline.dataflow import check_dataflow, produced_variables, settings_used
from ultra_client.pipeline.model import Pipeline, load_pipeline, require_file
from ultra_client.pipeline.params import (
    MergeReport,
    expand_settings,
    merge_settings,
    parameter_path,
    read_parameter_file,
    update_parameter_file,
    write_parameter_file,
)
from ultra_client.pipeline.runner import Runner, link_written_files, relative_memory
from ultra_client.pipeline.setting_checks import check_setting_values
from ultra_client.summary.lines import report_path, summary_lines
from ultra_kit.files import atomic_write_json, atomic_write_text
from ultra_kit.yaml_files.limits import require_regular_file


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
            noted = type(exc).__new__(type(exc), f"{exc}\n  (log: {', '.join(logs)})")  # the log named ...
            noted.__dict__.update(exc.__dict__)  # ... the class and attributes kept (an exit code, a tool's reason)
            raise noted from None
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


def builtin_servers(home: Path = ULTRA_HOME) -> dict[str, str]:
    """{name: relative path} of the server packages that ship with ultra (in the checkout ``home``)."""
    root = home / "servers"
    return {
        p.name: f"servers/{p.name}"
        for p in sorted(root.iterdir())
        if p.is_dir()
        and p.name != "core"
        and (p / "__init__.py").exists()
        and ((p / "server.py").exists() or (p / "__main__.py").exists())
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


def build_parameters(pipeline: Pipeline, pool: ServerPool, target: Path) -> MergeReport:
    """Check the dataflow, then write (or merge into) the parameter file at ``target``."""
    tools = tool_table(pool)
    known = {alias: server.settings for alias, server in pool.servers.items()}
    existing = read_parameter_file(target, settings=known) if target.exists() else None
    check_dataflow(pipeline, tools, existing)
    if existing is not None:
        check_setting_values(pool.servers, target)
    defaults = settings_used(pipeline, tools)
    if existing is None:
        write_parameter_file(target, pipeline.path.name, defaults)
        return MergeReport()
    merged, report = merge_settings(defaults, existing)
    update_parameter_file(target, pipeline.path.name, merged, report)
    return report


async def build(pipeline_file: str, stdio: bool = False) -> tuple[Path, MergeReport]:
    """``ultra build``: learn the tools (from each server's SPEC; a server without one, or ``stdio``, is
    started), check the pipeline, write its parameter file. A NeMo RAG job (JSON) is compiled into a pipeline first."""
    from ultra_client.compat.nemo import compile_if_job

    job = compile_if_job(pipeline_file)
    pipeline = load_pipeline(require_file(job.pipeline if job else pipeline_file))
    target = parameter_path(pipeline.path)
    async with scratch_logs("build") as logs, ServerPool(pipeline_locations(pipeline, stdio), logs) as pool:
        report = build_parameters(pipeline, pool, target)
        check_gate_variables(pipeline.gate, produced_variables(pipeline, tool_table(pool), read_parameter_file(target)))
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
    pipeline_file: str,
    param_file: str | None,
    timeout: float | None,
    output_dir: str,
    deadline: float | None = None,
    stdio: bool = False,
    full: bool = False,  # --full: the end prints every result uncut (ultra_client.summary.lines)
    gate: list | None = None,  # the gate's conditions (the pipeline's and --gate FILE's); None: the pipeline's
) -> Path:
    """``ultra run``: build if needed, run every step, write ``output/<pipeline>_<timestamp>/``.

    Tools run in this process unless ``stdio`` (``--stdio``) or the pipeline's ``transport: stdio``
    asks for MCP subprocesses. ``deadline`` bounds the whole run (start-up included): past it the
    servers are stopped and no ``memory.json`` is written. A NeMo RAG job (JSON) is compiled and built
    first (``param_file`` is then laid over its settings) and its ``results.json`` written at the end.
    The gate's metrics must name variables the pipeline produces, checked before the first step.
    """
    from ultra_client.compat.nemo import compile_if_job

    job = compile_if_job(pipeline_file, param_file)
    if job is not None:
        job.export_secrets()
        await build(str(job.pipeline), stdio)
        pipeline_file, param_file = str(job.pipeline), None
    pipeline = load_pipeline(require_file(pipeline_file))
    target = Path(param_file) if param_file else parameter_path(pipeline.path)
    if param_file:
        with as_ultra_error():
            require_regular_file(target, "parameter")
    locations = pipeline_locations(pipeline, stdio)
    # read before any server starts, so a mistake in it costs nothing
    known = {location.alias: server_parameters(location) for location in locations}
    raw = read_parameter_file(target, list(pipeline.servers), known) if target.exists() else None
    made_output_dir = not Path(output_dir).exists()
    folder = new_run_folder(Path(output_dir), pipeline.stem)
    add_read_root(folder)  # later steps read the run's own results, wherever --output-dir puts them
    started = time.time()
    print(f"[ultra] run folder: {folder}", file=sys.stderr)
    steps_started = False
    try:
        with anyio.fail_after(deadline):
            async with ServerPool(locations, folder / "logs", parameter_references(target)) as pool:
                if raw is None:
                    build_parameters(pipeline, pool, target)
                    print(f"[ultra] built {target}", file=sys.stderr)
                    raw = read_parameter_file(target)
                else:
                    check_dataflow(pipeline, tool_table(pool), raw)
                    check_setting_values(pool.servers, target)
                conditions = pipeline.gate if gate is None else gate
                check_gate_variables(conditions, produced_variables(pipeline, tool_table(pool), raw))
                _note_missing_settings(settings_used(pipeline, tool_table(pool)), raw, target)
                write_output(folder / "parameters.yaml", lambda p: atomic_write_text(p, target.read_text("utf-8")))
                settings = {alias: expand_settings(values, target) for alias, values in raw.items()}
                runner = Runner(pipeline, pool, settings, default_timeout=timeout)
                steps_started = True
                memory = await runner.run()
    except UltraError as exc:
        if not steps_started:
            raise _unstarted(folder, exc, made_output_dir) from None
        raise
    except TimeoutError:
        if deadline is None:
            raise
        raise UltraError(
            f"{pipeline.path}: the run passed its --deadline of {deadline:g} s and was stopped "
            f"(servers stopped, no memory.json written); raise --deadline to give it more time"
        ) from None
    saved: dict[str, str] = {}  # the run's files, brought into files/: memory.json names them relative to the folder
    write_output(folder / "files", lambda p: saved.update(link_written_files(memory, p, started)))
    write_output(folder / "memory.json", lambda p: atomic_write_json(p, relative_memory(memory, saved)))
    timings = {"steps": runner.timings, "total_seconds": round(time.time() - started, 3)}
    write_output(folder / "timings.json", lambda p: atomic_write_json(p, timings))
    for name, seconds in runner.timings:
        print(f"[ultra]   {name}: {seconds:.2f} s", file=sys.stderr)
    report = report_path(memory)
    if report is not None and report in saved:
        report = str(folder / saved[report])
    from ultra_client.summary.costs import finish_run  # prices load only at a run's end, not for `ultra call`

    summary = summary_lines(memory, report, producers=runner.producers, saved=saved, full=full)
    for line in [*summary, *finish_run(folder, runner.accounting)]:
        print(line)
    if job is not None:
        write_output(folder / "results.json", lambda _: job.finish(folder))
    return folder


def _unstarted(folder: Path, exc: UltraError, made_output_dir: bool) -> UltraError:
    """A run stopped by its start-up checks: remove the run folder it had just made (nothing in it but
    empty logs) and the output folder if the run made it, or keep them when a server's log says
    something, and name that log in the error."""
    logs = _logs_with_content(folder / "logs")
    if logs:
        mention = [log for log in logs if log not in str(exc)]
        return type(exc)(f"{exc}\n  (log: {', '.join(mention)})") if mention else exc
    shutil.rmtree(folder, ignore_errors=True)
    if made_output_dir:
        with contextlib.suppress(OSError):  # only while empty: another run may have started in it
            folder.parent.rmdir()
    print(f"[ultra] removed {folder}: the run stopped before its first step", file=sys.stderr)
    return exc


def _note_missing_settings(used: dict[str, dict[str, Any]], raw: dict[str, dict[str, Any]], target: Path) -> None:
    """Say which settings the parameter file lacks (the servers' defaults apply to them)."""
    missing = [f"{alias}.{name}" for alias, names in used.items() for name in names if name not in raw.get(alias, {})]
    if missing:
        print(
            f"[ultra] note: {target} has no value for {', '.join(missing)}; the servers' defaults apply "
            "(run `ultra build` to add them; it keeps your comments)",
            file=sys.stderr,
        )


async def list_tools(server: str | None) -> dict[str, dict[str, ToolInfo]]:
    """``ultra tools [server]``: every tool of the built-in servers (or of one)."""
    if server is not None:
        locations = [dataclasses.replace(locate_named_server(server), stdio=True)]
    else:
        locations = [locate_server(name, path, [Path.cwd()], stdio=True) for name, path in builtin_servers().items()]
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


def checkout_of(folder: Path) -> Path | None:
    """The ultra-eval checkout holding ``folder`` (a folder with ``servers/`` and the project's
    ``pyproject.toml``, ``folder`` or above it), or None."""
    for candidate in [folder, *folder.parents]:
        pyproject = candidate / "pyproject.toml"
        if (candidate / "servers").is_dir() and pyproject.is_file():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                if re.search(r'^name\s*=\s*"ultra-eval"', pyproject.read_text("utf-8"), re.MULTILINE):
                    return candidate
    return None


def mcp_config(host: str) -> dict[str, Any]:
    """The JSON block an agent host needs to start every built-in server over stdio.

    The project is the checkout the command runs in (the working directory or a folder above it),
    else the one this code came from. Each entry names it twice: ``cwd`` (for hosts that honour it)
    and ``ULTRA_HOME`` in ``env`` (the server then works there whatever folder the host starts it
    in), so the defaults' relative paths (``data/...``) resolve and results go under ``<project>/output``.
    """
    from ultra_base.environment import PROJECT_ROOT_ENV

    home = checkout_of(Path.cwd().resolve()) or ULTRA_HOME
    entries: dict[str, Any] = {}
    for name in builtin_servers(home):
        entry = {
            "command": sys.executable,
            "args": ["-m", f"servers.{name}"],
            "cwd": str(home),
            "env": {"PYTHONPATH": str(home), PROJECT_ROOT_ENV: str(home)},
        }
        entries[f"ultra-{name}"] = {"type": "stdio", **entry} if host == "vscode" else entry
    return {"servers": entries} if host == "vscode" else {"mcpServers": entries}


def serve(server: str) -> None:
    """``ultra serve name``: run one built-in server in this process over stdio."""
    location = locate_named_server(server)
    sys.path.insert(0, str(location.root))
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    import runpy

    runpy.run_module(location.module, run_name="__main__")
