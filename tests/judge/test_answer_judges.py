"""idk_judge, citation_judge and rag_judge against the stub: hand-computed scores, statuses, cache, MCP."""

from __future__ import annotations

import json
import re

import pytest
from mcp import Client

from servers.judge.answers.judges.basic import citation_scores, split_citations
from servers.judge.answers.run import build_items, run_answer_judge
from servers.judge.server import SPEC
from tests.judge.conftest import call_job, llm_settings
from tests.support.openai_stub import OpenAIStub, content_of

pytestmark = pytest.mark.anyio


def field(text: str, name: str, end: str) -> str:
    return re.search(rf"\n\n{name}: (.*?)\n\n{end}", text, re.DOTALL).group(1)


def responder(request) -> str:
    """Replies keyed on the prompt: the answer / passage text says what to reply."""
    text = content_of(request)
    if '"attempted"' in text:
        answer = field(text, "Answer", "Your JSON")
        if "garbled" in answer:
            return "I think it is fine."
        attempted, idk = answer.split()[:2]
        return json.dumps({"attempted": attempted, "idk": idk})
    if '"support"' in text:
        passage = field(text, "Passage", "Your JSON")
        if "GARBLED" in passage:
            return '{"support": "mostly"}'
        return json.dumps({"support": passage.split()[0].lower()})
    answer = field(text, "Answer", "Your single line")
    return answer.split("|")[0]


def test_split_citations() -> None:
    answer = "Sky is blue [1]. Grass is green [2][3]. No source here! Too far [9].[4] Last one [1, 2]"
    assert split_citations(answer) == [
        ("Sky is blue.", [1]),
        ("Grass is green.", [2, 3]),
        ("No source here!", []),
        ("Too far.", [9, 4]),
        ("Last one", [1, 2]),
    ]
    assert split_citations("  ") == []


def test_citation_scores_by_hand() -> None:
    got = citation_scores([[1.0], [0.5, 0.0], [], [0.0]])
    precision, recall = (1 + 0.5 + 0 + 0) / 4, (1 + 0.5 + 0 + 0) / 4
    assert got == pytest.approx(
        {"citation_precision": precision, "citation_recall": recall, "citation_f1": 2 * precision * recall / 0.75}
    )
    uneven = citation_scores([[1.0, 1.0, 0.0], []])
    p, r = 2 / 3, 1 / 2
    assert uneven["citation_f1"] == pytest.approx(2 * p * r / (p + r))
    assert citation_scores([[], []]) == {"citation_precision": None, "citation_recall": 0.0, "citation_f1": 0.0}
    assert set(citation_scores([]).values()) == {None}


async def test_idk_judge_values_statuses_and_cache(tmp_path) -> None:
    items = build_items(["q1", "q2", "q3", "q4"], ["yes no", "no yes", "yes partial", "garbled"])
    cache = str(tmp_path / "c.sqlite")
    with OpenAIStub(responder=responder) as stub:
        result = await run_answer_judge(
            "idk",
            items,
            judge_llm=llm_settings(stub, max_retries=1),
            judge_cache=cache,
            save_path=str(tmp_path),
            max_failed_fraction=0.25,  # the garbled answer: 1 of 4
            prompt_file={},
            language="en",
        )
        assert stub.request_count == 3 + 2  # one per answer; the garbled one is asked twice
        again = await run_answer_judge(
            "idk",
            items,
            judge_llm=llm_settings(stub, max_retries=1),
            judge_cache=cache,
            save_path=str(tmp_path),
            max_failed_fraction=0.25,  # the garbled answer: 1 of 4
            prompt_file={},
            language="en",
        )
        # the cache replays every readable reply; the garbled answer's two unreadable ones are asked for again
        assert stub.request_count == 5 + 2
    assert [r.get("idk") for r in result["items"]] == [0.0, 1.0, 0.5, None]
    assert [r.get("answer_attempted") for r in result["items"]] == [1.0, 0.0, 1.0, None]
    bad = result["items"][3]
    assert bad["status"] == "parse_error" and bad["raw"] == "I think it is fine." and bad["requests"] == 2
    agg = result["aggregate"]
    assert agg["idk"] == pytest.approx(1.5 / 3) and agg["answer_attempted"] == pytest.approx(2 / 3)
    assert agg["num_excluded"] == 1 and result["counts"] == {"items": 4, "ok": 3, "parse_error": 1}
    assert again["usage"]["requests"] == 2 and again["aggregate"] == agg and again["counts"] == result["counts"]


async def test_citation_judge_by_hand(tmp_path) -> None:
    passages = ["FULL sky", "PARTIAL grass", "NONE trees", "GARBLED"]
    answers = [
        "Sky is blue [1]. Grass is green [2][3]. Unsupported claim. Bad cite [9].",
        "Fine [1]. Broken [4].",
        "No citations at all.",
        "",
    ]
    items = build_items(["q"] * 4, answers, ret_psg=[passages] * 4)
    with OpenAIStub(responder=responder) as stub:
        result = await call_job(
            run_answer_judge,
            "citation",
            items,
            judge_llm=llm_settings(stub, max_retries=0),
            save_path=str(tmp_path),
            max_failed_fraction=0.5,  # the broken answer: 1 of the 3 with sentences
        )
        asked = stub.request_count
    first, broken, uncited, empty = result["items"]
    assert first["status"] == "ok" and first["requests"] == 3 and first["invalid_citations"] == 1
    assert first["citation_precision"] == pytest.approx(1.5 / 4) and first["citation_recall"] == pytest.approx(1.5 / 4)
    assert first["citation_f1"] == pytest.approx(1.5 / 4)
    assert broken["status"] == "incomplete" and broken["failed_citations"] == 1
    assert broken["sentences"][1]["citations"][0]["raw"] == '{"support": "mostly"}'
    assert uncited["status"] == "ok" and uncited["citation_recall"] == 0.0 and uncited["citation_precision"] is None
    assert empty["status"] == "no_sentences" and empty["citation_f1"] is None
    assert asked == 3 + 2  # one per (sentence, valid cited passage)
    agg = result["aggregate"]
    assert agg["citation_f1"] == pytest.approx((1.5 / 4 + 0.0) / 2) and agg["num_citation_f1"] == 2
    assert agg["citation_precision"] == pytest.approx(1.5 / 4) and agg["num_citation_precision"] == 1
    assert agg["num_excluded"] == 2


async def test_rag_judge_rating_and_out_of_range(tmp_path) -> None:
    items = build_items(
        ["q1", "q2"], ["##final score: 7|a", "##final score: 11|b"], ret_psg=[["p"], []], gt_ls=[["ref"], "ref2"]
    )
    with OpenAIStub(responder=responder) as stub:
        result = await call_job(
            run_answer_judge,
            "rag",
            items,
            judge_llm=llm_settings(stub, max_retries=1),
            save_path=str(tmp_path),
            max_failed_fraction=0.5,
        )
        shown = content_of(stub.chat_requests()[0])
    good, bad = result["items"]
    assert good["rating"] == 7 and good["rag_score"] == pytest.approx(0.7)
    assert bad["status"] == "parse_error" and "outside 1-10" in bad["error"] and "rag_score" not in bad
    assert result["aggregate"]["rag_score"] == pytest.approx(0.7) and result["aggregate"]["num_excluded"] == 1
    assert "Reference answer: ref" in shown and "[1] p" in shown


async def test_answer_judges_over_mcp(tmp_path) -> None:
    with OpenAIStub(responder=responder) as stub:
        async with Client(SPEC.create_app()) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"idk_judge", "citation_judge", "rag_judge", "nuggetize"} <= names
            reply = await client.call_tool(
                "idk_judge",
                {"q_ls": ["a"], "pred_ls": ["yes no"], "judge_llm": llm_settings(stub), "judge_cache": "",
                 "save_path": str(tmp_path)},
            )  # fmt: skip
            mismatch = await client.call_tool(
                "citation_judge",
                {"q_ls": ["a", "b"], "pred_ls": ["x"], "ret_psg": [[], []], "judge_llm": llm_settings(stub)},
            )
    assert not reply.is_error and reply.structured_content["aggregate"]["answer_attempted"] == 1.0
    assert mismatch.is_error and "pred_ls has 1 items but q_ls has 2" in mismatch.content[0].text
