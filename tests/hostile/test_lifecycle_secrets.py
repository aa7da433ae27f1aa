"""``${VAR}`` values reach the servers that need them and nothing the servers write, return or print.

Real CLI runs (``python ultra.py``) with real server subprocesses; the LLM is the local stub
server on 127.0.0.1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import umbrela_pipeline
from tests.support.background import Command, Finished, in_background
from tests.support.openai_stub import OpenAIStub
from tests.support.together import at_once

TOY_SOURCE = ROOT / "tests" / "client" / "toy_server"
SECRET_MODEL = "model-SECRET-7d1e93b2"
SECRET_KEY = "sk-SECRET-KEY-0b8a4c"
SECRET_MARK = "mark-SECRET-5f02aa"


def toy_project(tmp_path: Path, steps: str) -> Path:
    shutil.copytree(TOY_SOURCE, tmp_path / "toyservers" / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pipes").mkdir()
    (tmp_path / "pipes" / "p.yaml").write_text("servers:\n  toy: toyservers/toy\npipeline:\n" + steps)
    return tmp_path


def files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_call_stdio_passes_the_variables_parameter_yaml_references(tmp_path: Path) -> None:
    project = toy_project(tmp_path, "  - toy.key_length\n")
    ran = at_once({
        "stdio": lambda: run_ultra("call", "--stdio", "toy.key_length", cwd=project / "toyservers",
                                   env={"TOY_SECRET": "twelve-chars"}),
        "in process": lambda: run_ultra("call", "--timeout", "30", "toy.key_length", cwd=project / "toyservers",
                                        env={"TOY_SECRET": "abcdefg"}),
    })  # both calls at once  # fmt: skip
    done = ran["stdio"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"key_length": 12}
    done = ran["in process"]
    assert json.loads(done.stdout) == {"key_length": 7}


def test_call_stdio_passes_a_variable_named_only_on_the_command_line(tmp_path: Path) -> None:
    """The server gets the variable and never echoes it. (A key sent to a host its parameter file did not
    configure is refused over stdio: tests/hostile/test_keys_hosts.py.)"""
    project = toy_project(tmp_path, "  - toy.key_length\n")
    done = run_ultra(
        "call",
        "--stdio",
        "toy.key_length",
        "api_key=${ONLY_ON_THE_COMMAND_LINE}",
        cwd=project / "toyservers",
        env={"ONLY_ON_THE_COMMAND_LINE": SECRET_KEY},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"key_length": len(SECRET_KEY)}
    assert SECRET_KEY not in done.stdout + done.stderr
    assert files_holding(tmp_path, SECRET_KEY) == []


def test_a_secret_model_id_appears_in_no_output_of_a_run(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        judge_llm = {"base_url": stub.base_url, "model_id": "${SECRET_MODEL}", "api_key": "${SECRET_KEY}"}
        umbrela_pipeline(tmp_path, judge_llm)
        done = run_ultra(
            "run",
            "pipes/judge.yaml",
            "--param",
            "params.yaml",
            cwd=tmp_path,
            env={"SECRET_MODEL": SECRET_MODEL, "SECRET_KEY": SECRET_KEY},
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert {s.body.get("model") for s in stub.served} == {SECRET_MODEL}  # the secret was used ...
    run_folder = Path(done.stderr.split("run folder: ")[1].splitlines()[0])
    memory = json.loads((tmp_path / run_folder / "memory.json").read_text())
    result_file = tmp_path / run_folder / memory["result_path"]  # relative to the run folder
    assert result_file.is_file()
    for secret in (SECRET_MODEL, SECRET_KEY):  # ... and is nowhere in what the run wrote or printed
        assert files_holding(tmp_path, secret) == []
        assert secret not in done.stdout + done.stderr
    document = json.loads(result_file.read_text())
    assert document["settings"]["judge_llm"]["model_id"] == "***"


def redacted_run(folder: Path) -> Command:
    """The toy pipeline whose last step crashes, its mark a secret ``${TOY_MARK}``: a spare background run."""
    project = toy_project(folder, "  - toy.make_items\n  - toy.append_mark\n  - toy.explode\n")
    (project / "params.yaml").write_text("toy:\n  words: a bb\n  mark: ${TOY_MARK}\n")
    return Command(("run", "pipes/p.yaml", "--param", "params.yaml"), timeout=120, env={"TOY_MARK": SECRET_MARK},
                   cwd=project)  # fmt: skip


@in_background(redacted_run, spare=True)
def test_a_secret_setting_is_redacted_in_results_errors_and_logs(background_run: Finished) -> None:
    project, done = background_run.folder, background_run.done
    assert done.returncode == 1
    # the crash names its type, its (redacted) message and the server's log
    assert (
        "step 'toy.explode' failed: Error executing tool explode: unexpected error: ValueError: cannot count a***"
        in (done.stderr)
    )
    log = next((project / "output").glob("p_*/logs/toy.stderr.log"))
    assert f"traceback in the server's log, {log.resolve()}" in done.stderr
    text = log.read_text()  # the SDK's log handler wraps long lines
    assert "Traceback (most recent call last)" in text and "ValueError: cannot count a*** with" in text
    assert SECRET_MARK not in done.stdout + done.stderr
    assert files_holding(project, SECRET_MARK) == []
