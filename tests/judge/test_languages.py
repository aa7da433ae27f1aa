"""Judges in the user's language (``language`` setting): the prompts say the language, ask for reasons in
it, and extracted statements and claims stay in the source language. Scripted zh and ar replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers.judge.server import SPEC
from tests.judge.conftest import llm_settings
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools

pytestmark = pytest.mark.anyio

ZH_STATEMENTS = ["巴黎是法国的首都。", "巴黎位于塞纳河畔。"]
AR_CLAIMS = {"answer": ["باريس عاصمة فرنسا."], "reference": ["باريس هي عاصمة فرنسا.", "تقع باريس على نهر السين."]}


def system_of(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "system")


def scripted(request: dict) -> str:
    """Replies as a model that followed the language line would give them (zh statements, ar claims)."""
    text = content_of(request)
    if '{"statements"' in text:
        return json.dumps({"statements": ZH_STATEMENTS}, ensure_ascii=False)
    if "Statements (" in text:
        return json.dumps({"verdicts": [1, 0]})
    if '{"claims"' in text:
        side = "reference" if "السين" in text.split("Text: ")[-1] else "answer"
        return json.dumps({"claims": AR_CLAIMS[side]}, ensure_ascii=False)
    count = int(text.split("Claims (")[-1].split(")")[0])
    return json.dumps(["entailment"] * count)


async def judge(tool: str, stub: OpenAIStub, tmp_path: Path, language: str, **lists) -> dict:
    arguments = {**lists, "judge_llm": llm_settings(stub), "judge_cache": "", "save_path": str(tmp_path)}
    return await call_local_tool(local_tools(SPEC)[tool], {**arguments, "language": language})


async def test_faithfulness_in_chinese_keeps_chinese_statements_and_asks_reasons_in_chinese(tmp_path) -> None:
    with OpenAIStub(responder=scripted) as stub:
        result = await judge(
            "faithfulness", stub, tmp_path, "zh", q_ls=["法国的首都是哪里？"],
            pred_ls=["巴黎是法国的首都，位于塞纳河畔。"], ret_psg=[["巴黎是法国的首都。"]],
        )  # fmt: skip
        requests = stub.chat_requests()
    item = result["items"][0]
    assert item["statements"] == ZH_STATEMENTS and item["faithfulness"] == 0.5
    assert len(requests) == 2
    for request in requests:
        system = system_of(request)
        assert "are in Chinese" in system and "reason or explanation in Chinese" in system
        assert "never translated into English" in system
    assert json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))["language"] == "zh"


async def test_factual_correctness_in_arabic_keeps_arabic_claims(tmp_path) -> None:
    with OpenAIStub(responder=scripted) as stub:
        result = await judge(
            "factual_correctness", stub, tmp_path, "ar", q_ls=["ما هي عاصمة فرنسا؟"], pred_ls=["باريس عاصمة فرنسا."],
            gt_ls=["باريس هي عاصمة فرنسا. تقع باريس على نهر السين."],
        )  # fmt: skip
        systems = [system_of(r) for r in stub.chat_requests()]
    item = result["items"][0]
    assert [c["claim"] for c in item["answer_claims"]] == AR_CLAIMS["answer"]
    assert [c["claim"] for c in item["reference_claims"]] == AR_CLAIMS["reference"]
    assert len(systems) == 4 and all("are in Arabic" in s for s in systems)


async def test_english_prompts_are_unchanged_and_auto_detects_per_item(tmp_path) -> None:
    reply = json.dumps({"attempted": "yes", "idk": "no"})
    questions = ["法国的首都是哪里？", "ما هي عاصمة فرنسا؟", "What is the capital of France?"]
    with OpenAIStub(responder=lambda request: reply) as stub:
        await judge("idk_judge", stub, tmp_path, "en", q_ls=questions, pred_ls=["巴黎", "باريس", "Paris"])
        english = stub.chat_requests()
    assert all("Language:" not in content_of(r) for r in english)
    pytest.importorskip("lingua")
    with OpenAIStub(responder=lambda request: reply) as stub:
        await judge("idk_judge", stub, tmp_path, "auto", q_ls=questions, pred_ls=["巴黎", "باريس", "Paris"])
        asked = {content_of(r).split("Question: ")[-1].split("\n")[0]: system_of(r) for r in stub.chat_requests()}
    by_question = {q: asked[q] for q in questions}
    assert "are in Chinese" in by_question[questions[0]] and "are in Arabic" in by_question[questions[1]]
    assert "Language:" not in by_question[questions[2]]


async def test_unknown_language_is_refused_before_any_request(tmp_path) -> None:
    with OpenAIStub() as stub:
        with pytest.raises(ToolFailure, match="unknown language 'chinese'"):
            await judge("idk_judge", stub, tmp_path, "chinese", q_ls=["q"], pred_ls=["a"])
        assert stub.chat_requests() == []


async def test_nuggetize_in_chinese_keeps_chinese_nuggets(tmp_path) -> None:
    from tests.judge.nugget_stub import nugget_responder

    passages = {"d1": "vital 巴黎是法国的首都", "d2": "巴黎位于塞纳河畔"}
    answers = {"run": json.dumps({"vital 巴黎是法国的首都": "support"}, ensure_ascii=False)}
    with OpenAIStub(responder=nugget_responder) as stub:
        result = await judge(
            "nuggetize", stub, tmp_path, "zh", query="法国的首都是哪里？", passages=passages, answers=answers
        )
        systems = [system_of(r) for r in stub.chat_requests()]
    nuggets = [json.loads(line) for line in Path(result["nuggets_path"]).read_text(encoding="utf-8").splitlines()]
    assert [n["text"] for n in nuggets[0]["nuggets"]] == list(passages.values())
    assert len(systems) == 3 and all("are in Chinese" in s and "nugget" in s for s in systems)
