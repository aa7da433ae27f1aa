"""Messages for mistakes in the pipeline, its files and a tool's partial failures; log folders of ``ultra call``."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error, pipeline, toy_folder
from tests.support.background import Command, Finished, Prepare, in_background

LOGGING_SERVER = '''\
import logging
from pathlib import Path

from ultra_base.errors import InputError
from ultra_kit.factory import ServerSpec


def quiet(value: int) -> dict:
    """Fail on a negative value, logging nothing."""
    if value < 0:
        raise InputError("value must be >= 0")
    return {"value": value}


def chatty(value: int) -> dict:
    """Log a warning, then fail."""
    logging.getLogger("chatty").warning("looked at value %s", value)
    raise InputError("value is never right")


SPEC = ServerSpec("logpkg", Path(__file__).parent, lambda: [quiet, chatty])
'''


def logging_server(project: Path) -> dict[str, str]:
    """A server package with a SPEC (so ``ultra call`` runs it in-process); the env sends temp files to tmp/."""
    package = project / "logpkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "server.py").write_text(LOGGING_SERVER, encoding="utf-8")
    (project / "tmp").mkdir()
    return {"TMPDIR": str(project / "tmp")}


def test_failed_call_with_an_empty_log_leaves_no_log_folder(tmp_path: Path) -> None:
    env = logging_server(tmp_path)
    result = run_ultra("call", "logpkg.quiet", "value=-1", cwd=tmp_path, env=env)
    clear_error(result, "logpkg.quiet failed", "value must be >= 0")
    assert "(log:" not in result.stderr and "full log" not in result.stderr
    assert list((tmp_path / "tmp").iterdir()) == []


def test_failed_call_names_the_log_it_keeps(tmp_path: Path) -> None:
    env = logging_server(tmp_path)
    result = run_ultra("call", "logpkg.chatty", "value=3", cwd=tmp_path, env=env)
    clear_error(result, "logpkg.chatty failed", "value is never right", "(log: ")
    log = Path(result.stderr.split("(log: ")[1].split(")")[0])
    assert log.parent.parent == tmp_path / "tmp" and "looked at value 3" in log.read_text()
    assert list((tmp_path / "tmp").iterdir()) == [log.parent]


def test_successful_call_leaves_no_log_folder(tmp_path: Path) -> None:
    env = logging_server(tmp_path)
    result = run_ultra("call", "logpkg.quiet", "value=2", cwd=tmp_path, env=env)
    assert result.returncode == 0 and json.loads(result.stdout) == {"value": 2}
    assert list((tmp_path / "tmp").iterdir()) == []


def test_missing_server_path_names_the_pipeline_line(toy: Path) -> None:
    bad = toy / "pipes" / "bad.yaml"
    bad.write_text("servers:\n  toy: toyservers/toy\n  gone: servers/nowhere\npipeline:\n  - toy.make_items\n")
    result = run_ultra("run", "pipes/bad.yaml", cwd=toy)
    clear_error(result, "pipes/bad.yaml:3: server 'gone': no server package at 'servers/nowhere'")
    assert not (toy / "output").exists()


def test_directory_given_as_pipeline(toy: Path) -> None:
    for command in ("build", "run"):
        result = run_ultra(command, "pipes", cwd=toy)
        clear_error(result, "pipes: is a directory, expected a pipeline YAML file")


def test_fifo_given_as_pipeline_or_parameter_file(toy: Path) -> None:
    os.mkfifo(toy / "fifo.yaml")
    clear_error(run_ultra("run", "fifo.yaml", cwd=toy), "fifo.yaml: is a FIFO, expected a pipeline YAML file")
    flow = pipeline(toy, "flow", "  - toy.make_items\n")
    result = run_ultra("run", str(flow), "--param", "fifo.yaml", cwd=toy, timeout=30)
    clear_error(result, "fifo.yaml: is a FIFO, expected a parameter YAML file")


def test_loop_count_above_the_bound(toy: Path) -> None:
    flow = pipeline(toy, "loop", "  - loop:\n      times: 1000000000000\n      steps: [toy.make_items]\n")
    result = run_ultra("build", str(flow), cwd=toy)
    clear_error(result, "pipes/loop.yaml:5: loop times must be a positive integer of at most 10,000")
    assert not list((toy / "pipes" / "parameters").iterdir())


def test_parameter_section_for_an_unknown_server(toy: Path) -> None:
    params = "toy:\n  words: a\ntoys:\n  mark: '?'\n"
    flow = pipeline(toy, "flow", "  - toy.make_items\n  - toy.append_mark\n", params)
    result = run_ultra("run", str(flow), cwd=toy)
    clear_error(
        result,
        "pipes/parameters/flow_parameter.yaml:3: section 'toys' is not a server of the pipeline",
        "the pipeline's servers: ['toy']",
    )
    assert not (toy / "output").exists()


def toy_score_run(words: str) -> Prepare:
    """``ultra run`` of the toy pipeline that scores ``words``: a spare background run (tests/support/background.py)."""

    def prepare(folder: Path) -> Command:
        toy = toy_folder(folder)
        flow = pipeline(toy, "score", "  - toy.make_items\n  - toy.score_items\n", f"toy:\n  words: {words}\n")
        return Command(("run", str(flow)), timeout=120, cwd=toy)

    return prepare


@in_background(toy_score_run("a bad slow bad ok"), spare=True)
def test_partial_failures_are_summed_up_after_the_step(background_run: Finished) -> None:
    result, toy = background_run.done, background_run.folder
    assert result.returncode == 0, result.stderr
    line = "toy.score_items: 3 of 5 failed (parse 2, timeout 1; first: item 1: parse on 'bad')"
    assert line in result.stderr.splitlines()[result.stderr.splitlines().index("[ultra] toy.score_items") + 1]
    (folder,) = [p for p in (toy / "output").iterdir() if p.is_dir()]  # not the run index
    assert json.loads((folder / "memory.json").read_text())["scores"] == [1.0, None, None, None, 1.0]


@in_background(toy_score_run("a ok"), spare=True)
def test_no_failure_line_when_nothing_failed(background_run: Finished) -> None:
    result = background_run.done
    assert result.returncode == 0, result.stderr
    assert "failed" not in result.stderr


def test_step_timeout_nan_is_refused(toy: Path) -> None:
    flow = pipeline(toy, "nan", "  - toy.make_items:\n      timeout: .nan\n")
    result = run_ultra("build", str(flow), cwd=toy)
    clear_error(result, "pipes/nan.yaml:4: timeout of 'toy.make_items' must be a positive number of seconds")
