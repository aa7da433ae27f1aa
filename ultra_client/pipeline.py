"""The pipeline file: servers, and steps (tool calls with renames, loops, branches), with line numbers."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultra_client.errors import located
from ultra_client.yaml_lines import load_yaml_with_lines, require_regular_file

_TOOL_REF = re.compile(r"^([A-Za-z_][\w-]*)\.([A-Za-z_]\w*)$")
_STEP_KEYS = {"input", "output", "timeout"}
MAX_LOOP_TIMES = 10_000  # a larger count is a typo, and would keep the servers busy for ever


@dataclass
class ToolStep:
    """Call ``server.tool``.

    ``inputs`` maps tool parameter -> pipeline variable, ``outputs`` tool output -> pipeline variable.
    """

    server: str
    tool: str
    line: int
    inputs: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None

    @property
    def name(self) -> str:
        return f"{self.server}.{self.tool}"


@dataclass
class LoopStep:
    """Run ``steps`` ``times`` times in a row."""

    times: int
    steps: list[Step]
    line: int


@dataclass
class BranchStep:
    """Run ``router``; its ``route`` output picks a branch (a string), or one branch per item (a list)."""

    router: list[Step]
    branches: dict[str, list[Step]]
    line: int


Step = ToolStep | LoopStep | BranchStep


@dataclass
class Pipeline:
    """A parsed pipeline file."""

    path: Path
    servers: dict[str, str]
    steps: list[Step]
    server_lines: dict[str, int]

    @property
    def stem(self) -> str:
        return self.path.stem

    def tool_steps(self) -> list[ToolStep]:
        """Every tool step, in file order, including those inside loops and branches."""
        return list(_walk(self.steps))


def _walk(steps: list[Step]):
    for step in steps:
        if isinstance(step, ToolStep):
            yield step
        elif isinstance(step, LoopStep):
            yield from _walk(step.steps)
        else:
            yield from _walk(step.router)
            for branch in step.branches.values():
                yield from _walk(branch)


def load_pipeline(path: str | Path) -> Pipeline:
    """Read and check the shape of a pipeline file; every error names the file and line."""
    path = Path(path)
    data = load_yaml_with_lines(path, "pipeline")
    if not isinstance(data, dict):
        raise located(path, None, "a pipeline file must be a mapping with 'servers' and 'pipeline'")
    unknown = set(data) - {"servers", "pipeline"}
    if unknown:
        raise located(path, data.line, f"unknown top-level key(s) {sorted(unknown)}; expected 'servers' and 'pipeline'")
    servers = data.get("servers")
    if not isinstance(servers, dict) or not servers:
        raise located(
            path,
            getattr(servers, "line", data.line),
            "'servers' must map server names to paths, e.g. benchmark: servers/benchmark",
        )
    for alias, location in servers.items():
        if not isinstance(location, str) or not location:
            raise located(path, servers.line, f"server '{alias}' needs a path such as servers/{alias}")
    steps = data.get("pipeline")
    if not isinstance(steps, list) or not steps:
        raise located(path, getattr(steps, "line", data.line), "'pipeline' must be a non-empty list of steps")
    parser = _StepParser(path, set(servers))
    return Pipeline(
        path=path,
        servers={str(k): str(v) for k, v in servers.items()},
        steps=parser.steps(steps),
        server_lines={str(k): getattr(k, "line", servers.line) for k in servers},
    )


class _StepParser:
    def __init__(self, path: Path, servers: set[str]) -> None:
        self.path = path
        self.servers = servers

    def steps(self, items: Any, line: int | None = None) -> list[Step]:
        if not isinstance(items, list) or not items:
            raise located(self.path, getattr(items, "line", line), "expected a non-empty list of steps")
        return [self.step(item, getattr(items, "line", line)) for item in items]

    def step(self, item: Any, parent_line: int | None) -> Step:
        line = getattr(item, "line", parent_line)
        if isinstance(item, str):
            return self.tool(item, line)
        if not isinstance(item, dict) or len(item) != 1:
            raise located(
                self.path,
                line,
                "a step is 'server.tool', {server.tool: {input, output, timeout}}, {loop: ...} or {branch: ...}",
            )
        ((key, body),) = item.items()
        if key == "loop":
            return self.loop(body, line)
        if key == "branch":
            return self.branch(body, line)
        return self.tool(key, line, body)

    def tool(self, ref: str, line: int | None, body: Any = None) -> ToolStep:
        match = _TOOL_REF.match(str(ref))
        if not match:
            raise located(self.path, line, f"'{ref}' is not a step; write server.tool, e.g. benchmark.get_data")
        server, tool = match.groups()
        if server not in self.servers:
            raise located(
                self.path, line, f"unknown server '{server}' in '{ref}'; declared servers: {sorted(self.servers)}"
            )
        step = ToolStep(server=server, tool=tool, line=line or 0)
        if body is None:
            return step
        if not isinstance(body, dict):
            raise located(self.path, line, f"the settings of step '{ref}' must be a mapping with input/output/timeout")
        unknown = set(body) - _STEP_KEYS
        if unknown:
            raise located(
                self.path,
                getattr(body, "line", line),
                f"unknown key(s) {sorted(unknown)} in step '{ref}'; allowed: input, output, timeout",
            )
        step.inputs = self.renames(body.get("input"), "input", line)
        step.outputs = self.renames(body.get("output"), "output", line)
        timeout = body.get("timeout")
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
                raise located(
                    self.path, line, f"timeout of '{ref}' must be a positive number of seconds, not {timeout!r}"
                )
            step.timeout = float(timeout)
        return step

    def renames(self, value: Any, kind: str, line: int | None) -> dict[str, str]:
        if value is None:
            return {}
        where = getattr(value, "line", line)
        if not isinstance(value, dict):
            raise located(self.path, where, f"'{kind}' must map names to pipeline variables, e.g. {{pred_ls: ans_ls}}")
        for key, target in value.items():
            if not isinstance(target, str) or not target.isidentifier():
                raise located(
                    self.path, where, f"'{kind}' rename {key}: {target!r} must name a variable (an identifier)"
                )
        return {str(k): str(v) for k, v in value.items()}

    def loop(self, body: Any, line: int | None) -> LoopStep:
        if not isinstance(body, dict) or set(body) != {"times", "steps"}:
            raise located(self.path, getattr(body, "line", line), "a loop is {loop: {times: N, steps: [...]}}")
        times = body["times"]
        if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= MAX_LOOP_TIMES:
            raise located(
                self.path,
                getattr(body, "line", line),
                f"loop times must be a positive integer of at most {MAX_LOOP_TIMES:,}, not {times!r}",
            )
        return LoopStep(times=times, steps=self.steps(body["steps"], line), line=line or 0)

    def branch(self, body: Any, line: int | None) -> BranchStep:
        if not isinstance(body, dict) or set(body) != {"router", "branches"}:
            raise located(
                self.path, getattr(body, "line", line), "a branch is {branch: {router: [...], branches: {name: [...]}}}"
            )
        branches = body["branches"]
        if not isinstance(branches, dict) or not branches:
            raise located(self.path, getattr(branches, "line", line), "branches must map route names to lists of steps")
        return BranchStep(
            router=self.steps(body["router"], line),
            branches={
                str(name): self.steps(steps, getattr(branches, "line", line)) for name, steps in branches.items()
            },
            line=line or 0,
        )


def require_file(path: str | Path) -> Path:
    """The pipeline path as a Path, or an UltraError if it is missing or not a regular file."""
    file = Path(path)
    require_regular_file(file, "pipeline")
    return file
