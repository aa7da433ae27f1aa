"""A pytest plugin (entry point ``pytest11``, installed with ultra-eval): evaluations written as tests.

    def test_retrieval(ultra_run, ultra_gate):
        run = ultra_run("examples/eval_trec.yaml", params={"evaluation": {"ks": [5, 10]}})
        assert run.results["eval_res.ndcg@10"] > 0.25
        ultra_gate(run, [{"metric": "eval_res.map", "min": 0.15}, {"metric": "failed_fraction", "max": 0.02}])

``ultra_run(pipeline, params=...)`` runs ``ultra run`` in a subprocess with the pipeline's parameter file
and ``params`` (``{server: {setting: value}}``) merged on top, its run folder under the test's ``tmp_path``;
it returns an ``UltraRun`` (``results``: every scalar result by ``variable.key``, ``memory``, ``folder``).
``ultra_gate(run, conditions)`` judges gate conditions (docs/ci.md) and fails the test with the verdict
table when one fails or cannot be evaluated. Only pytest is imported until a fixture is used.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


@dataclass
class UltraRun:
    """A finished run: its folder, scalar results (``variable.key``), final variables and its output."""

    folder: Path
    results: dict[str, float]
    memory: dict[str, Any]
    stdout: str = ""
    stderr: str = field(default="", repr=False)


def merged_parameters(pipeline: Path, params: dict[str, Any] | None, param_file: str | Path | None) -> dict:
    """The pipeline's parameter file (or ``param_file``) with ``params`` merged on top, key by key."""
    from ultra_client.errors import UltraError
    from ultra_client.pipeline.params import read_parameter_file

    source = Path(param_file) if param_file else pipeline.parent / "parameters" / f"{pipeline.stem}_parameter.yaml"
    try:
        base = read_parameter_file(source) if source.is_file() else {}
    except UltraError as exc:
        pytest.fail(str(exc), pytrace=False)
    return _merge(base or {}, params or {})


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def run_pipeline(
    pipeline: str | Path,
    workdir: Path,
    params: dict[str, Any] | None = None,
    param_file: str | Path | None = None,
    timeout: float = 600,
) -> UltraRun:
    """Run ``ultra run`` on ``pipeline`` in a subprocess, its run folder under ``workdir/runs``; fail the test
    (with the run's error) if the run fails."""
    import yaml

    from ultra_client.gates.verdict import read_run
    from ultra_client.runs.records import UnreadableRecord, read_memory

    pipeline = Path(pipeline).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    parameters = workdir / f"{pipeline.stem}_parameter.yaml"
    parameters.write_text(yaml.safe_dump(merged_parameters(pipeline, params, param_file)), encoding="utf-8")
    output = workdir / "runs"
    before = set(output.iterdir()) if output.is_dir() else set()
    command = [sys.executable, "-c", "import ultra; ultra.console()", "run", str(pipeline)]
    command += ["--param", str(parameters), "--output-dir", str(output)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=os.environ.copy())
    folders = [p for p in (set(output.iterdir()) if output.is_dir() else set()) - before if p.is_dir()]
    if done.returncode != 0 or len(folders) != 1:
        pytest.fail(f"ultra run {pipeline} failed (exit {done.returncode}):\n{done.stderr[-3000:]}", pytrace=False)
    folder = folders[0]
    try:
        memory = read_memory(folder) or {}
    except UnreadableRecord as exc:
        pytest.fail(f"ultra run {pipeline}: {exc}", pytrace=False)
    return UltraRun(folder, read_run(folder).scalars, memory, done.stdout, done.stderr)


def check_gate(run: UltraRun | str | Path, conditions: list[dict[str, Any]] | str | Path) -> list[Any]:
    """Judge ``conditions`` (a list of gate conditions, or a gate file) against a run; ``pytest.fail`` with
    the verdict table unless every one passed. Returns the verdicts."""
    from ultra_client.errors import UltraError
    from ultra_client.gates.spec import parse_gate, read_gate_file
    from ultra_client.gates.verdict import exit_code, judge, read_run, verdict_lines

    try:
        parsed = read_gate_file(conditions) if isinstance(conditions, (str, Path)) else parse_gate(
            conditions, Path("ultra_gate")
        )  # fmt: skip
    except UltraError as exc:
        pytest.fail(f"ultra_gate: {exc}", pytrace=False)
    verdicts = judge(parsed, read_run(run.folder if isinstance(run, UltraRun) else run))
    if exit_code(verdicts):
        failing = [v for v in verdicts if v.status != "pass"]
        pytest.fail(
            f"ultra_gate: {len(failing)} of {len(verdicts)} condition(s) did not pass\n"
            + "\n".join(verdict_lines(verdicts)),
            pytrace=False,
        )
    return verdicts


@pytest.fixture
def ultra_run(tmp_path: Path):
    """``ultra_run(pipeline, params={server: {setting: value}}, param_file=None, timeout=600) -> UltraRun``."""
    count = 0

    def run(pipeline: str | Path, params: dict[str, Any] | None = None, **options: Any) -> UltraRun:
        nonlocal count
        count += 1
        return run_pipeline(pipeline, tmp_path / f"ultra_{count}", params, **options)

    return run


@pytest.fixture
def ultra_gate():
    """``ultra_gate(run, conditions)``: fail the test with the verdict table unless every condition passes."""
    return check_gate
