"""Pipeline and parameter files over the size limit (``ultra_base.file_limits.MAX_BYTES``): refused unread.

Through the real CLI: ``ultra build`` and ``ultra run`` on a large pipeline, ``ultra run --param`` on a
large parameter file, and ``ultra call`` on a server whose own ``parameter.yaml`` is too large. The
error names the file, its size, the limit and what to do; nothing is written. A file of exactly the
limit still runs. A server's ``parameter.yaml`` gets the alias limit of pipelines too (the same loader).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import HERE, clear_error, pipeline, toy_folder
from tests.support.background import Command, Finished, in_background
from tests.support.slow_server import write_slow_server
from ultra_base.file_limits import MAX_BYTES

TOO_LARGE = f"the file is {MAX_BYTES + 1:,} bytes, more than the {MAX_BYTES:,} bytes a"
ADVICE = "it was not read. Keep large values (data, lists of questions) in a data file"


def padded(text: str, size: int) -> str:
    """``text`` and a comment line that brings it to ``size`` bytes (valid YAML, the same meaning)."""
    padding = size - len(text.encode()) - 2
    assert padding >= 0
    return text + "#" + "x" * padding + "\n"


@pytest.mark.parametrize("command", ["build", "run"])
def test_pipeline_over_the_size_limit_is_refused(toy: Path, command: str) -> None:
    flow = pipeline(toy, "big", "  - toy.make_items\n")
    flow.write_text(padded(flow.read_text(), MAX_BYTES + 1), encoding="utf-8")
    result = run_ultra(command, "pipes/big.yaml", cwd=toy, timeout=60)
    clear_error(result, f"pipes/big.yaml: {TOO_LARGE} pipeline", ADVICE)
    assert not list((toy / "pipes" / "parameters").iterdir())
    assert not (toy / "output").exists()


def test_parameter_file_over_the_size_limit_is_refused_before_any_server_starts(toy: Path) -> None:
    flow = pipeline(toy, "flow", "  - toy.make_items\n")
    (toy / "big.yaml").write_text(padded("toy:\n  words: a b\n", MAX_BYTES + 1), encoding="utf-8")
    result = run_ultra("run", str(flow), "--param", "big.yaml", cwd=toy, timeout=60)
    clear_error(result, f"big.yaml: {TOO_LARGE} parameter file", ADVICE)
    assert not (toy / "output").exists()


def full_parameter_file_run(folder: Path) -> Command:
    """``ultra run`` of a toy pipeline with a parameter file of exactly the limit: a spare background run."""
    toy = toy_folder(folder)
    flow = pipeline(toy, "flow", "  - toy.make_items\n")
    (toy / "full.yaml").write_text(padded("toy:\n  words: a b\n", MAX_BYTES), encoding="utf-8")
    return Command(("run", str(flow), "--param", "full.yaml"), timeout=60, cwd=toy)


@in_background(full_parameter_file_run, spare=True)
def test_parameter_file_of_exactly_the_limit_runs(background_run: Finished) -> None:
    result, toy = background_run.done, background_run.folder
    assert (toy / "full.yaml").stat().st_size == MAX_BYTES
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in (toy / "output").iterdir() if p.is_dir()]  # not the run index
    assert json.loads((folder / "memory.json").read_text())["items"] == ["a", "b"]


def test_server_parameter_yaml_over_the_size_limit_is_refused_by_call(tmp_path: Path) -> None:
    settings = write_slow_server(tmp_path) / "parameter.yaml"
    settings.write_text(padded(settings.read_text(), MAX_BYTES + 1), encoding="utf-8")
    result = run_ultra("call", "slowsrv.slow_write", "seconds=0", f"directory={tmp_path}", cwd=tmp_path, timeout=60)
    clear_error(result, f"slowsrv/parameter.yaml: {TOO_LARGE} parameter file", ADVICE)
    assert result.stdout == ""
    assert not (tmp_path / "output").exists()


def test_server_parameter_yaml_alias_bomb_is_refused_by_call(tmp_path: Path) -> None:
    bomb = (HERE / "alias_bomb.yaml").read_text(encoding="utf-8").replace("toy:", "bomb:", 1)
    (write_slow_server(tmp_path) / "parameter.yaml").write_text("seconds: 0\ndirectory: .\n" + bomb, encoding="utf-8")
    result = run_ultra("call", "slowsrv.slow_write", f"directory={tmp_path}", cwd=tmp_path, timeout=60)
    clear_error(result, "slowsrv/parameter.yaml:8: aliases expand to more than 100,000 values")
    assert not (tmp_path / "output").exists()


@pytest.mark.parametrize("how", ["--args-file", "key=@file"])
def test_a_value_file_of_three_gigabytes_is_refused_unread(tmp_path: Path, how: str) -> None:
    """``ultra call --args-file big.json`` (or ``q_ls=@big.json``) read a 3 GB file whole, to a MemoryError
    traceback: a value file has ``MAX_VALUE_FILE_BYTES`` at most. The file is sparse: no disk is used."""
    from ultra_base.file_limits import MAX_VALUE_FILE_BYTES

    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(3 * 1024**3)
    given = ["--args-file", "big.json", "evaluation.evaluate"] if how == "--args-file" else [
        "evaluation.evaluate", "q_ls=@big.json"]  # fmt: skip
    done = run_ultra("call", *given, cwd=tmp_path, timeout=60)
    noun = "an arguments file" if how == "--args-file" else "a JSON file"
    clear_error(done, f"big.json: the file is 3,221,225,472 bytes, more than the {MAX_VALUE_FILE_BYTES:,} bytes {noun}",
                "it was not read. Give the tool the path of a data file instead")  # fmt: skip
