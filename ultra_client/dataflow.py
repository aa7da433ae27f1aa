"""Static check of a pipeline before anything runs: tools exist, renames are real, variables are produced."""

from __future__ import annotations

from typing import Any

from servers.core.errors import unknown_names_message
from ultra_client.errors import located
from ultra_client.pipeline import BranchStep, LoopStep, Pipeline, Step, ToolStep
from ultra_client.servers import ToolInfo

ROUTE_OUTPUT = "route"


def check_dataflow(pipeline: Pipeline, tools: dict[str, dict[str, ToolInfo]]) -> set[str]:
    """Raise UltraError at the first step whose tool, renames or inputs do not fit; return the final variables."""
    return _check_steps(pipeline, pipeline.steps, tools, set())


def _check_steps(
    pipeline: Pipeline, steps: list[Step], tools: dict[str, dict[str, ToolInfo]], known: set[str]
) -> set[str]:
    for step in steps:
        if isinstance(step, ToolStep):
            known = known | _check_tool_step(pipeline, step, tools, known)
        elif isinstance(step, LoopStep):
            known = _check_steps(pipeline, step.steps, tools, known)
        elif isinstance(step, BranchStep):
            known = _check_steps(pipeline, step.router, tools, known)
            if ROUTE_OUTPUT not in known:
                raise located(
                    pipeline.path,
                    step.line,
                    f"the branch router must produce a '{ROUTE_OUTPUT}' variable (a branch name, or one per item)",
                )
            produced = [_check_steps(pipeline, branch, tools, known) for branch in step.branches.values()]
            known = set.intersection(*produced)
    return known


def tool_for(pipeline: Pipeline, step: ToolStep, tools: dict[str, dict[str, ToolInfo]]) -> ToolInfo:
    """The ToolInfo of a step, or an error listing the server's tools."""
    server_tools = tools[step.server]
    if step.tool not in server_tools:
        raise located(
            pipeline.path,
            step.line,
            f"server '{step.server}' has no tool '{step.tool}'; its tools: {sorted(server_tools)}",
        )
    return server_tools[step.tool]


def _check_tool_step(
    pipeline: Pipeline, step: ToolStep, tools: dict[str, dict[str, ToolInfo]], known: set[str]
) -> set[str]:
    """Check one step against what is known so far; return the variables it produces."""
    info = tool_for(pipeline, step, tools)
    for parameter in step.inputs:
        if parameter not in info.parameters:
            raise located(
                pipeline.path,
                step.line,
                "input rename: " + unknown_names_message([parameter], info.parameters, owner=step.name),
            )
        if parameter in info.settings:
            raise located(
                pipeline.path,
                step.line,
                f"input rename: '{parameter}' of '{step.name}' is a setting; set it in the parameter file instead",
            )
    for output in step.outputs:
        if output not in info.outputs:
            raise located(
                pipeline.path,
                step.line,
                f"output rename: '{step.name}' has no output '{output}'; its outputs: {info.outputs}",
            )

    for parameter in info.variables:
        variable = step.inputs.get(parameter, parameter)
        if parameter in info.required and variable not in known:
            hint = f" (renamed from '{parameter}')" if variable != parameter else ""
            available = sorted(known) or "none yet"
            raise located(
                pipeline.path,
                step.line,
                f"'{step.name}' needs variable '{variable}'{hint}, which no earlier step produces; "
                f"available: {available}",
            )
    return {step.outputs.get(output, output) for output in info.outputs}


def settings_used(pipeline: Pipeline, tools: dict[str, dict[str, ToolInfo]]) -> dict[str, dict[str, Any]]:
    """{server alias: {setting: default}} for the settings of the tools the pipeline calls, in file order."""
    used: dict[str, dict[str, Any]] = {}
    for step in pipeline.tool_steps():
        info = tool_for(pipeline, step, tools)
        used.setdefault(step.server, {}).update(info.settings)
    return used
