"""What the client knows of a server before and after it starts: where its package is, and its tools."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ServerLocation:
    """Where a server package is: ``python -m module`` with ``root`` on PYTHONPATH."""

    alias: str
    module: str
    root: Path
    package_dir: Path
    stdio: bool = False  # run as an MCP subprocess even if the package has a SPEC


@dataclass
class ToolInfo:
    """What the client knows of a tool: its parameters (settings and variables) and outputs."""

    name: str
    description: str
    parameters: list[str]
    required: set[str]
    outputs: list[str]
    settings: dict[str, Any]
    input_schema: dict[str, Any] = field(default_factory=dict)
    required_outputs: set[str] = field(default_factory=set)  # outputs every result has
    outputs_from: str | dict[str, Any] | None = None  # how the outputs follow the settings (inprocess.OUTPUTS_FROM)
    own_env: frozenset[str] = frozenset()  # settings whose ${VAR} the tool expands itself, on use (expands_own_env)

    @property
    def variables(self) -> list[str]:
        return [p for p in self.parameters if p not in self.settings]
