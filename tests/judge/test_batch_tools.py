"""Offline batch files: export_requests writes batch-input JSONL, a batch run answers it elsewhere, import_results
reads the output into the cache, and the same tool then completes with zero requests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servers.judge.server import SPEC
from tests.conftest import run_ultra
from tests.judge.conftest import SAMPLE, SECRET
from tests.support.openai_stub import OpenAIStub, chat_completion, hashed_grade
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools

pytestmark = pytest.mark.anyio

UNIQUE = 171  # requests of the sample's 180 pairs


def umbrela_arguments() -> dict[str, Any]:
    return {
        "queries_path": str(SAMPLE / "queries.jsonl"),
        "run_path": str(SAMPLE / "run.bm25.trec"),
        "corpus_path": str(SAMPLE / "corpus.jsonl"),
        "depth": 10,
    }


def run_batch(requests: Path, output: Path, *, fail: int = 0) -> None:
    """What vLLM ``run-batch`` writes for a batch-input file (the first ``fail`` lines as failures)."""
    lines = []
    for number, text in enumerate(requests.read_text(encoding="utf-8").splitlines()):
        request = json.loads(text)
        assert request["method"] == "POST" and request["url"] == "/v1/chat/completions"
        body = request["body"]
        if number < fail:
            response = {"status_code": 400, "request_id": f"r{number}", "body": {"error": {"message": "too long"}}}
        else:
            response = {
                "status_code": 200,
                "request_id": f"r{number}",
                "body": chat_completion(body, hashed_grade(body), body["model"]),
            }
        lines.append({"id": f"vllm-{number}", "custom_id": request["custom_id"], "response": response, "error": None})
    output.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def ultra_json(*args: str, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    result = run_ultra(*args, cwd=cwd, env=env, timeout=180)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_export_then_import_then_the_tool_sends_zero_requests(tmp_path: Path) -> None:
    env = {"JUDGE_KEY": SECRET}
    with OpenAIStub() as stub:
        llm = {"base_url": stub.base_url, "model_id": "stub-judge", "api_key": "${JUDGE_KEY}"}
        common = {"judge_llm": llm, "judge_cache": "output/cache.sqlite"}
        (tmp_path / "export.json").write_text(
            json.dumps({"tool": "umbrela_judge", "arguments": umbrela_arguments(), **common})
        )
        exported = ultra_json("call", "judge.export_requests", "--args-file", "export.json", cwd=tmp_path, env=env)
        assert exported["requests"] == UNIQUE and exported["cached"] == 0 and stub.request_count == 0
        (requests,) = map(Path, exported["requests_paths"])
        assert requests.parent == tmp_path / "output" / "judge" and SECRET not in requests.read_text()

        run_batch(requests, tmp_path / "results.jsonl")  # on the GPU machine
        (tmp_path / "import.json").write_text(
            json.dumps({"results_paths": ["results.jsonl"], "judge_cache": common["judge_cache"]})
        )
        imported = ultra_json("call", "judge.import_results", "--args-file", "import.json", cwd=tmp_path, env=env)
        assert (imported["imported"], imported["failed"], imported["skipped"]) == (UNIQUE, 0, 0)

        (tmp_path / "judge.json").write_text(json.dumps({**umbrela_arguments(), **common}))
        judged = ultra_json("call", "judge.umbrela_judge", "--args-file", "judge.json", cwd=tmp_path, env=env)
        assert stub.request_count == 0 and judged["usage"]["requests"] == 0 and judged["counts"]["ok"] == 180
        again = ultra_json("call", "judge.export_requests", "--args-file", "export.json", cwd=tmp_path, env=env)
        assert again["requests"] == 0 and again["requests_paths"] == []

        online = ultra_json(
            "call",
            "judge.umbrela_judge",
            f"judge_llm={json.dumps(llm)}",
            "judge_cache=",
            *(f"{k}={v}" for k, v in umbrela_arguments().items()),
            cwd=tmp_path,
            env=env,
        )
    assert online["scores"] == judged["scores"]  # imported answers grade exactly as online ones
    assert SECRET.encode() not in (tmp_path / "output" / "cache.sqlite").read_bytes()


async def test_export_splits_at_the_limits_and_failed_lines_are_not_cached(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    tools = local_tools(SPEC)
    llm = {"base_url": "http://127.0.0.1:9/v1", "model_id": "stub-judge", "batch_max_requests": 50}
    common = {"judge_llm": llm, "judge_cache": str(tmp_path / "cache.sqlite"), "save_path": str(tmp_path / "out")}
    exported = await call_local_tool(
        tools["export_requests"], {"tool": "umbrela_judge", "arguments": umbrela_arguments(), **common}
    )
    paths = [Path(p) for p in exported["requests_paths"]]
    assert [p.name for p in paths] == [f"{paths[0].stem.rsplit('_', 1)[0]}_{i}.jsonl" for i in range(1, 5)]
    assert [len(p.read_text().splitlines()) for p in paths] == [50, 50, 50, 21]
    assert sorted((tmp_path / "out").iterdir()) == sorted(paths)  # the reserved single-file name is not left empty

    for i, path in enumerate(paths):
        run_batch(path, tmp_path / f"out_{i}.jsonl", fail=2 if i == 0 else 0)
    outputs = [str(tmp_path / f"out_{i}.jsonl") for i in range(len(paths))]
    imported = await call_local_tool(
        tools["import_results"], {"results_paths": outputs, "judge_cache": common["judge_cache"]}
    )
    assert (imported["imported"], imported["failed"]) == (UNIQUE - 2, 2)
    assert "400 from the endpoint: too long" in imported["failures"][0]["error"]
    again = await call_local_tool(
        tools["export_requests"], {"tool": "umbrela_judge", "arguments": umbrela_arguments(), **common}
    )
    assert again["requests"] == 2 and again["cached"] >= 180 - 2 * 2  # only the failed ones are written again


async def test_bad_output_files_and_tools_are_clear_errors(tmp_path: Path) -> None:
    tools = local_tools(SPEC)
    (tmp_path / "bad.jsonl").write_text('{"custom_id": "x", "response": null, "error": null}\n')
    cache = str(tmp_path / "cache.sqlite")
    with pytest.raises(ToolFailure, match=r"bad\.jsonl:1: not a batch output line .*custom_id and response or error"):
        await call_local_tool(
            tools["import_results"], {"results_paths": [str(tmp_path / "bad.jsonl")], "judge_cache": cache}
        )
    with pytest.raises(
        ToolFailure, match=r"export_requests cannot run 'judge_agreement'; tools that can: \['umbrela_judge'"
    ):
        await call_local_tool(
            tools["export_requests"],
            {"tool": "judge_agreement", "arguments": {}, "judge_cache": cache, "judge_llm": {"api_key": ""}},
        )
