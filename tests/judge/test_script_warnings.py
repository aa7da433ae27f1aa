"""#41: umbrela_judge, nuggetize and rubric_judge warn once when the text they judge is not in ``language``'s
script (Chinese under the default 'en'), naming the setting, in their result and result file; none for English
text, none under ``language: zh``. Each tool is called through its face against the local stub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servers.judge.tools.nuggets import nuggetize
from servers.judge.tools.relevance import umbrela_judge
from servers.judge.tools.rubric import rubric_judge
from tests.judge.conftest import call_job, llm_settings
from tests.judge.nugget_stub import _NUGGETS, nugget_responder, numbered, stage
from tests.support.openai_stub import OpenAIStub, content_of

pytestmark = pytest.mark.anyio

CHINESE = {"query": "牛顿是谁？", "passages": {"d1": "牛顿是一位物理学家。", "d2": "他提出了万有引力定律。"}}
ENGLISH = {"query": "Who was Newton?", "passages": {"d1": "Newton was a physicist.", "d2": "He found gravity."}}
POLITE = {"name": "polite", "criteria": "Is the answer polite?", "steps": ["Read the answer."], "scale": [1, 5],
          "inputs": ["question", "answer"]}  # fmt: skip


async def umbrela(stub: OpenAIStub, tmp_path: Path, text: dict[str, Any], language: str) -> dict[str, Any]:
    stub.responder = lambda request: "##final score: 2"
    return await call_job(
        umbrela_judge, **text, judge_llm=llm_settings(stub), save_path=str(tmp_path / language), language=language
    )  # fmt: skip


def supports_all(request: dict[str, Any]) -> str:
    """The nugget stub's creating and scoring; an answer (plain text here) supports every nugget."""
    if stage(request) != "assign":
        return nugget_responder(request)
    return json.dumps(["support"] * len(numbered(_NUGGETS.search(content_of(request)).group(2))))


async def nuggets(stub: OpenAIStub, tmp_path: Path, text: dict[str, Any], language: str) -> dict[str, Any]:
    stub.responder = supports_all
    answer = next(iter(text["passages"].values()))
    result = await call_job(
        nuggetize, **text, answers={"runA": answer}, judge_llm=llm_settings(stub), save_path=str(tmp_path / language),
        language=language,
    )  # fmt: skip
    assert result["aggregate"]["runA"]["all"] == 1.0  # judged, whatever the language
    return result


async def rubric(stub: OpenAIStub, tmp_path: Path, text: dict[str, Any], language: str) -> dict[str, Any]:
    stub.responder = lambda request: json.dumps({"reasoning": "ok", "score": 4})
    return await call_job(
        rubric_judge, q_ls=[text["query"]] * 2, pred_ls=list(text["passages"].values()), rubrics=[POLITE],
        judge_llm=llm_settings(stub), save_path=str(tmp_path / language), rubric_top_logprobs=0, language=language,
    )  # fmt: skip


@pytest.mark.parametrize("judge", [umbrela, nuggets, rubric], ids=["umbrela_judge", "nuggetize", "rubric_judge"])
async def test_chinese_text_under_english_gets_one_warning_naming_the_setting(judge, stub, tmp_path) -> None:
    result = await judge(stub, tmp_path, CHINESE, "en")
    (said,) = result["warnings"]
    assert " texts have no letter in English's script (latin), yet language is 'en'" in said, said
    assert "set language to their language, or 'auto'" in said
    total = said.split(" of ", 1)[1].split(" texts", 1)[0]
    assert said.startswith(f"{total} of {total} texts"), said  # every text is Chinese
    written = json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))
    assert written["warnings"] == [said]
    chinese = await judge(stub, tmp_path, CHINESE, "zh")
    assert chinese["warnings"] == []
    assert json.loads(Path(chinese["result_path"]).read_text(encoding="utf-8"))["warnings"] == []
    english = await judge(stub, tmp_path, ENGLISH, "en")
    assert english["warnings"] == []
    assert json.loads(Path(english["result_path"]).read_text(encoding="utf-8"))["warnings"] == []


async def test_what_each_judge_reads(stub, tmp_path) -> None:
    """umbrela: the query once and every passage (3); nuggetize: query, passages and answers (4); rubric_judge:
    each item's question and answer (4)."""
    counts = [(await judge(stub, tmp_path, CHINESE, "en"))["warnings"][0].split(" of ")[0] for judge in
              (umbrela, nuggets, rubric)]  # fmt: skip
    assert counts == ["3", "4", "4"]


async def test_every_judge_describes_its_warnings_in_the_shared_words() -> None:
    """One description of ``warnings`` (``servers.judge.common.scripts.WARNINGS``) in every judge's output schema,
    as a client lists the tools: the answer judges once had their own words for the same warning."""
    from mcp import Client

    from servers.judge import server
    from servers.judge.common.scripts import WARNINGS

    async with Client(server.SPEC.create_app()) as client:
        tools = (await client.list_tools()).tools
    described = {
        tool.name: tool.output_schema["properties"]["warnings"].get("description")
        for tool in tools
        if "warnings" in ((tool.output_schema or {}).get("properties") or {})
    }
    assert {"toxicity", "faithfulness", "umbrela_judge", "nuggetize", "rubric_judge"} <= set(described)
    assert {name: text for name, text in described.items() if text != WARNINGS} == {}
