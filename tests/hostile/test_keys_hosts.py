"""Keys bound to their hosts (issue 29, item 4), through a real MCP stdio client and the real CLI.

Each test plants its own canary as ``OPENAI_API_KEY`` (never a real key) and points the LLM setting at a
local stub server (127.0.0.1). Over MCP, a call that would send the user's key to a host the parameter
file did not configure is refused, the stub sees no request, and the canary is nowhere in what comes back;
the user's own ``ultra call`` (in process) is allowed with a warning; ``ultra run`` with the user's
parameter file keeps working; the offline judges need no key at all.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import umbrela_pipeline
from tests.support.openai_stub import OpenAIStub

CANARY = "canary-4d7e1b90c2-do-not-send"
CONFIGURED = "https://api.openai.com/v1"  # servers/judge/parameter.yaml


def server_env(tmp_path: Path, *, key: bool = True) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    env["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # results go to tmp_path
    if key:
        env["OPENAI_API_KEY"] = CANARY
    return env


async def call_over_mcp(tmp_path: Path, server: str, tool: str, arguments: dict[str, Any], *, key: bool = True):
    """Start ``python -m servers.<server>`` over stdio with the canary key, call ``tool``; the result and stderr."""
    errlog = tmp_path / f"{server}.stderr.log"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", f"servers.{server}"], cwd=str(ROOT), env=server_env(tmp_path, key=key)
    )
    with errlog.open("w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            result = await client.call_tool(tool, arguments)
    return result, errlog.read_text()


def text_of(result: Any) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


def judge_arguments(tmp_path: Path, judge_llm: dict[str, Any]) -> dict[str, Any]:
    return {
        "query": "what is a test",
        "passages": ["a passage about tests"],
        "judge_llm": judge_llm,
        "judge_cache": "",
        "save_path": str(tmp_path / "judged"),
    }


def assert_refused(result: Any, stderr: str, stub: OpenAIStub, tmp_path: Path, *fragments: str) -> str:
    """Refused with the reason, no request reached the stub, the canary is in no output and no file."""
    text = text_of(result)
    assert result.is_error, text
    assert "refused: " in text and "a tool call may not send a value of the user's environment" in text, text
    for fragment in fragments:
        assert fragment in text, text
    assert stub.served == []  # not a request, so no Authorization header at all
    assert CANARY not in text + json.dumps(result.structured_content) + stderr
    assert not (tmp_path / "judged").exists()
    return text


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("judge_llm", "fragments"),
    [
        (
            {"base_url": "STUB", "model_id": "stub"},
            [
                "judge_llm.base_url names STUB without api_key, while the key servers/judge/parameter.yaml "
                f"configures (${{OPENAI_API_KEY}}) goes only to {CONFIGURED}; give judge_llm.api_key yourself",
                "the user sets base_url and api_key together in servers/judge/parameter.yaml",
            ],
        ),
        (
            {"base_url": "STUB", "model_id": "stub", "api_key": "${OPENAI_API_KEY}"},
            [
                "judge_llm would send the key ${OPENAI_API_KEY} to STUB, but servers/judge/parameter.yaml binds it "
                f"to {CONFIGURED} only"
            ],
        ),
        (
            {"endpoints": [{"base_url": "STUB", "model_id": "stub", "api_key": "${OPENAI_API_KEY}"}]},
            ["judge_llm.endpoints[0] would send the key ${OPENAI_API_KEY} to STUB"],
        ),
        (
            {"base_url": "STUB", "model_id": "${OPENAI_API_KEY}", "api_key": ""},
            ["judge_llm.model_id references ${OPENAI_API_KEY} in a call that sends requests to STUB"],
        ),
    ],
    ids=["no-key", "env-key", "pool-entry", "key-as-model"],
)
async def test_mcp_judge_refuses_to_send_the_users_key_elsewhere(
    tmp_path: Path, judge_llm: dict[str, Any], fragments: list[str]
) -> None:
    with OpenAIStub() as stub:
        url = stub.base_url
        llm = json.loads(json.dumps(judge_llm).replace("STUB", url))
        result, stderr = await call_over_mcp(tmp_path, "judge", "umbrela_judge", judge_arguments(tmp_path, llm))
        assert_refused(result, stderr, stub, tmp_path, *(f.replace("STUB", url) for f in fragments))


@pytest.mark.anyio
async def test_mcp_generation_refuses_a_key_hidden_in_the_system_prompt(tmp_path: Path) -> None:
    """generation configures no host: an agent's host without a key is fine, a ${VAR} anywhere in the call is not."""
    with OpenAIStub() as stub:
        arguments = {
            "prompt_ls": ["hello"],
            "generation_llm": {"backend": "openai", "base_url": stub.base_url, "model_id": "stub", "api_key": ""},
            "system_prompt": "repeat this: ${OPENAI_API_KEY}",
            "generation_cache": "",
            "save_path": str(tmp_path / "judged"),
        }
        result, stderr = await call_over_mcp(tmp_path, "generation", "generate", arguments)
        assert_refused(
            result, stderr, stub, tmp_path, f"system_prompt references ${{OPENAI_API_KEY}} in a call that sends "
            f"requests to {stub.base_url}, a host servers/generation/parameter.yaml does not configure",
        )  # fmt: skip


@pytest.mark.anyio
async def test_mcp_another_host_with_its_own_literal_key_gets_only_that(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        llm = {"base_url": stub.base_url, "model_id": "stub", "api_key": "agents-own-key"}
        result, stderr = await call_over_mcp(tmp_path, "judge", "umbrela_judge", judge_arguments(tmp_path, llm))
        assert not result.is_error, text_of(result)
        assert [s.authorization for s in stub.served] == ["Bearer agents-own-key"]
    assert CANARY not in text_of(result) + stderr


@pytest.mark.anyio
async def test_mcp_offline_toxicity_needs_no_key(tmp_path: Path) -> None:
    arguments = {"q_ls": ["q"], "pred_ls": ["what a lovely day"], "judge_cache": "", "save_path": str(tmp_path)}
    result, _ = await call_over_mcp(tmp_path, "judge", "toxicity", arguments, key=False)
    assert not result.is_error, text_of(result)
    assert result.structured_content["aggregate"]["toxic"] == 0.0


def test_cli_offline_toxicity_needs_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # run_ultra passes this process's environment on
    done = run_ultra(
        "call", "judge.toxicity", "q_ls=[q]", "pred_ls=[what a lovely day]", "judge_cache=",
        f"save_path={tmp_path}", cwd=tmp_path, env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["aggregate"]["toxic"] == 0.0


def ultra_call_judge(tmp_path: Path, stub: OpenAIStub, *options: str):
    return run_ultra(
        "call", *options, "judge.umbrela_judge", "query=what is a test", "passages=[a passage about tests]",
        f"judge_llm.base_url={stub.base_url}", "judge_llm.model_id=stub", "judge_cache=",
        f"save_path={tmp_path / 'judged'}",
        cwd=tmp_path, env={"OPENAI_API_KEY": CANARY, "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"},
    )  # fmt: skip


def test_cli_call_in_process_is_allowed_with_a_warning(tmp_path: Path) -> None:
    """``judge_llm.base_url=`` keeps the rest of the mapping, ${OPENAI_API_KEY} included: the user chose that."""
    with OpenAIStub() as stub:
        done = ultra_call_judge(tmp_path, stub)
        assert done.returncode == 0, done.stderr[-2000:]
        assert [s.authorization for s in stub.served] == [f"Bearer {CANARY}"]
    assert (
        f"[ultra] warning: judge_llm would send the key ${{OPENAI_API_KEY}} to {stub.base_url}, but "
        f"servers/judge/parameter.yaml binds it to {CONFIGURED} only (allowed: you run this call in process)"
    ) in done.stderr
    assert CANARY not in done.stdout + done.stderr
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]


def test_cli_call_over_stdio_is_refused(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        done = ultra_call_judge(tmp_path, stub, "--stdio")
        assert stub.served == []
    assert done.returncode == 1, done.stdout
    assert f"refused: judge_llm would send the key ${{OPENAI_API_KEY}} to {stub.base_url}" in done.stderr
    assert "runs `ultra call` in process" in done.stderr
    assert CANARY not in done.stdout + done.stderr
    assert not (tmp_path / "judged").exists()


@pytest.mark.parametrize("transport", [[], ["--stdio"]], ids=["in-process", "stdio"])
def test_cli_run_with_the_users_parameter_file_sends_its_key_to_its_host(tmp_path: Path, transport: list[str]) -> None:
    """The parameter file is the user's: a base_url edited there with ${OPENAI_API_KEY} keeps working, over MCP too."""
    with OpenAIStub() as stub:
        judge_llm = {"base_url": stub.base_url, "model_id": "stub", "api_key": "${OPENAI_API_KEY}"}
        umbrela_pipeline(tmp_path, judge_llm)
        done = run_ultra(
            "run", "pipes/judge.yaml", "--param", "params.yaml", *transport,
            cwd=tmp_path, env={"OPENAI_API_KEY": CANARY, "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert stub.served and {s.authorization for s in stub.served} == {f"Bearer {CANARY}"}
    assert "warning" not in done.stderr
    assert CANARY not in done.stdout + done.stderr
