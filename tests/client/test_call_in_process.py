"""``ultra call`` runs a tool in-process by default; ``--stdio`` goes through a server subprocess and MCP.

Both must give the same output and the same errors, so every case runs both ways through the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, in_background
from tests.support.together import at_once
from ultra_base.errors import InputError
from ultra_client.calls.calling import call_in_process
from ultra_client.errors import UltraError
from ultra_kit.factory import ServerSpec

SAME_OUTPUT = [
    [
        "evaluation.evaluate_trec",
        f"run_path={ROOT}/data/trec/results.test",
        f"qrels_path={ROOT}/data/trec/qrels.test",
        "ir_metrics=[map, ndcg@10, P@5]",
    ],
    ["evaluation.evaluate", "pred_ls=[Paris, the cat sat]", "gt_ls=[[paris], [a cat sat down]]", "metrics=[em, f1]"],
    ["benchmark.get_data", "benchmark.limit=2", f"benchmark.path={ROOT}/data/sample_qa.jsonl"],
    ["custom.output_extract_from_boxed", 'ans_ls=["so \\\\boxed{42}", "no box"]'],
]

SAME_ERROR = [
    ["evaluation.evaluate_trec", "run_path=missing.run", f"qrels_path={ROOT}/data/trec/qrels.test"],
    ["evaluation.evaluate_trec", "ks=not-a-list"],
    ["evaluation.evaluate_trec", f"run_path={ROOT}/data/trec/results.test", "ir_metrics=[nonsense]"],
    ["evaluation.no_such_tool"],
    ["evaluation.evaluate_trec", "no_such_parameter=1"],
]


def _without_paths(value: Any, folder: Path) -> Any:
    """The output with the names of files written under ``folder`` replaced by their JSON content."""
    if isinstance(value, dict):
        return {k: _without_paths(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_paths(v, folder) for v in value]
    if isinstance(value, str) and value.startswith(str(folder)):
        data = json.loads(Path(value).read_text(encoding="utf-8"))
        return {"file": "written", "aggregate": data.get("aggregate")} if isinstance(data, dict) else "file"
    return value


@pytest.mark.parametrize("arguments", SAME_OUTPUT, ids=lambda a: a[0])
def test_in_process_and_stdio_give_the_same_output(tmp_path: Path, arguments: list[str]) -> None:
    modes = ([], ["--stdio"])  # both calls at once, each saving in its own folder

    def call(mode: list[str]):
        folder = tmp_path / ("stdio" if mode else "local")
        save = [f"save_path={folder}"] if arguments[0].startswith("evaluation.") else []
        return run_ultra("call", *mode, *arguments, *save, cwd=tmp_path)

    ran = at_once({i: lambda mode=mode: call(mode) for i, mode in enumerate(modes)})
    outputs = []
    for i, mode in enumerate(modes):
        folder = tmp_path / ("stdio" if mode else "local")
        done = ran[i]
        assert done.returncode == 0, done.stderr
        outputs.append(_without_paths(json.loads(done.stdout), folder))
    assert outputs[0] == outputs[1]
    assert outputs[0]  # a real result, not an empty one


@pytest.mark.parametrize("arguments", SAME_ERROR, ids=lambda a: " ".join(a)[:60])
def test_in_process_and_stdio_give_the_same_error(tmp_path: Path, arguments: list[str]) -> None:
    ran = at_once({i: lambda mode=mode: run_ultra("call", *mode, *arguments, cwd=tmp_path)
                   for i, mode in enumerate(([], ["--stdio"]))})  # both at once  # fmt: skip
    results = [ran[0], ran[1]]
    assert [r.returncode for r in results] == [1, 1]
    assert results[0].stderr == results[1].stderr
    assert results[0].stderr.startswith("error: ") and "Traceback" not in results[0].stderr
    assert not list(tmp_path.rglob("*.json"))  # nothing written


def _spec(tmp_path: Path, *tools: Any) -> ServerSpec:
    (tmp_path / "parameter.yaml").write_text("scale: 3\ntoken: ${SECRET_FOR_TEST}\n", encoding="utf-8")
    return ServerSpec("toy", tmp_path, lambda: list(tools))


def test_settings_context_and_async_tools_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    async def scaled(values: list[float], scale: int = 1, token: str = "", ctx: Context | None = None) -> dict:
        seen.update(ctx=ctx, token=token)
        return {"values": [v * scale for v in values]}

    def runs_its_own_loop(values: list[float]) -> dict:  # fine under the SDK: sync tools run in a thread
        import asyncio

        return {"values": asyncio.run(asyncio.sleep(0, result=values))}

    monkeypatch.setenv("SECRET_FOR_TEST", "s3cret")
    result = anyio.run(call_in_process, "toy.runs_its_own_loop", _spec(tmp_path, runs_its_own_loop), ["values=[4]"])
    assert result == {"values": [4]}
    result = anyio.run(call_in_process, "toy.scaled", _spec(tmp_path, scaled), ["values=[1, 2.5]"])
    assert result == {"values": [3, 7.5]}  # the parameter.yaml default applies
    assert seen == {"ctx": None, "token": "s3cret"}  # ${VAR} expanded at call time
    result = anyio.run(call_in_process, "toy.scaled", _spec(tmp_path, scaled), ["values=[1]", "scale=-2"])
    assert result == {"values": [-2]}


def test_crash_in_process_names_the_log_with_its_traceback(tmp_path: Path) -> None:
    def broken(path: str = "x") -> dict:
        raise RuntimeError("internal bug")

    def refused(path: str = "x") -> dict:
        raise InputError("expected a number", path=path, line=3)

    with pytest.raises(UltraError) as crash:
        anyio.run(call_in_process, "toy.broken", _spec(tmp_path, broken), [])
    message = str(crash.value)
    assert "toy.broken failed: Error executing tool broken: unexpected error: RuntimeError: internal bug" in message
    log = Path(message.split("(full log: ")[1].rstrip(")"))
    assert "Traceback" in log.read_text() and "RuntimeError: internal bug" in log.read_text()
    with pytest.raises(UltraError, match=r"^toy.refused failed: Error executing tool refused: data.tsv:3: expected"):
        anyio.run(call_in_process, "toy.refused", _spec(tmp_path, refused), ["path=data.tsv"])


class Context:  # the name tool modules annotate with; in-process it resolves to a placeholder
    pass


def test_a_server_that_fails_to_import_is_reported_without_traceback(tmp_path: Path) -> None:
    package = tmp_path / "brokenpkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "server.py").write_text('raise RuntimeError("broken on import")\n', encoding="utf-8")
    done = run_ultra("call", "brokenpkg.any_tool", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("error: server 'brokenpkg'") and "RuntimeError: broken on import" in done.stderr
    assert "Traceback" not in done.stderr


def json_listing(folder: Path) -> Command:
    """``ultra tools --json`` (every server over stdio), in ``folder``: a background run (tests/support)."""
    return Command(("tools", "--json"), timeout=300, cwd=folder)


@in_background(json_listing)
def test_every_builtin_tool_has_the_parameters_and_outputs_its_mcp_listing_shows(background_run: Finished) -> None:
    from ultra_kit.inprocess import load_spec, local_tools

    listing = json.loads(background_run.done.stdout)
    from ultra_client.calls.locate import builtin_servers

    assert sorted(listing) == sorted(builtin_servers())
    for server, tools in listing.items():
        spec = load_spec(f"servers.{server}", ROOT)
        assert spec is not None, server
        local = local_tools(spec)
        assert sorted(local) == sorted(tools)
        for name, info in tools.items():
            assert local[name].parameters == info["parameters"], (server, name)
            assert sorted(local[name].required) == info["required"], (server, name)
            assert local[name].settings == info["settings"], (server, name)
            # what `ultra run` and `ultra build` learn in-process: the outputs of the MCP output schema
            assert local[name].outputs == info["outputs"], (server, name)
            assert sorted(local[name].required_outputs) == info["required_outputs"], (server, name)
            assert local[name].outputs_from == info["outputs_from"], (server, name)


def test_judge_tool_in_process_and_over_stdio_agree(tmp_path: Path) -> None:
    from tests.support.openai_stub import OpenAIStub

    outputs = []
    modes = ([], ["--stdio"])
    with OpenAIStub() as stub:

        def call(mode: list[str]):
            return run_ultra(
                "call",
                *mode,
                "judge.umbrela_judge",
                "query=what is x",
                "passages={d1: x is a letter, d2: unrelated text}",
                f"judge_llm={{base_url: {stub.base_url}, model_id: stub-judge, api_key: ''}}",  # over MCP: say the key
                "judge_cache=",
                f"save_path={tmp_path / ('stdio' if mode else 'local')}",
                cwd=tmp_path,
                env={"OPENAI_API_KEY": "sk-test-in-process-0123456789"},
            )

        ran = at_once({i: lambda mode=mode: call(mode) for i, mode in enumerate(modes)})  # both at once
        for i, mode in enumerate(modes):
            folder = tmp_path / ("stdio" if mode else "local")
            done = ran[i]
            assert done.returncode == 0, done.stderr
            result = json.loads(done.stdout)
            qrels = Path(result.pop("llm_qrels_path")).read_text()
            assert qrels.split() == ["q1", "0", "d1", "3", "q1", "0", "d2", "3"]
            outputs.append(_without_paths(result, folder))
        assert stub.request_count == 4
    assert outputs[0] == outputs[1]
    assert outputs[0]["counts"] == {"pairs": 2, "ok": 2, "parse_error": 0, "error": 0}
    assert "sk-test-in-process" not in json.dumps(outputs)


def test_a_call_loads_only_the_tool_modules_up_to_its_tool(tmp_path: Path) -> None:
    """A generator ``load_tools`` is read only as far as the called tool; a wrong name lists them all."""
    (tmp_path / "parameter.yaml").write_text("scale: 3\n", encoding="utf-8")
    loaded: list[str] = []

    def first(values: list[float]) -> dict:
        return {"values": values}

    def second(values: list[float], scale: int) -> dict:
        return {"values": [v * scale for v in values]}

    def tools():
        loaded.append("first module")
        yield first
        loaded.append("second module")
        yield second

    spec = ServerSpec("lazy", tmp_path, tools)
    assert anyio.run(call_in_process, "lazy.first", spec, ["values=[2]"]) == {"values": [2]}
    assert loaded == ["first module"]
    assert anyio.run(call_in_process, "lazy.second", spec, ["values=[2]"]) == {"values": [6]}
    with pytest.raises(UltraError, match=r"server 'lazy' has no tool 'third'; its tools: \['first', 'second'\]"):
        anyio.run(call_in_process, "lazy.third", spec, [])


def test_calling_evaluate_trec_imports_no_other_evaluation_module(tmp_path: Path) -> None:
    """The evaluation server's first tool module holds evaluate_trec: the others (and the LLM client) stay unloaded."""
    import os
    import subprocess
    import sys

    code = (
        "import sys, anyio\n"
        "from ultra_kit.inprocess import load_spec\n"
        "from ultra_client.calls.calling import call_in_process\n"
        f"spec = load_spec('servers.evaluation', {str(ROOT)!r})\n"
        f"args = ['run_path={ROOT}/data/trec/results.test', 'qrels_path={ROOT}/data/trec/qrels.test',"
        f" 'ir_metrics=[map]', 'save_path={tmp_path}/map.json']\n"
        "print(anyio.run(call_in_process, 'evaluation.evaluate_trec', spec, args)['eval_res'])\n"
        "print(sorted(m for m in sys.modules if m.startswith(('servers.evaluation.', 'ultra_llm'))))\n"
    )
    env = {**os.environ, "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True, env=env)
    aggregate, modules = done.stdout.strip().splitlines()
    assert "'map': 0.1785" in aggregate
    assert modules == "['servers.evaluation.server', 'servers.evaluation.tools', 'servers.evaluation.tools.trec']"
