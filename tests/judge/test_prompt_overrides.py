"""prompt_file: a user's own version of a built-in judge's prompt, checked at build, used and recorded by hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from servers.judge.common.overrides import read_override
from servers.judge.common.prompting import PROMPT_DIR
from servers.judge.server import SPEC
from servers.judge.tools.nuggets import nuggetize
from tests.conftest import ROOT, run_ultra
from tests.judge.conftest import call_job, llm_settings
from tests.judge.nugget_stub import nugget_responder
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_base.errors import InputError
from ultra_kit.inprocess import call_local_tool, local_tools

pytestmark = pytest.mark.anyio

MINE = """=== system ===
You are a strict reviewer of assistant answers.
=== user ===
Question: {question}
Answer given: {answer}

Does the answer attempt the question (attempted: yes / no), and does it say information is missing
(idk: yes / partial / no)? Reply with JSON only: {"attempted": "...", "idk": "..."}
"""


def responder(request) -> str:
    text = content_of(request)
    return json.dumps({"attempted": "yes", "idk": "partial" if "strict reviewer" in text else "no"})


def test_placeholders_and_reply_fields_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "idk.txt"
    path.write_text(MINE.replace("Answer given: {answer}", "Answer given: {answer}\nContext: {context}"), "utf-8")
    with pytest.raises(InputError) as caught:
        read_override("idk_v1", str(path))
    assert str(caught.value).startswith(f"{path}:6: placeholder {{context}} is not one the judge fills for idk_v1")
    path.write_text(MINE.replace("Answer given: {answer}\n", ""), "utf-8")
    with pytest.raises(InputError, match=r"leaves out \{answer\}"):
        read_override("idk_v1", str(path))
    path.write_text(MINE.replace('"idk": "..."', "").replace("(idk: yes / partial / no)", ""), "utf-8")
    with pytest.raises(InputError, match=r"never names \['idk'\]"):
        read_override("idk_v1", str(path))
    with pytest.raises(InputError, match="no built-in prompt named 'idk_v2' \\(did you mean 'idk_v1'\\?\\)"):
        read_override("idk_v2", str(path))


async def test_the_override_is_asked_and_its_hash_recorded(tmp_path: Path) -> None:
    path = tmp_path / "idk.txt"
    path.write_text(MINE, encoding="utf-8")
    tool = next(
        t for t in __import__("servers.judge.tools.answers", fromlist=["TOOLS"]).TOOLS if t.__name__ == "idk_judge"
    )
    cache = str(tmp_path / "cache.sqlite")
    given = dict(q_ls=["q1", "q2"], pred_ls=["a1", "a2"], judge_cache=cache, save_path=str(tmp_path / "out"))
    with OpenAIStub(responder=responder) as stub:
        builtin = await call_job(tool, judge_llm=llm_settings(stub), **given)
        mine = await call_job(tool, judge_llm=llm_settings(stub), prompt_file={"idk_v1": str(path)}, **given)
        assert stub.request_count == 4  # the override's answers are not the built-in prompt's (cache key)
        assert all("strict reviewer" in content_of(b) for b in stub.chat_requests()[2:])
    sha = hashlib.sha256(MINE.encode()).hexdigest()
    assert builtin["aggregate"]["idk"] == 0.0 and mine["aggregate"]["idk"] == 0.5
    assert mine["prompt"] == {"name": "idk_v1", "sha256": sha, "version": f"idk_v1@{sha[:12]}"}
    written = json.loads(Path(mine["result_path"]).read_text(encoding="utf-8"))
    assert written["prompt_overrides"] == {"idk_v1": {"path": str(path), "sha256": sha}}
    assert "prompt_overrides" not in json.loads(Path(builtin["result_path"]).read_text(encoding="utf-8"))


def test_ultra_build_refuses_a_bad_placeholder_naming_the_file(tmp_path: Path) -> None:
    mine = tmp_path / "my_idk.txt"
    mine.write_text(MINE.replace("{question}", "{query}"), encoding="utf-8")
    data = tmp_path / "qa.jsonl"
    data.write_text('{"id": "1", "question": "q", "answer": "a"}\n', encoding="utf-8")
    pipeline = tmp_path / "idk.yaml"
    pipeline.write_text(
        "servers:\n  benchmark: servers/benchmark\n  judge: servers/judge\n"
        "pipeline:\n  - benchmark.get_data\n  - judge.idk_judge\n",
        encoding="utf-8",
    )
    params = tmp_path / "parameters" / "idk_parameter.yaml"
    params.parent.mkdir()
    params.write_text(
        f"benchmark:\n  benchmark:\n    path: {data}\n    key_map: {{q_ls: question, pred_ls: answer, id_ls: id}}\n"
        f"judge:\n  prompt_file:\n    idk_v1: {mine}\n",
        encoding="utf-8",
    )
    built = run_ultra("build", str(pipeline), cwd=ROOT)
    assert built.returncode == 1
    assert f"judge.prompt_file: {mine}:4: placeholder {{query}} is not one the judge fills for idk_v1" in built.stderr
    params.write_text(params.read_text(encoding="utf-8").replace("idk_v1:", "idk_v9:"), encoding="utf-8")
    built = run_ultra("build", str(pipeline), cwd=ROOT)
    assert f"judge.prompt_file: {params}:7: prompt_file: no built-in prompt named 'idk_v9'" in built.stderr


async def test_umbrela_takes_an_override_too(tmp_path: Path) -> None:
    mine = tmp_path / "umbrela.txt"
    mine.write_text("=== user ===\nMY GRADER. Query: {query}\nPassage: {passage}\nReply ##final score: N\n", "utf-8")
    given = {"query": "q", "passages": {"d1": "one", "d2": "two"}, "judge_cache": "", "save_path": str(tmp_path)}
    reply = lambda request: "##final score: 3" if "MY GRADER" in content_of(request) else "##final score: 0"  # noqa: E731
    with OpenAIStub(responder=reply) as stub:
        tool = local_tools(SPEC)["umbrela_judge"]
        builtin = await call_local_tool(tool, {**given, "judge_llm": llm_settings(stub)})
        result = await call_local_tool(
            tool, {**given, "judge_llm": llm_settings(stub), "prompt_file": {"umbrela_v1": str(mine)}}
        )
    assert builtin["scores"] == {"q1": {"d1": 0, "d2": 0}}
    assert result["scores"] == {"q1": {"d1": 3, "d2": 3}}
    assert result["prompt"]["sha256"] == hashlib.sha256(mine.read_bytes()).hexdigest() != builtin["prompt"]["sha256"]


async def test_nuggetize_asks_the_override_of_one_stage(tmp_path: Path) -> None:
    builtin = (PROMPT_DIR / "nugget_assign_v1.txt").read_text(encoding="utf-8")
    mine = tmp_path / "assign.txt"
    mine.write_text(builtin.replace("=== user ===\n", "=== user ===\nMY ASSIGNER.\n", 1), encoding="utf-8")
    answers = {"runA": json.dumps({"fact 1": "support"})}
    with OpenAIStub(responder=nugget_responder) as stub:
        result = await call_job(
            nuggetize, query="q?", passages={"d1": "fact 1", "d2": "fact 2"}, answers=answers,
            judge_llm=llm_settings(stub), save_path=str(tmp_path / "out"), prompt_file={"nugget_assign_v1": str(mine)},
        )  # fmt: skip
        texts = [content_of(r) for r in stub.chat_requests()]
    assert [("MY ASSIGNER" in t) for t in texts] == [False, False, True]  # create, score, assign
    sha = hashlib.sha256(mine.read_bytes()).hexdigest()
    assert result["prompt"]["assign"] == f"nugget_assign_v1@{sha[:12]}"
    assert result["per_query"]["q1"]["runA"]["all"] == 0.5  # fact 1 supported of 2 nuggets
