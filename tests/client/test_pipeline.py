"""Parsing pipeline files: step shapes, renames, loops, branches, and errors that point at the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from ultra_client.errors import UltraError
from ultra_client.pipeline.model import BranchStep, LoopStep, ToolStep, load_pipeline


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    return path


FULL = """\
servers:
  benchmark: servers/benchmark
  evaluation: servers/evaluation
pipeline:
  - benchmark.get_data
  - evaluation.evaluate:
      input: {pred_ls: ans_ls}
      output: {eval_res: eval_res_ans}
      timeout: 30
  - loop:
      times: 3
      steps:
        - benchmark.get_data
  - branch:
      router:
        - evaluation.route
      branches:
        complete: [benchmark.get_data]
        incomplete:
          - evaluation.evaluate
"""


def test_full_grammar(tmp_path: Path) -> None:
    pipeline = load_pipeline(write(tmp_path, FULL))
    first, renamed, loop, branch = pipeline.steps
    assert first == ToolStep("benchmark", "get_data", line=5)
    assert isinstance(renamed, ToolStep)
    assert renamed.inputs == {"pred_ls": "ans_ls"} and renamed.outputs == {"eval_res": "eval_res_ans"}
    assert renamed.timeout == 30.0 and renamed.line == 6
    assert isinstance(loop, LoopStep) and loop.times == 3 and loop.steps[0].name == "benchmark.get_data"
    assert isinstance(branch, BranchStep) and sorted(branch.branches) == ["complete", "incomplete"]
    assert [s.name for s in pipeline.tool_steps()] == [
        "benchmark.get_data",
        "evaluation.evaluate",
        "benchmark.get_data",
        "evaluation.route",
        "benchmark.get_data",
        "evaluation.evaluate",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("servers:\n  a: servers/a\npipeline:\n  - a.x\n  - a.y: [\n", r"p\.yaml:\d+: YAML syntax error"),
        ("servers:\n  a: servers/a\npipeline:\n  - b.x\n", r"p\.yaml:4: unknown server 'b' in 'b\.x'"),
        ("servers:\n  a: servers/a\npipeline:\n  - just_a_word\n", r"p\.yaml:4: 'just_a_word' is not a step"),
        (
            "servers:\n  a: servers/a\npipeline:\n  - a.x\n  - a.y:\n      inputs: {p: q}\n",
            r"p\.yaml:6: unknown key\(s\) \['inputs'\]",
        ),
        (
            "servers:\n  a: servers/a\npipeline:\n  - a.x:\n      input: {p: 3}\n",
            r"p\.yaml:\d: 'input' rename p: 3 must name a variable",
        ),
        (
            "servers:\n  a: servers/a\npipeline:\n  - loop: {times: 0, steps: [a.x]}\n",
            r"p\.yaml:4: loop times must be a positive integer",
        ),
        ("servers:\n  a: servers/a\npipeline:\n  - branch: {router: [a.x]}\n", r"p\.yaml:4: a branch is"),
        (
            "servers:\n  a: servers/a\npipeline:\n  - a.x:\n      timeout: -1\n",
            r"p\.yaml:4: timeout of 'a\.x' must be a positive number",
        ),
        ("servers:\n  a: servers/a\npipeline: []\n", r"p\.yaml:3: 'pipeline' must be a non-empty list"),
        ("pipeline:\n  - a.x\n", r"p\.yaml:1: 'servers' must map server names"),
        ("servers:\n  a: servers/a\npipeline:\n  - a.x\nextra: 1\n", r"unknown top-level key\(s\) \['extra'\]"),
        ("servers:\n  a: servers/a\n  a: servers/b\npipeline:\n  - a.x\n", r"p\.yaml: line 3: duplicate key 'a'"),
        ("servers:\n  a: servers/a\npipeline:\n  - {a.x: {}, a.y: {}}\n", r"p\.yaml:4: a step is"),
    ],
)
def test_malformed_pipelines_point_at_the_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UltraError, match=message):
        load_pipeline(write(tmp_path, text))
