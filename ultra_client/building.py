"""``ultra build``: learn the tools, check the pipeline's dataflow, write (or merge into) its parameter file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_client.calls.described import described_servers
from ultra_client.calls.locate import pipeline_locations, scratch_logs, tool_table
from ultra_client.calls.server_pool import ServerPool
from ultra_client.gates.spec import check_gate_variables
from ultra_client.pipeline.dataflow import check_dataflow, produced_variables, settings_used
from ultra_client.pipeline.model import Pipeline, load_pipeline, require_file
from ultra_client.pipeline.params import (
    MergeReport,
    merge_settings,
    parameter_path,
    read_parameter_file,
    update_parameter_file,
    write_parameter_file,
)
from ultra_client.pipeline.setting_checks import check_setting_values


def build_parameters(pipeline: Pipeline, pool: ServerPool, target: Path) -> MergeReport:
    """Check the dataflow, then write (or merge into) the parameter file at ``target``."""
    tools = tool_table(pool)
    existing = check_existing(pipeline, pool, target)
    defaults = settings_used(pipeline, tools)
    if existing is None:
        write_parameter_file(target, pipeline.path.name, defaults)
        return MergeReport()
    merged, report = merge_settings(defaults, existing)
    update_parameter_file(target, pipeline.path.name, merged, report)
    return report


def check_existing(pipeline: Pipeline, pool: ServerPool, target: Path) -> dict | None:
    """The parameter file at ``target`` (None if there is none yet), its keys, dataflow and setting values checked
    on the pool (or the servers' description: ``ultra_client.calls.described``)."""
    known = {alias: server.settings for alias, server in pool.servers.items()}
    existing = read_parameter_file(target, settings=known) if target.exists() else None
    check_dataflow(pipeline, tool_table(pool), existing)
    if existing is not None:
        check_setting_values(pool.servers, target)
    return existing


def check_build(pipeline: Pipeline, servers: Any, target: Path) -> None:
    """What ``build_parameters`` and the gate's check would refuse, checked without writing anything: the existing
    parameter file (``check_existing``), and the gate's variables against the file the build would write."""
    tools = tool_table(servers)
    existing = check_existing(pipeline, servers, target)
    defaults = settings_used(pipeline, tools)
    settings = defaults if existing is None else merge_settings(defaults, existing)[0]
    check_gate_variables(pipeline.gate, produced_variables(pipeline, tools, settings))


async def build(pipeline_file: str, stdio: bool = False) -> tuple[Path, MergeReport]:
    """``ultra build``: learn the tools (from each server's SPEC; a server without one, or ``stdio``, is
    started), check the pipeline, write its parameter file. With ``stdio`` the checks run on the SPECs first, before
    any server starts (``ultra_client.calls.described``). A NeMo RAG job (JSON) is compiled into a pipeline first."""
    from ultra_client.compat.nemo import compile_if_job

    job = compile_if_job(pipeline_file)
    pipeline = load_pipeline(require_file(job.pipeline if job else pipeline_file))
    target = parameter_path(pipeline.path)
    locations = pipeline_locations(pipeline, stdio)
    described = described_servers(locations)  # stdio servers: the file checked on their SPECs, before any starts
    if described is not None:
        check_build(pipeline, described, target)
    async with scratch_logs("build") as logs, ServerPool(locations, logs) as pool:
        report = build_parameters(pipeline, pool, target)
        check_gate_variables(pipeline.gate, produced_variables(pipeline, tool_table(pool), read_parameter_file(target)))
    return target, report
