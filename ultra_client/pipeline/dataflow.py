"""Static check of a pipeline before anything runs: tools exist, renames are real, variables are produced.

Each step kind checks itself (``ultra_client.pipeline.steps``); the ``Checker`` holds what they share: the
pipeline, every server's tools, and the settings the run will use (a tool's outputs may follow from
them, e.g. ``get_data`` produces one variable per ``benchmark.key_map`` entry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ultra_base.errors import unknown_names_message
from ultra_client.calls.server_info import ToolInfo
from ultra_client.errors import located
from ultra_client.pipeline.model import Pipeline, Step, ToolStep
from ultra_client.pipeline.steps import ROUTE_OUTPUT

__all__ = [
    "ROUTE_OUTPUT",
    "Checker",
    "check_dataflow",
    "produced_variables",
    "settings_used",
    "step_outputs",
    "tool_for",
]


@dataclass
class Checker:
    """What the steps' ``check`` needs: the pipeline, its tools, and the run's settings (None: the defaults)."""

    pipeline: Pipeline
    tools: dict[str, dict[str, ToolInfo]]
    settings: dict[str, dict[str, Any]] | None = None

    def steps(self, steps: list[Step], known: set[str]) -> set[str]:
        """Check steps in order; the variables known after them."""
        for step in steps:
            known = step.check(self, known)
        return known

    def tool_step(self, step: ToolStep, known: set[str]) -> set[str]:
        """Check one tool step against what is known so far; return the variables it produces."""
        pipeline = self.pipeline
        info = tool_for(pipeline, step, self.tools)
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
        outputs = step_outputs(info, None if self.settings is None else self.settings.get(step.server, {}))
        for output in step.outputs:
            if output not in outputs:
                raise located(
                    pipeline.path,
                    step.line,
                    f"output rename: '{step.name}' has no output '{output}'; its outputs: {outputs}",
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
        return {step.outputs.get(output, output) for output in outputs}


def check_dataflow(
    pipeline: Pipeline, tools: dict[str, dict[str, ToolInfo]], settings: dict[str, dict[str, Any]] | None = None
) -> set[str]:
    """Raise UltraError at the first step whose tool, renames or inputs do not fit; return the final variables.

    ``settings`` (per server alias, from the parameter file) decide the outputs of a tool whose outputs
    follow a setting; without them the servers' defaults do.
    """
    return Checker(pipeline, tools, settings).steps(pipeline.steps, set())


def produced_variables(
    pipeline: Pipeline, tools: dict[str, dict[str, ToolInfo]], settings: dict[str, dict[str, Any]] | None = None
) -> dict[str, tuple[ToolStep, str]]:
    """{variable: (the first step producing it, its tool output)} over every tool step, those of loops and of every
    branch included (``check_dataflow`` keeps only what every branch produces), under its pipeline name.
    ``settings`` decide the outputs that follow a setting, as in ``step_outputs`` (None: every output it may have)."""
    produced: dict[str, tuple[ToolStep, str]] = {}
    for step in pipeline.tool_steps():
        info = tools.get(step.server, {}).get(step.tool)
        own = None if settings is None else settings.get(step.server, {})
        for output in step_outputs(info, own) if info else []:
            produced.setdefault(step.outputs.get(output, output), (step, output))
    return produced


def step_outputs(info: ToolInfo, settings: dict[str, Any] | None) -> list[str]:
    """The tool's outputs.

    A tool whose outputs follow a mapping setting (``outputs_from``, e.g. ``benchmark.key_map``)
    produces its always-present outputs plus that mapping's keys, as the parameter file gives them
    (``settings``: the server's section; a setting it leaves out takes its default). Before there
    is a parameter file (``settings`` None: the first ``ultra build``, whose file the user then
    edits) every output it may produce counts.
    """
    if not isinstance(info.outputs_from, str) or not info.outputs_from:  # a mapping names keys inside outputs
        return info.outputs
    setting, _, key = info.outputs_from.partition(".")
    default = info.settings.get(setting)
    value = settings[setting] if settings is not None and setting in settings else default
    mapping = value
    if key:  # a partial mapping takes the keys it leaves out from the default
        inner = value if isinstance(value, dict) and key in value else default
        mapping = inner.get(key) if isinstance(inner, dict) else None
    if not isinstance(mapping, dict):
        return info.outputs
    if settings is None:
        return [*dict.fromkeys([*info.outputs, *(str(name) for name in mapping)])]
    always = [name for name in info.outputs if name in info.required_outputs]
    return [*dict.fromkeys([*(str(name) for name in mapping), *always])]


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


def expanded_on_use(pipeline: Pipeline, tools: dict[str, dict[str, ToolInfo]]) -> dict[str, set[str]]:
    """{server alias: settings} that every step using them expands itself, when a request needs them
    (``expands_own_env``): their unset ``${VAR}`` need not stop a run before it starts."""
    own: dict[str, set[str]] = {}
    other: dict[str, set[str]] = {}
    for step in pipeline.tool_steps():
        info = tool_for(pipeline, step, tools)
        own.setdefault(step.server, set()).update(info.own_env & set(info.settings))
        other.setdefault(step.server, set()).update(set(info.settings) - info.own_env)
    return {alias: names - other.get(alias, set()) for alias, names in own.items()}


def settings_used(pipeline: Pipeline, tools: dict[str, dict[str, ToolInfo]]) -> dict[str, dict[str, Any]]:
    """{server alias: {setting: default}} for the settings of the tools the pipeline calls, in file order."""
    used: dict[str, dict[str, Any]] = {}
    for step in pipeline.tool_steps():
        info = tool_for(pipeline, step, tools)
        used.setdefault(step.server, {}).update(info.settings)
    return used
