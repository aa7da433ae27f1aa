"""Every command's output fits 100 columns (``--full`` prints wider): the tool listing of every server, a
NeMo job's build notes, the runs listing, a comparison and a gate's verdicts. The end of each example run
is checked by its own test (tests/support/summary_check.py, every example: tests/client/test_summary_fit.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, in_background
from tests.support.together import at_once

WIDTH = 100


def widest(text: str) -> tuple[int, str]:
    """The widest line of ``text`` and its width, a file's path counted as 4 columns (a path is as long as
    it is; what is around it must fit)."""
    import re

    shown = [re.sub(r"(?<!\S)/\S+", "PATH", line) for line in text.splitlines()]  # absolute paths
    line = max(shown, key=len, default="")
    return len(line), line


def started(*args: str, cwd: Path) -> subprocess.Popen:
    """``python ultra.py ARGS`` started in ``cwd`` (as run_ultra runs it), its output captured; ``finished`` waits."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, str(ROOT / "ultra.py"), *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def finished(process: subprocess.Popen, timeout: float = 300) -> subprocess.CompletedProcess:
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def every_tool(folder: Path) -> Command:
    """``ultra tools``: every server's listing (each server started over stdio), a background run."""
    return Command(("tools",), timeout=300, cwd=folder)


@in_background(every_tool)
def test_every_command_fits_100_columns(tmp_path: Path, background_run: Finished) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "data").symlink_to(ROOT / "data")
    (project / "t.yaml").write_text(
        "servers:\n  evaluation: servers/evaluation\npipeline:\n  - evaluation.evaluate_trec\n"
    )
    shutil.copytree(ROOT / "examples/compat/nemo", project / "nemo")
    gate = project / "gate.yaml"
    long = "eval_res.ndcg_cut_10_of_the_rerank_stage_with_the_cross_encoder_and_rm3_expansion_on_top"  # unknown
    gate.write_text(yaml.safe_dump({"gate": [{"metric": "eval_res.map", "min": 0.99}, {"metric": "eval_res.nope",
                                   "min": 0}, {"metric": long, "min": 0.5}]}))  # fmt: skip
    # the judge's whole listing runs while the other commands do, in its own process
    listings = {"full": started("tools", "judge", "--full", cwd=project)}
    try:
        outputs = {"build (NeMo job)": run_ultra("build", "nemo/beir_standard.json", cwd=project)}
        ran = at_once({i: lambda: run_ultra("run", "t.yaml", cwd=project) for i in range(2)})  # two run folders
        assert [done.returncode for done in ran.values()] == [0, 0]
        runs = sorted(str(p) for p in (project / "output").glob("t_*"))
        outputs["runs"] = run_ultra("runs", cwd=project)
        outputs["compare"] = run_ultra("compare", *runs, "--out", str(tmp_path / "cmp"), cwd=project)
        outputs["gate"] = run_ultra("gate", runs[0], "--gate", str(gate), cwd=project)
        outputs["tools"] = background_run.done
        for name, done in outputs.items():
            assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr, (name, done.stderr[-2000:])
            width, line = widest(done.stdout)
            assert width <= WIDTH, f"ultra {name}: a line of {width} columns:\n{line}"
            assert done.stdout.strip(), name
        # --full: whole values (the judge server's prompts and mappings are the widest; one server, not all ten again)
        full = finished(listings["full"])
        assert full.returncode == 0, full.stderr[-2000:]
        assert widest(full.stdout)[0] > WIDTH
    finally:  # a failed assertion leaves no listing running
        for process in listings.values():
            if process.poll() is None:
                process.kill()
                process.communicate()
