"""Fixtures of the target tests: the fault service, and ``ask`` (target.ask called in process)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from servers.target.server import SPEC
from tests.target.faults import Service
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools


@pytest.fixture
def service():
    with Service() as running:
        yield running


def ask(tmp_path: Path, questions: list[Any], target: dict[str, Any], **variables: Any) -> dict[str, Any]:
    """Call target.ask in process; results under ``tmp_path``."""
    tool = local_tools(SPEC)["ask"]
    arguments = {"q_ls": questions, "target": target, "save_path": str(tmp_path / "target"), **variables}
    return anyio.run(call_local_tool, tool, arguments)


def records(result: dict[str, Any] | str) -> list[dict[str, Any]]:
    """The records of a result (or of the result file a failure message names)."""
    if isinstance(result, str):
        path = re.search(r"Every record is in (\S+?\.jsonl)", result)[1]  # type: ignore[index]
    else:
        path = result["result_path"]
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def failing(tmp_path: Path, questions: list[Any], target: dict[str, Any], **variables: Any) -> tuple[str, list]:
    """A call whose every item fails: the step's error message and the records of the file it names."""
    with pytest.raises(ToolFailure) as failure:
        ask(tmp_path, questions, target, **variables)
    return str(failure.value), records(str(failure.value))
