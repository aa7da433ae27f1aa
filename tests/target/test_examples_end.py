"""The two target examples as a user runs them, in a copy of the project: their end (the summary table, which
fits 100 columns and shows every result) and their numbers. eval_target_http talks to the example service,
started as the example's comment says (``python examples/targets/rag_service.py --port N``)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, in_background
from tests.support.ports import free_port
from tests.support.summary_check import check_summary


def project(tmp_path: Path, name: str) -> Path:
    """A project folder with the example, its parameter file and data/rag (the tools read inside it)."""
    folder = tmp_path / name
    for part in ("examples/targets", "data/rag"):
        shutil.copytree(ROOT / part, folder / part, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "examples/parameters").mkdir(parents=True)
    for file in (f"examples/{name}.yaml", f"examples/parameters/{name}_parameter.yaml"):
        shutil.copy(ROOT / file, folder / file)
    return folder


def python_example(tmp_path: Path) -> Command:
    """eval_target_python in a copy of the project: a background run."""
    folder = project(tmp_path, "eval_target_python")
    return Command(("run", "examples/eval_target_python.yaml"), timeout=300, cwd=folder)


@in_background(python_example)
def test_eval_target_python_ends_with_its_scores(background_run: Finished) -> None:
    done, folder = background_run.done, background_run.folder / "eval_target_python"
    assert done.returncode == 0, done.stderr[-2000:]
    memory = check_summary(done, folder)
    assert memory["failed"]["count"] == 0 and len(memory["pred_ls"]) == len(memory["id_ls"])
    assert 0 < memory["latency"]["p50"] <= memory["latency"]["max"]


def test_eval_target_http_against_the_example_service(tmp_path: Path) -> None:
    folder = project(tmp_path, "eval_target_http")
    port = free_port()
    params = folder / "examples/parameters/eval_target_http_parameter.yaml"
    loaded = yaml.safe_load(params.read_text(encoding="utf-8"))
    loaded["target"]["target"]["url"] = f"http://127.0.0.1:{port}/ask"
    params.write_text(yaml.safe_dump(loaded), encoding="utf-8")
    service = subprocess.Popen([sys.executable, "examples/targets/rag_service.py", "--port", str(port)], cwd=folder,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # poll until the service listens
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert service.poll() is None, service.stderr.read()
            time.sleep(0.2)
        done = run_ultra("run", "examples/eval_target_http.yaml", cwd=folder, timeout=300)
    finally:
        service.terminate()
        service.wait(timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    memory = check_summary(done, folder)
    python = project(tmp_path, "eval_target_python")
    same = run_ultra("run", "examples/eval_target_python.yaml", cwd=python, timeout=300)
    assert same.returncode == 0, same.stderr[-2000:]
    offline = check_summary(same, python)
    # the same function behind HTTP: the same answers, passages and scores
    assert memory["pred_ls"] == offline["pred_ls"] and memory["ret_ids"] == offline["ret_ids"]
    assert memory["answer_scores"] == offline["answer_scores"]
