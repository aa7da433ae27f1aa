"""The pipeline file: servers, and steps (tool calls with renames, loops, branches), with line numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultra_base.file_limits import require_regular_file
from ultra_client.errors import as_ultra_error, located
from ultra_client.pipeline.steps import BranchStep, LoopStep, Step, ToolStep, parse_step
from ultra_kit.yaml_files.lines import load_yaml_with_lines

__all__ = ["BranchStep", "LoopStep", "Pipeline", "Step", "ToolStep", "load_pipeline", "require_file"]


@dataclass
class Pipeline:
    """A parsed pipeline file."""

    path: Path
    servers: dict[str, str]
    steps: list[Step]
    server_lines: dict[str, int]
    transports: dict[str, str] = field(default_factory=dict)  # alias -> "stdio" where the file asks for it
    gate: list[Any] = field(default_factory=list)  # its ``gate:`` conditions (ultra_client.gates.spec.Condition)

    @property
    def stem(self) -> str:
        return self.path.stem

    def tool_steps(self) -> list[ToolStep]:
        """Every tool step, in file order, including those inside loops and branches."""
        return [tool for step in self.steps for tool in step.tool_steps()]


def load_pipeline(path: str | Path) -> Pipeline:
    """Read and check the shape of a pipeline file; every error names the file and line."""
    path = Path(path)
    with as_ultra_error():
        data = load_yaml_with_lines(path, "pipeline")
    if not isinstance(data, dict):
        raise located(path, None, "a pipeline file must be a mapping with 'servers' and 'pipeline'")
    unknown = set(data) - {"servers", "pipeline", "gate"}
    if unknown:
        raise located(
            path, data.line, f"unknown top-level key(s) {sorted(unknown)}; expected 'servers', 'pipeline' (and 'gate')"
        )
    servers = data.get("servers")
    if not isinstance(servers, dict) or not servers:
        raise located(
            path,
            getattr(servers, "line", data.line),
            "'servers' must map server names to paths, e.g. benchmark: servers/benchmark",
        )
    paths, transports = {}, {}
    for alias, location in servers.items():
        paths[str(alias)], transport = _server_entry(path, alias, location, getattr(alias, "line", servers.line))
        if transport != "in-process":
            transports[str(alias)] = transport
    steps = data.get("pipeline")
    if not isinstance(steps, list) or not steps:
        raise located(path, getattr(steps, "line", data.line), "'pipeline' must be a non-empty list of steps")
    parser = _StepParser(path, set(servers))
    return Pipeline(
        path=path,
        servers=paths,
        steps=parser.steps(steps),
        server_lines={str(k): getattr(k, "line", servers.line) for k in servers},
        transports=transports,
        gate=_gate(data, path),
    )


def _gate(data: Any, path: Path) -> list[Any]:
    """The ``gate:`` block's conditions, checked here so that ``ultra build`` reports a bad one at file:line."""
    if "gate" not in data:
        return []
    from ultra_client.gates.spec import parse_gate

    return parse_gate(data["gate"], path, data.line)


TRANSPORTS = ("in-process", "stdio")


def _server_entry(path: Path, alias: Any, entry: Any, line: int | None) -> tuple[str, str]:
    """``servers/x`` or ``{path: servers/x, transport: stdio}`` as (path, transport)."""
    if isinstance(entry, dict):
        where = getattr(entry, "line", line)
        unknown = set(entry) - {"path", "transport"}
        if unknown:
            raise located(path, where, f"server '{alias}': unknown key(s) {sorted(unknown)}; allowed: path, transport")
        transport = entry.get("transport", "in-process")
        if transport not in TRANSPORTS:
            raise located(
                path, where, f"server '{alias}': transport must be one of {list(TRANSPORTS)}, not {transport!r}"
            )
        entry = entry.get("path")
    else:
        transport = "in-process"
    if not isinstance(entry, str) or not entry:
        raise located(
            path, line, f"server '{alias}' needs a path such as servers/{alias} (or {{path: ..., transport: stdio}})"
        )
    return entry, transport


class _StepParser:
    """Parses lists of steps; each step's kind (``ultra_client.pipeline.steps.STEP_KINDS``) parses its own body."""

    def __init__(self, path: Path, servers: set[str]) -> None:
        self.path = path
        self.servers = servers

    def steps(self, items: Any, line: int | None = None, *, allow_empty: bool = False) -> list[Step]:
        """A list of steps; ``allow_empty`` for a branch, where ``[]`` means "nothing to run"."""
        if not isinstance(items, list) or not (items or allow_empty):
            raise located(self.path, getattr(items, "line", line), "expected a non-empty list of steps")
        return [parse_step(self, item, getattr(items, "line", line)) for item in items]


def require_file(path: str | Path) -> Path:
    """The pipeline path as a Path, or an UltraError if it is missing or not a regular file."""
    file = Path(path)
    with as_ultra_error():
        require_regular_file(file, "pipeline")
    return file
