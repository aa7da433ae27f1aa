"""The ``ultra`` command as a user runs it: real subprocesses, the shipped example, and bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.client.conftest import write_pipeline
from tests.conftest import ROOT, run_ultra


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A temporary copy of the example and its data (the servers come from the installation)."""
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "load_data.yaml", tmp_path / "examples")
    shutil.copytree(ROOT / "data", tmp_path / "data", ignore=shutil.ignore_patterns("*.parquet"))
    return tmp_path


def assert_one_clear_error(result, *fragments: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("[ultra]")]
    assert lines and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_build_then_run_the_load_data_example(project: Path) -> None:
    built = run_ultra("build", "examples/load_data.yaml", cwd=project)
    assert built.returncode == 0, built.stderr
    params = project / "examples" / "parameters" / "load_data_parameter.yaml"
    shipped = yaml.safe_load((ROOT / "examples" / "parameters" / "load_data_parameter.yaml").read_text())
    assert yaml.safe_load(params.read_text()) == shipped
    ran = run_ultra("run", "examples/load_data.yaml", cwd=project)
    assert ran.returncode == 0, ran.stderr
    (folder,) = [p for p in (project / "output").iterdir() if p.is_dir()]  # not the run index
    assert folder.name.startswith("load_data_")
    memory = json.loads((folder / "memory.json").read_text())
    rows = [json.loads(line) for line in (project / "data" / "sample_qa.jsonl").read_text().splitlines()]
    assert memory["q_ls"] == [row["question"] for row in rows]
    assert memory["id_ls"] == [row["id"] for row in rows]
    assert memory["data_info"]["kept_rows"] == len(rows)
    assert (folder / "logs" / "benchmark.log").is_file()  # in-process: the server's log file
    assert (folder / "parameters.yaml").read_text() == params.read_text()


def test_call_prints_json_and_merges_dotted_settings(project: Path) -> None:
    result = run_ultra(
        "call", "benchmark.get_data", "benchmark.limit=2", "benchmark.key_map={q_ls: question}", cwd=project
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert len(data["q_ls"]) == 2 and set(data) == {"q_ls", "data_info"}


def test_tools_lists_settings_and_outputs(project: Path) -> None:
    result = run_ultra("tools", "benchmark", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "benchmark.get_data" in result.stdout
    assert (
        '    setting benchmark:\n      name = ""\n      path = "data/sample_qa.jsonl"\n' in result.stdout
        and "outputs: q_ls, gt_ls, pred_ls, id_ls, ctx_ls, answerability_ls, idk_ls, group_ls, data_path,\n"
        "      data_info\n"
        in result.stdout
    )
    whole = run_ultra("tools", "benchmark", "--full", cwd=project)
    assert '    setting benchmark = {"name": "", "path": "data/sample_qa.jsonl", ' in whole.stdout


@pytest.mark.parametrize("host", ["claude", "cursor", "vscode"])
def test_mcp_config(project: Path, host: str) -> None:
    result = run_ultra("mcp-config", "--host", host, cwd=project)
    assert result.returncode == 0
    config = json.loads(result.stdout)
    servers = config["servers" if host == "vscode" else "mcpServers"]
    entry = servers["ultra-benchmark"]
    assert entry["args"] == ["-m", "servers.benchmark"] and Path(entry["command"]).is_absolute()
    assert entry["env"]["PYTHONPATH"] == str(ROOT)
    assert ("type" in entry) == (host == "vscode")


def test_mcp_config_names_the_checkout_it_runs_in(tmp_path: Path) -> None:
    """Run from inside another checkout (here: a clone of this one's layout), the entries point there, not
    at the checkout whose code runs the command (a pip-installed one, say)."""
    clone = tmp_path / "clone"
    (clone / "examples").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", clone)
    (clone / "servers").symlink_to(ROOT / "servers")
    result = run_ultra("mcp-config", "--host", "claude", cwd=clone / "examples")
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)["mcpServers"]["ultra-judge"]
    assert entry["cwd"] == entry["env"]["PYTHONPATH"] == entry["env"]["ULTRA_HOME"] == str(clone)
    assert entry["cwd"] != str(ROOT)


def test_help_is_light(project: Path) -> None:
    """``ultra --help`` imports none of the heavy packages (mcp alone takes about 2 s to import)."""
    result = run_ultra("--help", cwd=project)
    assert result.returncode == 0 and "build" in result.stdout
    probe = (
        "import sys, contextlib, io, ultra\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit): ultra.main(['--help'])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'pydantic', 'numpy', 'pyarrow', 'openai'}))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]", loaded.stdout


BROKEN_SERVER = "import nonexistent_module_for_ultra_test\n"


@pytest.mark.parametrize(
    ("case", "pipeline_text", "fragments"),
    [
        (
            "yaml-syntax",
            "servers:\n  benchmark: servers/benchmark\npipeline:\n  - benchmark.get_data: [\n",
            ["bad.yaml:", "YAML syntax error"],
        ),
        (
            "step-shape",
            "servers:\n  benchmark: servers/benchmark\npipeline:\n  - {a: 1, b: 2}\n",
            ["bad.yaml:4: a step is"],
        ),
        (
            "unknown-server",
            "servers:\n  benchmark: servers/benchmark\npipeline:\n  - bench.get_data\n",
            ["bad.yaml:4: unknown server 'bench'"],
        ),
        (
            "missing-server-path",
            "servers:\n  benchmark: servers/nowhere\npipeline:\n  - benchmark.get_data\n",
            ["server 'benchmark': no server package at 'servers/nowhere'"],
        ),
        (
            "unknown-tool",
            "servers:\n  benchmark: servers/benchmark\npipeline:\n  - benchmark.get_dat\n",
            ["bad.yaml:4: server 'benchmark' has no tool 'get_dat'; its tools: ['get_data']"],
        ),
        (
            "broken-server",
            "servers:\n  broken: brokenpkg\npipeline:\n  - broken.x\n",
            [
                "server 'broken' (brokenpkg.server) failed to start",
                "ModuleNotFoundError: No module named 'nonexistent_module_for_ultra_test'",
                "full log:",
            ],
        ),
    ],
)
def test_build_rejects_bad_pipelines_without_writing(
    project: Path, case: str, pipeline_text: str, fragments: list[str]
) -> None:
    (project / "brokenpkg").mkdir()
    (project / "brokenpkg" / "__init__.py").write_text("")
    (project / "brokenpkg" / "server.py").write_text(BROKEN_SERVER)
    path = project / "examples" / "bad.yaml"
    path.write_text(pipeline_text, encoding="utf-8")
    result = run_ultra("build", "examples/bad.yaml", cwd=project)
    assert_one_clear_error(result, *fragments)
    assert not (project / "examples" / "parameters").exists()


def write_params(project: Path, benchmark: dict) -> None:
    params = project / "examples" / "parameters"
    params.mkdir(exist_ok=True)
    (params / "load_data_parameter.yaml").write_text(
        yaml.safe_dump({"benchmark": {"benchmark": benchmark}}), encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("case", "setup", "fragments"),
    [
        (
            "missing-data-file",
            {"path": "data/absent.jsonl", "key_map": {"q_ls": "question"}},
            ["data/absent.jsonl: dataset file not found"],
        ),
        (
            "bad-jsonl-line",
            {"path": "data/bad.jsonl", "key_map": {"q_ls": "question"}},
            ["data/bad.jsonl:2: invalid JSON"],
        ),
        (
            "absent-field",
            {"path": "data/sample_qa.jsonl", "key_map": {"q_ls": "query"}},
            ["field 'query' (key_map.q_ls) is in no record"],
        ),
        (
            "limit-zero",
            {"path": "data/sample_qa.jsonl", "key_map": {"q_ls": "question"}, "limit": 0},
            ["benchmark.limit must be -1"],
        ),
    ],
)
def test_run_rejects_bad_data_without_memory(project: Path, case: str, setup: dict, fragments: list[str]) -> None:
    (project / "data" / "bad.jsonl").write_text('{"question": "ok"}\n{"question": \n', encoding="utf-8")
    write_params(project, setup)
    result = run_ultra("run", "examples/load_data.yaml", cwd=project)
    assert_one_clear_error(result, "load_data.yaml:6: step 'benchmark.get_data' failed", *fragments)
    (folder,) = [p for p in (project / "output").iterdir() if p.is_dir()]  # not the run index
    assert not (folder / "memory.json").exists()


def test_malformed_parameter_file(project: Path) -> None:
    bad = project / "bad_params.yaml"
    bad.write_text("benchmark: [1, 2\n", encoding="utf-8")
    result = run_ultra("run", "examples/load_data.yaml", "--param", str(bad), cwd=project)
    assert_one_clear_error(result, "bad_params.yaml:", "YAML syntax error")


def test_missing_pipeline_file(project: Path) -> None:
    assert_one_clear_error(
        run_ultra("run", "examples/nope.yaml", cwd=project), "examples/nope.yaml: pipeline file not found"
    )


def test_call_with_unknown_parameter(project: Path) -> None:
    result = run_ultra("call", "benchmark.get_data", "limit=3", cwd=project)
    assert_one_clear_error(result, "'get_data' has no parameter 'limit'; its parameters: ['benchmark']")


def test_call_tool_error(project: Path) -> None:
    result = run_ultra("call", "benchmark.get_data", "benchmark.limit=0", cwd=project)
    assert_one_clear_error(result, "benchmark.get_data failed", "benchmark.limit must be -1")
    assert result.stdout == ""


def test_variable_used_before_produced_in_a_real_build(tmp_path: Path) -> None:
    shutil.copytree(
        Path(__file__).parent / "toy_server",
        tmp_path / "toyservers" / "toy",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (tmp_path / "pipes").mkdir()
    pipeline = write_pipeline(tmp_path, "flow", "  - toy.upper\n  - toy.make_items\n")
    result = run_ultra("build", str(pipeline), cwd=tmp_path)
    assert_one_clear_error(result, "flow.yaml:4: 'toy.upper' needs variable 'items', which no earlier step produces")


def test_a_run_stopped_by_its_start_up_checks_leaves_no_run_folder(project: Path) -> None:
    pipeline = project / "examples" / "flow.yaml"
    pipeline.write_text("servers:\n  evaluation: servers/evaluation\npipeline:\n  - evaluation.evaluate\n")
    (project / "output").mkdir()
    (project / "output" / "mine.txt").write_text("the user's")  # not the run's: stays
    result = run_ultra("run", str(pipeline), cwd=project)
    assert_one_clear_error(result, "'evaluation.evaluate' needs variable")
    assert sorted(p.name for p in (project / "output").iterdir()) == ["mine.txt"]
    assert "[ultra] removed " in result.stderr and "before its first step" in result.stderr
    (project / "output" / "mine.txt").unlink()
    (project / "output").rmdir()
    assert_one_clear_error(run_ultra("run", str(pipeline), cwd=project), "'evaluation.evaluate' needs variable")
    assert not (project / "output").exists()  # made by the run, removed with its folder


def test_a_run_whose_step_fails_keeps_its_folder(project: Path) -> None:
    assert run_ultra("build", "examples/load_data.yaml", cwd=project).returncode == 0
    params = project / "examples" / "parameters" / "load_data_parameter.yaml"
    params.write_text(params.read_text().replace("limit: -1", "limit: 0"))
    result = run_ultra("run", "examples/load_data.yaml", cwd=project)
    assert_one_clear_error(result, "benchmark.limit must be -1")
    (folder,) = (project / "output").iterdir()
    assert (folder / "parameters.yaml").is_file() and "removed" not in result.stderr


def test_python_dash_m_ultra_client_cli_runs_the_command_line(tmp_path: Path) -> None:
    """``python -m ultra_client.cli ARGS`` is ``ultra ARGS`` (it ran nothing and exited 0, silently)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "ultra_client.cli", "--help"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.startswith("usage: ultra"), (done.stdout, done.stderr)
    wrong = subprocess.run([sys.executable, "-m", "ultra_client.cli", "no-such-command"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert wrong.returncode == 2 and "invalid choice: 'no-such-command'" in wrong.stderr, wrong.stderr
