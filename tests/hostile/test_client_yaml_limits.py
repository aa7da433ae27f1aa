"""Alias bombs and deep nesting in pipelines, parameter files and ``ultra call`` values: refused at once, by name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.conftest import ROOT
from tests.hostile.conftest import HERE, clear_error, pipeline, toy_folder
from tests.support.background import Command, Finished, in_background

# Each bomb below expands to 10**9 values: loading it used to take minutes of CPU and all memory.
FAST = 10  # CPU seconds of the whole CLI call, start-up included (about 1 s; the refusal itself takes milliseconds)


def bomb_value() -> str:
    """One flow list whose nine anchors each repeat the previous ten times (10**9 values)."""
    levels = ["&x0 [a, a, a, a, a, a, a, a, a, a]"]
    levels += [f"&x{i} [" + ", ".join([f"*x{i - 1}"] * 10) + "]" for i in range(1, 9)]
    return "[" + ", ".join(levels) + "]"


def cpu_so_far(pid: int) -> float:
    """The CPU seconds ``pid`` has used so far (Linux's /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime and stime


def timed(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python ultra.py ARGS`` in ``cwd``, its CPU time (user and system, its own and its waited-for children's)
    under ``FAST``: what a busy machine does not stretch, as it does wall time."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen([sys.executable, str(ROOT / "ultra.py"), *args], cwd=cwd, stdout=out, stderr=err,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True)  # fmt: skip
        deadline = time.monotonic() + 600  # only a bomb that did expand lives so long, or uses FAST of CPU
        while not (ended := os.wait4(process.pid, os.WNOHANG))[0]:
            if time.monotonic() > deadline or cpu_so_far(process.pid) > FAST:
                process.kill()
                ended = os.wait4(process.pid, 0)
                break
            time.sleep(0.05)
        _, status, usage = ended
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        result = subprocess.CompletedProcess(process.args, process.returncode, out.read(), err.read())
    assert usage.ru_utime + usage.ru_stime < FAST, (usage, result.stderr)
    return result


def test_parameter_file_alias_bomb_is_refused_before_any_server_starts(toy: Path) -> None:
    flow = pipeline(toy, "flow", "  - toy.make_items\n")
    shutil.copy(HERE / "alias_bomb.yaml", toy / "bomb.yaml")
    result = timed("run", str(flow), "--param", "bomb.yaml", cwd=toy)
    clear_error(result, "bomb.yaml:6: aliases expand to more than 100,000 values")
    assert not (toy / "output").exists()  # refused before the run folder and the servers


def test_pipeline_alias_bomb_is_refused(toy: Path) -> None:
    shutil.copy(HERE / "alias_bomb_pipeline.yaml", toy / "pipes" / "bomb.yaml")
    result = timed("build", "pipes/bomb.yaml", cwd=toy)
    clear_error(result, "pipes/bomb.yaml:", "aliases expand to more than 100,000 values")
    assert not list((toy / "pipes" / "parameters").iterdir())


def test_call_value_alias_bomb_is_refused(tmp_path: Path) -> None:
    result = timed("call", "evaluation.evaluate_trec", f"ks={bomb_value()}", cwd=tmp_path)
    clear_error(result, "argument 'ks': aliases expand to more than 100,000 values")
    assert result.stdout == ""


def test_call_value_that_contains_itself_is_refused(tmp_path: Path) -> None:
    result = timed("call", "evaluation.evaluate_trec", "ks=&a [1, *a]", cwd=tmp_path)
    clear_error(result, "argument 'ks': alias *a refers to a mapping or list that contains it")


def test_5000_level_pipeline_is_refused(toy: Path) -> None:
    deep = toy / "pipes" / "deep.yaml"
    deep.write_text("servers:\n  toy: toyservers/toy\npipeline: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    result = timed("run", "pipes/deep.yaml", cwd=toy)
    clear_error(result, "pipes/deep.yaml:3: nested more than 100 levels deep")
    assert not (toy / "output").exists()


def test_deep_block_parameter_file_is_refused(toy: Path) -> None:
    """300 block levels (90 KB; 5,000 would be 25 MB, over the size limit: see test_client_yaml_size.py)."""
    flow = pipeline(toy, "flow", "  - toy.make_items\n")
    deep = "toy:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(300)) + "  " * 301 + "end\n"
    (toy / "deep.yaml").write_text(deep, encoding="utf-8")
    result = timed("run", str(flow), "--param", "deep.yaml", cwd=toy)
    clear_error(result, "deep.yaml:101: nested more than 100 levels deep")


def test_5000_level_call_value_is_refused(tmp_path: Path) -> None:
    result = timed("call", "evaluation.evaluate_trec", "ks=" + "[" * 5000 + "]" * 5000, cwd=tmp_path)
    clear_error(result, "argument 'ks': nested more than 100 levels deep")


def aliased_run(folder: Path) -> Command:
    """``ultra run`` of a toy pipeline whose parameters use a small alias: a spare background run."""
    toy = toy_folder(folder)
    flow = pipeline(toy, "flow", "  - toy.make_items\n  - toy.append_mark\n", "toy:\n  mark: &m '!'\n  words: *m\n")
    return Command(("run", str(flow)), timeout=120, cwd=toy)


@in_background(aliased_run, spare=True)
def test_modest_aliases_still_work(background_run: Finished) -> None:
    """Aliases are fine when they stay small: `words` reuses the anchored `mark`-like string."""
    result, toy = background_run.done, background_run.folder
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in (toy / "output").iterdir() if p.is_dir()]  # not the run index
    assert json.loads((folder / "memory.json").read_text())["items"] == ["!!"]
