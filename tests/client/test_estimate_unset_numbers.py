"""``ultra run --estimate`` stands in text for an unset ``${VAR}`` (an API key need not be set: nothing is sent). A
number written as one ``${VAR}`` (a count such as ``max_workers``, a typed setting such as ``depth``) cannot take
that text: the refusal says the variable is not set and how to set it, not that it "holds something else". A set
variable holding text keeps the old message. Real CLI subprocesses; nothing listens at the endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error
from tests.hostile.test_caps_before_run import LINE, project
from tests.support.together import at_once

UNSET = "it is not set, and an estimate stands in only for text (a key, a URL); export {name}=... first"
HOLDS = "it holds something else (not shown)"
DEPTH_LINE = 9  # of ``depth`` in the project's parameter file


def with_depth_variable(params: Path) -> None:
    text = params.read_text(encoding="utf-8")
    assert text.splitlines()[DEPTH_LINE - 1] == "  depth: 1"
    params.write_text(text.replace("  depth: 1\n", "  depth: ${DEPTH}\n"), encoding="utf-8")


@pytest.mark.parametrize("where", ["count", "typed"])
def test_an_unset_number_under_estimate_is_named_as_unset(tmp_path: Path, where: str) -> None:
    unset, held = tmp_path / "unset", tmp_path / "held"
    runs = {}
    for folder in (unset, held):
        folder.mkdir()
        pipeline, params = project(folder, max_workers="${W}" if where == "count" else "8")
        if where == "typed":
            with_depth_variable(params)
        runs[folder] = (pipeline, params)
    name = "W" if where == "count" else "DEPTH"

    def message(params: Path, end: str) -> str:
        if where == "count":
            return f"judge.judge_llm: {params}:{LINE['max_workers']}: judge_llm.max_workers ${{W}} must hold a " \
                   f"whole number >= 1; {end}"  # fmt: skip
        return f"judge.depth: {params}:{DEPTH_LINE}: depth ${{DEPTH}} must hold a whole number; {end}"

    done = at_once({
        folder: lambda folder=folder: run_ultra(
            "run", str(runs[folder][0]), "--estimate", cwd=folder, timeout=300,
            unset=(name,) if folder == unset else (), env={} if folder == unset else {name: "eight"})
        for folder in (unset, held)
    })  # fmt: skip
    clear_error(done[unset], message(runs[unset][1], UNSET.format(name=name)))
    clear_error(done[held], message(runs[held][1], HOLDS))
    assert "eight" not in done[held].stderr + done[held].stdout
