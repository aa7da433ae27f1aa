"""``ultra run``: build if needed, run every step, write the run folder ``output/<pipeline>_<timestamp>/``."""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio

from ultra_base.errors import add_read_root
from ultra_base.file_limits import require_regular_file
from ultra_client.building import build, build_parameters
from ultra_client.calls.described import described_servers
from ultra_client.calls.locate import logs_with_content, pipeline_locations, tool_table
from ultra_client.calls.server_pool import ServerPool, parameter_references, server_parameters
from ultra_client.errors import UltraError, as_ultra_error, write_output
from ultra_client.gates.spec import check_gate_variables
from ultra_client.pipeline.dataflow import check_dataflow, produced_variables, settings_used
from ultra_client.pipeline.model import load_pipeline, require_file
from ultra_client.pipeline.params import parameter_path, read_parameter_file
from ultra_client.pipeline.runner import Runner, link_written_files, relative_memory
from ultra_client.pipeline.setting_checks import check_setting_values, settings_to_send
from ultra_client.summary.lines import report_path, summary_lines
from ultra_kit.files import atomic_write_json, atomic_write_text


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


async def run_pipeline(
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
    conditions = pipeline.gate if gate is None else gate
    try:
        with anyio.fail_after(deadline):
            described = described_servers(locations)  # stdio servers: checked on their SPECs, before any starts
            if described is not None:
                raw = start_checks(pipeline, described, raw, target, conditions)
            async with ServerPool(locations, folder / "logs", parameter_references(target), target) as pool:
                if described is None:
                    raw = start_checks(pipeline, pool, raw, target, conditions)
                write_output(folder / "parameters.yaml", lambda p: atomic_write_text(p, target.read_text("utf-8")))
                settings = settings_to_send(raw, target, pipeline, pool)
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
    write_output(folder / "files", lambda p: saved.update(link_written_files(memory, p, started, runner.step_strings)))
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


def start_checks(pipeline: Any, servers: Any, raw: dict | None, target: Path, conditions: list) -> dict:
    """What a run checks before its first step, on the started pool or the servers' description
    (``ultra_client.calls.described``): the parameter file (built first if ``raw`` is None), its dataflow and
    setting values, the gate's variables; notes the settings it lacks. The parameter file's settings."""
    tools = tool_table(servers)
    if raw is None:
        build_parameters(pipeline, servers, target)
        print(f"[ultra] built {target}", file=sys.stderr)
        raw = read_parameter_file(target)
    else:
        check_dataflow(pipeline, tools, raw)
        check_setting_values(servers.servers, target)
    check_gate_variables(conditions, produced_variables(pipeline, tools, raw))
    _note_missing_settings(settings_used(pipeline, tools), raw, target)
    return raw


def _unstarted(folder: Path, exc: UltraError, made_output_dir: bool) -> UltraError:
    """A run stopped by its start-up checks: remove the run folder it had just made (nothing in it but
    empty logs) and the output folder if the run made it, or keep them when a server's log says
    something, and name that log in the error."""
    logs = logs_with_content(folder / "logs")
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
