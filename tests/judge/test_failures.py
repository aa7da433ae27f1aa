"""When judging fails: every LLM judge tool fails loudly when all (or too many) of its judgments failed.

The tools run as the server runs them (in-process via ``local_tools``, over MCP stdio, and in a pipeline
with ``ultra``), against the local stub with faults: 401 for every request, 500 always, and a refused
connection (a closed port of 127.0.0.1).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client

from servers.judge.answers.registry import JUDGES
from servers.judge.relevance.run import run_umbrela
from servers.judge.server import SPEC
from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, SECRET, call_job, llm_settings
from tests.support.openai_stub import OpenAIStub
from tests.support.ports import free_port
from ultra_base.errors import InputError
from ultra_kit import failures
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools
from ultra_kit.settings import defaults

pytestmark = pytest.mark.anyio

LLM_TOOLS = ["umbrela_judge", "nuggetize", "rubric_judge", *(j.name for j in JUDGES if not j.requests.startswith("0"))]
# requests a judgment sends at once before it can fail: factual_correctness asks for the answer's and the
# reference's claims together
FIRST_ROUND = {"factual_correctness": 2}
# per tool: (arguments, how many judgments the LLM is asked for, their noun in the message)
ANSWER_INPUTS = {
    "q_ls": ["q one?", "q two?", "q three?"],
    "pred_ls": ["Answer one [1].", "Answer two [1].", "Answer three [1]."],
    "gt_ls": ["ref one", "ref two", "ref three"],
    "ret_psg": [["passage one"], ["passage two"], ["passage three"]],
}


def arguments(tool: str) -> tuple[dict[str, Any], int, str]:
    if tool == "umbrela_judge":
        return {"query": "q", "passages": {"d1": "one", "d2": "two", "d3": "three"}}, 3, "judgments"
    if tool == "nuggetize":
        return {"query": "q", "passages": ["fact one", "fact two"], "answers": {"A": "x"}}, 1, "batches"
    if tool == "rubric_judge":
        rubric = {"name": "polite", "criteria": "Polite?", "steps": ["Read."], "scale": [1, 5], "inputs": ["answer"]}
        return {"pred_ls": ANSWER_INPUTS["pred_ls"], "rubrics": [rubric]}, 3, "judgments"
    judge = next(j for j in JUDGES if j.name == tool)
    return {name: ANSWER_INPUTS[name] for name in judge.inputs}, 3, "judgments"


async def call(tool: str, given: dict[str, Any]) -> dict[str, Any]:
    """The tool as the server runs it: parameter.yaml's settings, argument checks, errors as a client sees them."""
    return await call_local_tool(local_tools(SPEC)[tool], given)


def nothing_written(folder: Path) -> bool:
    return not folder.exists() or not any(folder.iterdir())


@pytest.mark.parametrize("tool", LLM_TOOLS)
async def test_every_request_401_fails_the_tool_with_the_cause(tool: str, tmp_path: Path) -> None:
    given, n, noun = arguments(tool)
    out = tmp_path / "out"
    with OpenAIStub() as stub:
        stub.add_fault("status", status=401, message=f"invalid api key {SECRET}")
        with pytest.raises(ToolFailure) as raised:
            await call(tool, {**given, "judge_llm": llm_settings(stub), "judge_cache": "", "save_path": str(out)})
        assert stub.request_count == n * FIRST_ROUND.get(tool, 1)  # a 401 is not retried
    message = str(raised.value)
    assert f"{tool}: every one of {n} {noun} failed (error {n}): 401 from the endpoint: invalid api key ***" in message
    assert SECRET not in message
    assert nothing_written(out)  # no result, no (empty) qrels, no nuggets file


@pytest.mark.parametrize("tool", LLM_TOOLS)
async def test_constant_500_fails_the_tool_after_the_retries(tool: str, tmp_path: Path) -> None:
    given, n, noun = arguments(tool)
    out = tmp_path / "out"
    with OpenAIStub() as stub:
        stub.add_fault("status", status=500, message="boom")
        with pytest.raises(ToolFailure) as raised:
            await call(
                tool,
                {**given, "judge_llm": llm_settings(stub, max_retries=1), "judge_cache": "", "save_path": str(out)},
            )
        assert stub.request_count == 2 * n * FIRST_ROUND.get(tool, 1)  # each request tried twice
    want = f"every one of {n} {noun} failed (error {n}): gave up after 2 attempts: 500 server error: boom"
    assert want in str(raised.value)
    assert nothing_written(out)


@pytest.mark.parametrize("tool", LLM_TOOLS)
async def test_refused_connection_is_named_not_a_timeout(tool: str, tmp_path: Path) -> None:
    closed_port = free_port()
    given, n, noun = arguments(tool)
    out = tmp_path / "out"
    judge_llm = {"base_url": f"http://127.0.0.1:{closed_port}/v1", "model_id": "m", "api_key": SECRET, "max_retries": 0}
    started = time.monotonic()
    with pytest.raises(ToolFailure) as raised:
        await call(tool, {**given, "judge_llm": judge_llm, "judge_cache": "", "save_path": str(out)})
    assert time.monotonic() - started < 5  # parameter.yaml's timeout is 60 s: nobody waited for it
    cause = f"gave up after 1 attempt: connection refused to 127.0.0.1:{closed_port}"
    assert f"every one of {n} {noun} failed (error {n}): {cause}" in str(raised.value)
    assert "timed out" not in str(raised.value)
    assert nothing_written(out)


async def test_partial_failures_are_counted_up_to_the_limit(tmp_path: Path) -> None:
    passages = {f"d{i}": f"text {i}" for i in range(10)}
    with OpenAIStub() as stub:
        stub.add_fault("status", status=400, message="context length exceeded", match="text 3")
        result = await call(
            "umbrela_judge",
            {"query": "q", "passages": passages, "judge_llm": llm_settings(stub), "judge_cache": "",
             "save_path": str(tmp_path / "ok")},
        )  # fmt: skip
        # 1 of 10 = 0.1 does not exceed parameter.yaml's max_failed_fraction
        assert defaults("judge")["max_failed_fraction"] == 0.1
        stub.add_fault("status", status=400, message="context length exceeded", match="text 7")
        with pytest.raises(ToolFailure) as raised:
            await call(
                "umbrela_judge",
                {"query": "q", "passages": passages, "judge_llm": llm_settings(stub), "judge_cache": "",
                 "save_path": str(tmp_path / "too_many")},
            )  # fmt: skip
        allowed = await call(
            "umbrela_judge",
            {"query": "q", "passages": passages, "judge_llm": llm_settings(stub), "judge_cache": "",
             "save_path": str(tmp_path / "allowed"), "max_failed_fraction": 0.2},
        )  # fmt: skip
    assert result["failed"] == {
        "count": 1,
        "total": 10,
        "reasons": {"error": 1, "parse_error": 0},
        "first_error": "400 from the endpoint: context length exceeded",
    }
    assert json.loads(Path(result["result_path"]).read_text())["failed"] == result["failed"]
    assert len(Path(result["llm_qrels_path"]).read_text().splitlines()) == 9
    assert str(raised.value).endswith(
        "umbrela_judge: 2 of 10 judgments failed (20%, more than max_failed_fraction 0.1; raise "
        "max_failed_fraction to accept this) (error 2); first error: 400 from the endpoint: context length exceeded"
    )
    assert nothing_written(tmp_path / "too_many")
    assert allowed["failed"]["count"] == 2 and allowed["counts"]["ok"] == 8


async def test_no_failure_reports_count_zero(tmp_path: Path) -> None:
    reply = json.dumps({"attempted": "yes", "idk": "no"})
    with OpenAIStub(responder=lambda request: reply) as stub:
        result = await call(
            "idk_judge",
            {"q_ls": ["a", "b"], "pred_ls": ["x", "y"], "judge_llm": llm_settings(stub), "judge_cache": "",
             "save_path": str(tmp_path)},
        )  # fmt: skip
    assert result["failed"] == {"count": 0, "total": 2, "reasons": {"error": 0, "parse_error": 0}, "first_error": None}


async def test_parse_errors_only_fail_as_parse_errors(tmp_path: Path) -> None:
    with OpenAIStub(responder=lambda request: "I would rather not say.") as stub, pytest.raises(ToolFailure) as raised:
        await call(
            "rag_judge",
            {**ANSWER_INPUTS, "judge_llm": llm_settings(stub, max_retries=1), "judge_cache": "",
             "save_path": str(tmp_path / "o")},
        )  # fmt: skip
    assert "rag_judge: every one of 3 judgments failed (parse_error 3): unreadable after 2 replies" in str(raised.value)
    assert nothing_written(tmp_path / "o")


async def test_nothing_to_judge_is_not_a_failure(tmp_path: Path) -> None:
    given = {"q_ls": ["a", "b"], "ret_psg": [["p"], ["p"]], "judge_cache": "", "save_path": str(tmp_path)}
    with OpenAIStub() as stub:
        stub.add_fault("status", status=401, message="no key")
        empty = await call("citation_judge", {**given, "pred_ls": ["", "  "], "judge_llm": llm_settings(stub)})
        with pytest.raises(ToolFailure) as raised:  # one answer with nothing to judge, the other failed
            await call("citation_judge", {**given, "pred_ls": ["", "Claim [1]."], "judge_llm": llm_settings(stub)})
    assert empty["counts"] == {"items": 2, "no_sentences": 2}
    assert empty["failed"] == {"count": 0, "total": 0, "reasons": {"error": 0, "parse_error": 0}, "first_error": None}
    assert "every one of 1 judgments failed (error 1): 401 from the endpoint: no key" in str(raised.value)


async def test_max_failed_fraction_is_checked_before_any_request(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        with pytest.raises(ToolFailure, match="max_failed_fraction"):
            await call(
                "idk_judge",
                {"q_ls": ["a"], "pred_ls": ["b"], "judge_llm": llm_settings(stub), "max_failed_fraction": 1.5},
            )
        with pytest.raises(InputError, match="max_failed_fraction must be a number from 0 to 1, got -0.1"):
            await call_job(run_umbrela, query="q", passages=["p"], judge_llm=llm_settings(stub),
                           save_path=str(tmp_path), max_failed_fraction=-0.1)  # fmt: skip
        assert stub.request_count == 0


def test_check_counts_and_messages() -> None:
    summary, ok = failures.summarise(
        [("ok", None), ("no_sentences", None), ("parse_error", "unreadable"), ("error", "401"), ("incomplete", "x")]
    )
    assert ok == 1
    assert summary == {
        "count": 3,
        "total": 4,
        "reasons": {"error": 1, "parse_error": 1, "incomplete": 1},
        "first_error": "unreadable",
    }
    failures.check(summary, ok, tool="t", noun="judgments", max_failed_fraction=0.75)  # 3/4 does not exceed
    with pytest.raises(InputError, match=r"^t: 3 of 4 judgments failed \(75%, more than max_failed_fraction 0.7;"):
        failures.check(summary, ok, tool="t", noun="judgments", max_failed_fraction=0.7)
    # none ok: fails even when the limit would allow every failure
    nothing_ok, none = failures.summarise([("error", "e1"), ("error", "e2"), ("no_contexts", None)])
    with pytest.raises(InputError, match=r"^t: every one of 2 judgments failed \(error 2\): e1$"):
        failures.check(nothing_ok, none, tool="t", noun="judgments", max_failed_fraction=1.0)


async def test_output_schemas_carry_failed() -> None:
    async with Client(SPEC.create_app()) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in LLM_TOOLS:
        schema = listed[name].output_schema
        assert "failed" in schema["required"], name
        assert "max_failed_fraction" in listed[name].input_schema["properties"], name
        failed = schema["properties"]["failed"]
        if "$ref" in failed:
            failed = schema["$defs"][failed["$ref"].rsplit("/", 1)[1]]
        assert set(failed["properties"]) == {"count", "total", "reasons", "first_error"}, name


def test_ultra_call_over_stdio_exits_nonzero_with_the_cause(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        stub.add_fault("status", status=401, message="invalid api key")
        done = run_ultra(
            "call", "judge.umbrela_judge", "--stdio", "query=q", "passages=[one, two]",
            f"judge_llm.base_url={stub.base_url}", "judge_llm.model_id=stub", "judge_llm.api_key=",
            "judge_cache=", f"save_path={tmp_path / 'out'}",
            cwd=ROOT, env={"OPENAI_API_KEY": SECRET},
        )  # fmt: skip
    assert done.returncode != 0, done.stdout
    assert "umbrela_judge: every one of 2 judgments failed (error 2): 401 from the endpoint: invalid api key" in (
        done.stderr
    )
    assert SECRET not in done.stdout + done.stderr
    assert nothing_written(tmp_path / "out")


def test_umbrela_example_stops_at_the_judge_with_the_cause(tmp_path: Path) -> None:
    """Before: the judge 'succeeded' with an empty qrels file and evaluate_trec failed on 'empty qrels file'."""
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "umbrela_parameter.yaml").read_text())
    with OpenAIStub() as stub:
        stub.add_fault("status", status=401, message="invalid api key")
        params["judge"].update(
            judge_llm={**llm_settings(stub), "api_key": "${OPENAI_API_KEY}"},
            judge_cache="",
            save_path=str(tmp_path / "judge"),
        )
        params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
        param_file = tmp_path / "umbrela_parameter.yaml"
        param_file.write_text(yaml.safe_dump(params))
        done = run_ultra(
            "run", "examples/umbrela.yaml", "--param", str(param_file), "--output-dir", str(tmp_path / "runs"),
            cwd=ROOT, env={"OPENAI_API_KEY": SECRET},
        )  # fmt: skip
    assert done.returncode != 0
    assert "judge.umbrela_judge" in done.stderr
    assert "every one of 171 judgments failed" not in done.stderr  # pairs, not requests, are counted
    assert "every one of 180 judgments failed (error 180): 401 from the endpoint: invalid api key" in done.stderr
    assert "empty qrels" not in done.stderr
    assert nothing_written(tmp_path / "judge") and nothing_written(tmp_path / "evaluation")


@pytest.mark.parametrize("score", ["NaN", "1e999", '"infinity"'])
async def test_a_score_python_reads_as_no_number_is_a_parse_error_not_a_crash(score: str, tmp_path: Path) -> None:
    """A model answering ``{"score": NaN}`` (or 1e999, or "infinity") stopped UMBRELA with Python's own ValueError or
    OverflowError; each judgment is a parse error now, counted and named like any unreadable reply."""
    with OpenAIStub(responder=lambda request: f'{{"score": {score}}}') as stub, pytest.raises(ToolFailure) as raised:
        given, _, _ = arguments("umbrela_judge")
        await call("umbrela_judge", {**given, "judge_llm": llm_settings(stub, max_retries=0), "judge_cache": "",
                                     "save_path": str(tmp_path / "o")})  # fmt: skip
    assert "umbrela_judge: every one of 3 judgments failed (parse_error 3)" in str(raised.value)
    assert "is not a finite number" in str(raised.value) or "is not a number" in str(raised.value)
    assert nothing_written(tmp_path / "o")
