"""``ultra run`` calls tools in-process by default; ``--stdio`` or ``transport: stdio`` starts MCP subprocesses.

Both must give the same results, and an in-process tool that crashes or hangs must be reported as a
stdio server's would: the crash's last line and a log file in the run folder; a timeout that stops
the run (and the process) with the step's name.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.support.together import at_once

TOY_SPEC = Path(__file__).parent / "toy_spec_server"
EXAMPLES = ["load_data", "eval_trec", "eval_trec_pvalue", "evaluate_results"]


def run_folder(output: Path) -> Path:
    (folder,) = [p for p in output.iterdir() if p.is_dir()]
    return folder


STAMP = re.compile(r"_\d{8}_\d{6}(_\d+)?")  # the time in a result file's name


def memory_and_files(folder: Path) -> tuple[object, dict[str, object]]:
    """memory.json and, per file under files/, its JSON content (or text); file names without their time."""
    memory = json.loads(STAMP.sub("_TIME", (folder / "memory.json").read_text()))
    files: dict[str, object] = {}
    for path in sorted((folder / "files").glob("*")):
        text = path.read_text(encoding="utf-8")
        try:
            files[STAMP.sub("_TIME", path.name)] = json.loads(text)
        except ValueError:
            files[STAMP.sub("_TIME", path.name)] = text
    return memory, files


@pytest.mark.parametrize("example", EXAMPLES)
def test_examples_give_the_same_results_in_process_and_over_stdio(tmp_path: Path, example: str) -> None:
    modes = ([], ["--stdio"])  # both runs at once, each in its own output folder
    ran = at_once({i: lambda mode=mode: run_ultra("run", f"examples/{example}.yaml", "--output-dir",
                                                  str(tmp_path / ("stdio" if mode else "local")), *mode, cwd=ROOT)
                   for i, mode in enumerate(modes)})  # fmt: skip
    results = []
    for i, mode in enumerate(modes):
        output = tmp_path / ("stdio" if mode else "local")
        done = ran[i]
        assert done.returncode == 0, done.stderr
        folder = run_folder(output)
        log = folder / "logs" / ("benchmark" if example in ("load_data", "evaluate_results") else "evaluation")
        assert log.with_suffix(".stderr.log" if mode else ".log").is_file()
        results.append((memory_and_files(folder), STAMP.sub("_TIME", done.stdout.split("done:")[0])))  # names the files
    (local, local_table), (stdio, stdio_table) = results
    assert local == stdio
    assert local[0]  # a real result
    assert local_table == stdio_table  # the terminal summary too


def spec_project(tmp_path: Path, steps: str, transport: str = "") -> Path:
    shutil.copytree(TOY_SPEC, tmp_path / "toyspec", ignore=shutil.ignore_patterns("__pycache__"))
    entry = "{path: toyspec, transport: stdio}" if transport else "toyspec"
    (tmp_path / "p.yaml").write_text(f"servers:\n  toy: {entry}\npipeline:\n{steps}", encoding="utf-8")
    return tmp_path


def test_in_process_run_reports_progress_and_logs_to_the_run_folder(tmp_path: Path) -> None:
    project = spec_project(tmp_path, "  - toy.make_items\n  - toy.count\n")
    done = run_ultra("run", "p.yaml", cwd=project)
    assert done.returncode == 0, done.stderr
    folder = run_folder(project / "output")
    assert json.loads((folder / "memory.json").read_text())["count"] == 3
    assert "(3/3)" in done.stderr  # the tool's progress reached the bar
    assert "counted 3 items" in (folder / "logs" / "toy.log").read_text()
    assert not (folder / "logs" / "toy.stderr.log").exists()  # no subprocess


def test_transport_stdio_starts_that_server_as_a_subprocess(tmp_path: Path) -> None:
    project = spec_project(tmp_path, "  - toy.make_items\n  - toy.count\n", transport="stdio")
    done = run_ultra("run", "p.yaml", cwd=project)
    assert done.returncode == 0, done.stderr
    folder = run_folder(project / "output")
    assert json.loads((folder / "memory.json").read_text())["count"] == 3
    assert (folder / "logs" / "toy.stderr.log").is_file() and not (folder / "logs" / "toy.log").exists()


def test_unknown_transport_names_the_line(tmp_path: Path) -> None:
    project = spec_project(tmp_path, "  - toy.make_items\n")
    (project / "p.yaml").write_text(
        "servers:\n  toy: {path: toyspec, transport: http}\npipeline:\n  - toy.make_items\n"
    )
    done = run_ultra("run", "p.yaml", cwd=project)
    assert done.returncode == 1
    assert "p.yaml:2: server 'toy': transport must be one of ['in-process', 'stdio'], not 'http'" in done.stderr


def test_in_process_crash_is_reported_with_its_last_line_and_log(tmp_path: Path) -> None:
    project = spec_project(tmp_path, "  - toy.make_items\n  - toy.boom\n")
    done = run_ultra("run", "p.yaml", cwd=project)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    folder = run_folder(project / "output")
    log = folder / "logs" / "toy.log"
    assert "p.yaml:5: step 'toy.boom': server 'toy' (toyspec.server, in-process) crashed in tool boom" in done.stderr
    assert "\n  RuntimeError: cannot count one!\n" in done.stderr
    assert f"(full log: {log.relative_to(project)})" in done.stderr  # as the run folder was named
    text = log.read_text()
    assert "Traceback" in text and 'raise RuntimeError(f"cannot count {items[0]}{mark}")' in text
    assert not (folder / "memory.json").exists()


@pytest.mark.parametrize("tool", ["nap", "async_nap"])
def test_in_process_timeout_stops_the_run_and_the_process(tmp_path: Path, tool: str) -> None:
    project = spec_project(tmp_path, f"  - toy.{tool}:\n      timeout: 1\n")
    (project / "toyspec" / "parameter.yaml").write_text("seconds: 600\n", encoding="utf-8")
    started = time.monotonic()
    done = run_ultra("run", "p.yaml", cwd=project, timeout=400)  # the tool would sleep 600 s
    assert time.monotonic() - started < 300  # about 3 s on a quiet machine: stopped, not slept out
    assert done.returncode == 1
    assert f"step 'toy.{tool}' timed out after 1 s" in done.stderr and "ultra exits now" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (run_folder(project / "output") / "memory.json").exists()


def test_build_reads_tools_without_starting_servers(tmp_path: Path) -> None:
    project = spec_project(tmp_path, "  - toy.make_items\n  - toy.boom\n")
    done = run_ultra("build", "p.yaml", cwd=project)
    assert done.returncode == 0, done.stderr
    params = (project / "parameters" / "p_parameter.yaml").read_text()
    assert "words: one two three" in params and "mark: '!'" in params
