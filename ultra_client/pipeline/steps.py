"""The step kinds of a pipeline: each class parses its YAML, checks its dataflow and runs itself.

``STEP_KINDS`` maps a step's key (``loop``, ``branch``) to its class; any other key is a tool
reference (``server.tool``). A new kind is one class with ``parse``, ``check``, ``run`` and
``tool_steps``, and one entry in the table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ultra_client.errors import located

Memory = dict[str, Any]
ROUTE_OUTPUT = "route"
MAX_LOOP_TIMES = 10_000  # a larger count is a typo, and would keep the servers busy for ever
_TOOL_REF = re.compile(r"^([A-Za-z_][\w-]*)\.([A-Za-z_]\w*)$")
_TOOL_KEYS = {"input", "output", "timeout"}


class Parser(Protocol):
    """What a step's ``parse`` gets: the file, the declared servers, and a way to parse nested steps."""

    path: Path
    servers: set[str]

    def steps(self, items: Any, line: int | None = None, *, allow_empty: bool = False) -> list[Step]: ...


class HasPath(Protocol):
    """A pipeline, as the steps see it: its file, for messages."""

    path: Path


class Checker(Protocol):
    """What a step's ``check`` gets (``dataflow.Checker``): the pipeline and a way to check steps."""

    pipeline: HasPath

    def steps(self, steps: list[Step], known: set[str]) -> set[str]: ...

    def tool_step(self, step: ToolStep, known: set[str]) -> set[str]: ...


class Runner(Protocol):
    """What a step's ``run`` gets (``runner.Runner``): the pipeline and a way to run steps and call tools."""

    pipeline: HasPath

    async def run_steps(self, steps: list[Step], memory: Memory) -> Memory: ...

    async def call(self, step: ToolStep, memory: Memory) -> Memory: ...


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
    usage: ClassVar[str] = "server.tool, or {server.tool: {input, output, timeout}}"

    @property
    def name(self) -> str:
        return f"{self.server}.{self.tool}"

    @classmethod
    def parse(cls, parser: Parser, ref: Any, body: Any, line: int | None) -> ToolStep:
        match = _TOOL_REF.match(str(ref))
        if not match:
            raise located(parser.path, line, f"'{ref}' is not a step; write server.tool, e.g. benchmark.get_data")
        server, tool = match.groups()
        if server not in parser.servers:
            raise located(
                parser.path, line, f"unknown server '{server}' in '{ref}'; declared servers: {sorted(parser.servers)}"
            )
        step = cls(server=server, tool=tool, line=line or 0)
        if body is None:
            return step
        if not isinstance(body, dict):
            raise located(parser.path, line, f"the settings of step '{ref}' must be a mapping of {sorted(_TOOL_KEYS)}")
        unknown = set(body) - _TOOL_KEYS
        if unknown:
            raise located(
                parser.path,
                getattr(body, "line", line),
                f"unknown key(s) {sorted(unknown)} in step '{ref}'; allowed: input, output, timeout",
            )
        step.inputs = _renames(parser.path, body.get("input"), "input", line)
        step.outputs = _renames(parser.path, body.get("output"), "output", line)
        timeout = body.get("timeout")
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
                raise located(
                    parser.path, line, f"timeout of '{ref}' must be a positive number of seconds, not {timeout!r}"
                )
            step.timeout = float(timeout)
        return step

    def check(self, checker: Checker, known: set[str]) -> set[str]:
        return known | checker.tool_step(self, known)

    async def run(self, runner: Runner, memory: Memory) -> Memory:
        memory.update(await runner.call(self, memory))
        return memory

    def tool_steps(self) -> Iterator[ToolStep]:
        yield self


@dataclass
class LoopStep:
    """Run ``steps`` ``times`` times in a row."""

    times: int
    steps: list[Step]
    line: int
    usage: ClassVar[str] = "{loop: {times: N, steps: [...]}}"

    @classmethod
    def parse(cls, parser: Parser, key: str, body: Any, line: int | None) -> LoopStep:
        if not isinstance(body, dict) or set(body) != {"times", "steps"}:
            raise located(parser.path, getattr(body, "line", line), f"a loop is {cls.usage}")
        times = body["times"]
        if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= MAX_LOOP_TIMES:
            raise located(
                parser.path,
                getattr(body, "line", line),
                f"loop times must be a positive integer of at most {MAX_LOOP_TIMES:,}, not {times!r}",
            )
        return cls(times=times, steps=parser.steps(body["steps"], line), line=line or 0)

    def check(self, checker: Checker, known: set[str]) -> set[str]:
        return checker.steps(self.steps, known)

    async def run(self, runner: Runner, memory: Memory) -> Memory:
        for _ in range(self.times):
            memory = await runner.run_steps(self.steps, memory)
        return memory

    def tool_steps(self) -> Iterator[ToolStep]:
        for step in self.steps:
            yield from step.tool_steps()


@dataclass
class BranchStep:
    """Run ``router``; its ``route`` output picks a branch (a string), or one branch per item (a list).

    A branch may be an empty list (``stop: []``): nothing runs for it, as in UltraRAG.
    """

    router: list[Step]
    branches: dict[str, list[Step]]
    line: int
    usage: ClassVar[str] = "{branch: {router: [...], branches: {name: [...]}}}"

    @classmethod
    def parse(cls, parser: Parser, key: str, body: Any, line: int | None) -> BranchStep:
        if not isinstance(body, dict) or set(body) != {"router", "branches"}:
            raise located(parser.path, getattr(body, "line", line), f"a branch is {cls.usage}")
        branches = body["branches"]
        if not isinstance(branches, dict) or not branches:
            raise located(
                parser.path, getattr(branches, "line", line), "branches must map route names to lists of steps"
            )
        where = getattr(branches, "line", line)
        return cls(
            router=parser.steps(body["router"], line),
            branches={str(name): parser.steps(steps, where, allow_empty=True) for name, steps in branches.items()},
            line=line or 0,
        )

    def check(self, checker: Checker, known: set[str]) -> set[str]:
        known = checker.steps(self.router, known)
        if ROUTE_OUTPUT not in known:
            raise located(
                checker.pipeline.path,
                self.line,
                f"the branch router must produce a '{ROUTE_OUTPUT}' variable (a branch name, or one per item)",
            )
        return set.intersection(*(checker.steps(branch, known) for branch in self.branches.values()))

    async def run(self, runner: Runner, memory: Memory) -> Memory:
        """Route the whole pipeline (a string ``route``) or each item (a list ``route``) to a branch."""
        memory = await runner.run_steps(self.router, memory)
        route = memory.get(ROUTE_OUTPUT)
        if isinstance(route, str):
            return await runner.run_steps(self._branch(runner, route), memory)
        if not isinstance(route, list):
            raise located(
                runner.pipeline.path,
                self.line,
                f"the router's '{ROUTE_OUTPUT}' must be a branch name or a list of them, not {type(route).__name__}",
            )
        return await self._run_per_item(runner, route, memory)

    def tool_steps(self) -> Iterator[ToolStep]:
        for step in [*self.router, *(s for branch in self.branches.values() for s in branch)]:
            yield from step.tool_steps()

    def _branch(self, runner: Runner, name: Any) -> list[Step]:
        if name not in self.branches:
            known = sorted(self.branches)
            raise located(runner.pipeline.path, self.line, f"the router chose branch {name!r}; branches are {known}")
        return self.branches[name]

    async def _run_per_item(self, runner: Runner, route: list[Any], memory: Memory) -> Memory:
        """Split every list variable as long as ``route`` by label, run each branch on its items, merge back."""
        count = len(route)
        item_variables = {k for k, v in memory.items() if isinstance(v, list) and len(v) == count and k != ROUTE_OUTPUT}
        groups: dict[Any, list[int]] = {}
        for index, label in enumerate(route):
            groups.setdefault(label, []).append(index)
        merged = dict(memory)
        for label, indices in groups.items():
            steps = self._branch(runner, label)
            subset = {k: ([v[i] for i in indices] if k in item_variables else v) for k, v in memory.items()}
            subset[ROUTE_OUTPUT] = [label] * len(indices)
            result = await runner.run_steps(steps, subset)
            for key, value in result.items():
                if key == ROUTE_OUTPUT:
                    continue
                if isinstance(value, list) and len(value) == len(indices):
                    column = list(merged[key]) if key in item_variables and key in merged else [None] * count
                    for position, item in zip(indices, value, strict=True):
                        column[position] = item
                    merged[key] = column
                    item_variables.add(key)
                elif key not in item_variables:
                    merged[key] = value
        return merged


Step = ToolStep | LoopStep | BranchStep
STEP_KINDS: dict[str, type[LoopStep] | type[BranchStep]] = {"loop": LoopStep, "branch": BranchStep}
STEP_USAGE = ", ".join(kind.usage for kind in (ToolStep, *STEP_KINDS.values()))


def parse_step(parser: Parser, item: Any, parent_line: int | None) -> Step:
    """One step: ``server.tool``, or a one-key mapping whose key is a kind of ``STEP_KINDS`` or a tool."""
    line = getattr(item, "line", parent_line)
    if isinstance(item, str):
        return ToolStep.parse(parser, item, None, line)
    if not isinstance(item, dict) or len(item) != 1:
        raise located(parser.path, line, f"a step is {STEP_USAGE}")
    ((key, body),) = item.items()
    kind = STEP_KINDS.get(key) if isinstance(key, str) else None
    if kind is not None:
        return kind.parse(parser, key, body, line)
    return ToolStep.parse(parser, key, body, line)


def _renames(path: Path, value: Any, kind: str, line: int | None) -> dict[str, str]:
    if value is None:
        return {}
    where = getattr(value, "line", line)
    if not isinstance(value, dict):
        raise located(path, where, f"'{kind}' must map names to pipeline variables, e.g. {{pred_ls: ans_ls}}")
    for key, target in value.items():
        if not isinstance(target, str) or not target.isidentifier():
            raise located(path, where, f"'{kind}' rename {key}: {target!r} must name a variable (an identifier)")
    return {str(k): str(v) for k, v in value.items()}
