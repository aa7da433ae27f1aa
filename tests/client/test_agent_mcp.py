"""What an agent host sees: real MCP stdio servers started as a host starts them, and the real CLI.

Unknown arguments are rejected naming the closest parameter, on every path (MCP, in-process
``ultra call``, ``ultra call --stdio``, ``ultra run``); a mapping setting given in part takes the
left-out keys from ``parameter.yaml``; a server started in another folder (``/``) with
``ULTRA_HOME`` finds the default data and writes under ``<ULTRA_HOME>/output``; returned paths are
absolute; a working directory where results cannot go gives an error that says what to do.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import ROOT, run_ultra
from tests.support.together import at_once

AGENT_TOY = '''\
"""A server with a mapping setting whose values include a map of user names (``names``)."""

from pathlib import Path
from typing import Any

from ultra_kit.factory import ServerSpec


def show_options(*, options: dict[str, Any], label: str) -> dict[str, Any]:
    """Return the options as the tool received them."""
    return {"options": options, "label": label}


SPEC = ServerSpec("agenttoy", Path(__file__).parent, lambda: [show_options])

if __name__ == "__main__":
    SPEC.create_app().run()
'''
AGENT_TOY_PARAMETERS = """\
options:
  alpha: 1
  beta: two
  names: {q_ls: question, gt_ls: answer}
label: x
"""
MERGED = {"alpha": 5, "beta": "two", "names": {"q_ls": "question", "gt_ls": "answer"}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder: the sample data (linked), the ``agenttoy`` server package, nothing else."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "data").symlink_to(ROOT / "data")
    package = root / "agenttoy"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "server.py").write_text(AGENT_TOY, encoding="utf-8")
    (package / "__main__.py").write_text("from agenttoy.server import SPEC\n\nSPEC.create_app().run()\n")
    (package / "parameter.yaml").write_text(AGENT_TOY_PARAMETERS, encoding="utf-8")
    return root


def host_env(**extra: str) -> dict[str, str]:
    """What an agent host passes: PATH, PYTHONPATH and the entry's env (no ULTRA_ALLOW_OUTSIDE_OUTPUT), where
    the user lists the repository's sample data as a read root (the project links to it, outside itself)."""
    data = str(ROOT / "data")
    return {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "ULTRA_READ_ROOTS": data, **extra}


async def call(module: str, tool: str, arguments: dict[str, Any], *, cwd: Path | str, env: dict[str, str]):
    params = StdioServerParameters(command=sys.executable, args=["-m", module], cwd=str(cwd), env=env)
    async with Client(params) as client:
        return await client.call_tool(tool, arguments)


def text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


# --- unknown arguments ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_unknown_argument_over_mcp_names_the_closest_parameter() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "servers.evaluation"], cwd=str(ROOT), env=host_env()
    )
    async with Client(params) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("evaluate_trec", {"k": 10, "ir_metrics": ["map"]})
    assert all(tool.input_schema.get("additionalProperties") is False for tool in listed.values())
    assert result.is_error, "an unknown argument must not give default results"
    message = text(result)
    assert "'evaluate_trec' has no parameter 'k' (did you mean 'ks'?)" in message
    assert "its parameters: ['run_path', 'qrels_path', 'ir_metrics', 'ks'," in message


@pytest.mark.anyio
async def test_unknown_key_of_a_typed_mapping_over_mcp() -> None:
    result = await call(
        "servers.benchmark", "get_data", {"benchmark": {"pth": "data/x.jsonl", "limit": 1}}, cwd=ROOT, env=host_env()
    )
    assert result.is_error
    assert "'benchmark' has no key 'pth' (did you mean 'path'?); its keys: ['name', 'path'," in text(result)


@pytest.mark.parametrize("stdio", [False, True])
def test_unknown_argument_with_ultra_call(tmp_path: Path, stdio: bool) -> None:
    flags = ["--stdio"] if stdio else []
    ran = at_once({
        "result": lambda: run_ultra("call", *flags, "evaluation.evaluate_trec", "k=10", cwd=tmp_path),
        "typed": lambda: run_ultra("call", *flags, "benchmark.get_data", "benchmark={pth: data/x.jsonl}", cwd=tmp_path),
    })  # both refused calls at once  # fmt: skip
    result, typed = ran["result"], ran["typed"]
    assert result.returncode == 1 and "has no parameter 'k' (did you mean 'ks'?)" in result.stderr
    assert typed.returncode == 1 and "'benchmark' has no key 'pth' (did you mean 'path'?)" in typed.stderr
    assert "Traceback" not in result.stderr + typed.stderr


def test_unknown_argument_in_a_pipeline_rename(tmp_path: Path) -> None:
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(
        "servers:\n  evaluation: servers/evaluation\npipeline:\n  - evaluation.evaluate_trec:\n"
        "      input: {runpath: my_run}\n",
        encoding="utf-8",
    )
    result = run_ultra("run", str(pipeline), cwd=tmp_path)
    assert result.returncode == 1
    assert "p.yaml:4: input rename: 'evaluation.evaluate_trec' has no parameter 'runpath'" in result.stderr
    assert "(did you mean 'run_path'?)" in result.stderr


# --- partial mapping settings --------------------------------------------------------------------


@pytest.mark.anyio
async def test_partial_mapping_over_mcp_takes_the_left_out_keys(project: Path) -> None:
    env = host_env(PYTHONPATH=f"{project}{os.pathsep}{ROOT}")
    params = StdioServerParameters(command=sys.executable, args=["-m", "agenttoy"], cwd=str(project), env=env)
    async with Client(params) as client:
        partial = await client.call_tool("show_options", {"options": {"alpha": 5}})
        names = await client.call_tool("show_options", {"options": {"names": {"q_ls": "query"}}})
    assert not partial.is_error, text(partial)
    assert partial.structured_content["options"] == MERGED
    # a mapping inside the setting maps the caller's own names: it is taken whole, never merged into
    assert names.structured_content["options"] == {"alpha": 1, "beta": "two", "names": {"q_ls": "query"}}


def test_partial_mapping_with_ultra_call_and_ultra_run(project: Path) -> None:
    env = {"PYTHONPATH": f"{project}{os.pathsep}{ROOT}"}
    for flags in ([], ["--stdio"]):
        result = run_ultra("call", *flags, "agenttoy.show_options", "options={alpha: 5}", cwd=project, env=env)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["options"] == MERGED
    pipeline = project / "p.yaml"
    pipeline.write_text("servers:\n  agenttoy: agenttoy\npipeline:\n  - agenttoy.show_options\n", encoding="utf-8")
    (project / "parameters").mkdir()
    (project / "parameters" / "p_parameter.yaml").write_text(
        "agenttoy:\n  options: {alpha: 5}\n  label: y\n", encoding="utf-8"
    )
    run = run_ultra("run", str(pipeline), cwd=project, env=env)
    assert run.returncode == 0, run.stderr
    (folder,) = [p for p in (project / "output").iterdir() if p.is_dir()]  # not the run index
    assert json.loads((folder / "memory.json").read_text())["options"] == MERGED


# --- another working directory, absolute paths, a read-only working directory ---------------------


@pytest.mark.anyio
async def test_mcp_config_entry_started_in_root_finds_the_default_data(tmp_path: Path) -> None:
    config = run_ultra("mcp-config", "--host", "claude", cwd=tmp_path)
    entry = json.loads(config.stdout)["mcpServers"]["ultra-benchmark"]
    assert entry["cwd"] == str(ROOT) and entry["env"]["ULTRA_HOME"] == str(ROOT)
    # Claude Desktop ignores cwd and starts every server in /: the entry's env is what makes it work
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], cwd="/", env={"PATH": os.environ["PATH"], **entry["env"]}
    )
    async with Client(params) as client:
        result = await client.call_tool("get_data", {"benchmark": {"limit": 1}})
    assert not result.is_error, text(result)
    info = result.structured_content["data_info"]
    assert info["path"] == str(ROOT / "data" / "sample_qa.jsonl") and info["kept_rows"] == 1


@pytest.mark.anyio
async def test_server_started_elsewhere_writes_under_ultra_home_and_returns_absolute_paths(project: Path) -> None:
    result = await call(
        "servers.evaluation", "evaluate_trec", {"ir_metrics": ["map"]}, cwd="/", env=host_env(ULTRA_HOME=str(project))
    )
    assert not result.is_error, text(result)
    assert result.structured_content["eval_res"]["map"] == pytest.approx(0.1785, abs=1e-4)
    written = Path(result.structured_content["result_path"])
    assert written.is_absolute() and written.is_file()
    assert written.parent == project / "output" / "evaluation"
    assert not Path("/output").exists()


def test_in_process_call_returns_absolute_paths(project: Path) -> None:
    result = run_ultra("call", "evaluation.evaluate_trec", "ir_metrics=[map]", cwd=project)
    assert result.returncode == 0, result.stderr
    written = Path(json.loads(result.stdout)["result_path"])
    assert written.is_absolute() and written.parent == project / "output" / "evaluation" and written.is_file()


def blocked_folder(tmp_path: Path) -> Path:
    """A working directory where no results can go: ``output`` there is a file (tests run as root,
    so a read-only mode bit would not stop them)."""
    folder = tmp_path / "blocked"
    folder.mkdir()
    (folder / "output").write_text("not a folder", encoding="utf-8")
    return folder


@pytest.mark.anyio
async def test_unwritable_working_directory_gives_an_error_that_says_what_to_do(tmp_path: Path) -> None:
    arguments = {
        "run_path": str(ROOT / "data/trec/results.test"),
        "qrels_path": str(ROOT / "data/trec/qrels.test"),
        "ir_metrics": ["map"],
    }
    blocked = blocked_folder(tmp_path)
    result = await call("servers.evaluation", "evaluate_trec", arguments, cwd=blocked, env=host_env())
    assert result.is_error
    message = text(result)
    assert "Errno" not in message and "unexpected error" not in message
    assert f"{blocked}/output/evaluation" in message and "ULTRA_HOME=<project folder>" in message


@pytest.mark.anyio
async def test_unwritable_working_directory_with_ultra_home_writes_under_the_project(
    tmp_path: Path, project: Path
) -> None:
    env = host_env(ULTRA_HOME=str(project))
    result = await call("servers.evaluation", "evaluate_trec", {}, cwd=blocked_folder(tmp_path), env=env)
    assert not result.is_error, text(result)
    assert Path(result.structured_content["result_path"]).parent == project / "output" / "evaluation"


@pytest.mark.anyio
@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs /sys, read-only in containers")
async def test_read_only_working_directory(tmp_path: Path) -> None:
    try:
        os.mkdir("/sys/ultra-probe")
    except OSError:
        pass
    else:  # pragma: no cover - /sys writable after all
        os.rmdir("/sys/ultra-probe")
        pytest.skip("/sys is writable here")
    arguments = {"run_path": str(ROOT / "data/trec/results.test"), "qrels_path": str(ROOT / "data/trec/qrels.test")}
    result = await call("servers.evaluation", "evaluate_trec", arguments, cwd="/sys", env=host_env())
    assert result.is_error
    message = text(result)
    assert "cannot write results here" in message and "ULTRA_HOME" in message and "unexpected" not in message
