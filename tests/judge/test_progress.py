"""Every LLM judge reports its progress over MCP: a real MCP client with a progress callback calls the judge
server's tools against the OpenAI-compatible stub and receives one update per item judged (per jury member
and sample), ending at the total, each with a message that says what was judged."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from servers.judge.server import SPEC
from tests.judge.conftest import llm_settings
from tests.judge.test_answer_judges_ragas import responder
from tests.judge.test_fill_qrels import scripted, tiny_pool
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.anyio


async def call(tool: str, arguments: dict, responder) -> tuple[dict, list[tuple[float, float | None, str | None]]]:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    with OpenAIStub(responder=responder) as stub:
        arguments = {**arguments, "judge_llm": {**llm_settings(stub), **arguments.get("judge_llm", {})}}
        async with Client(SPEC.create_app()) as client:
            result = await client.call_tool(tool, arguments, progress_callback=on_progress)
    assert not result.is_error, result.content
    return result.structured_content, updates


async def test_an_answer_judge_reports_each_answer_judged_by_each_sample(tmp_path: Path) -> None:
    lists = {"q_ls": ["q"] * 3, "pred_ls": ["a yes; b no", "c yes", "d no"], "ret_psg": [["p"]] * 3}
    sampled = {"samples": 2, "temperature": 0.7}
    arguments = {**lists, "judge_llm": sampled, "judge_cache": "", "save_path": str(tmp_path)}
    data, updates = await call("faithfulness", arguments, responder)
    assert data["counts"]["ok"] == 3
    judged = [u for u in updates if u[2] and u[2].startswith("judged ")]
    assert [u[0] for u in judged] == [1, 2, 3, 4, 5, 6] and {u[1] for u in judged} == {6}  # 3 answers x 2 samples
    assert judged[-1][2] == "judged 6/6 answers"


async def test_fill_qrels_reports_each_hole_judged(tmp_path: Path) -> None:
    arguments = {**tiny_pool(tmp_path), "fill_budget": None, "judge_cache": ""}
    data, updates = await call("fill_qrels", arguments, scripted)
    assert [u[0] for u in updates] == [1, 2, 3, 4, 5, 6] and updates[-1][1:] == (6, "judged 6/6 holes")


async def test_rubric_judge_reports_each_item_and_rubric(tmp_path: Path) -> None:
    from tests.judge.test_rubric_judge import GROUNDED, POLITE
    from tests.judge.test_rubric_judge import responder as rubric_responder

    answers = ["score=5 label=pass", "score=2 label=fail", "score=4 label=pass"]
    arguments = {"q_ls": ["q1", "q2", "q3"], "pred_ls": answers, "ret_psg": [["p1"], ["p2"], ["p3"]],
                 "rubrics": [POLITE, GROUNDED], "judge_cache": "", "save_path": str(tmp_path)}  # fmt: skip
    data, updates = await call("rubric_judge", arguments, rubric_responder)
    assert data["failed"]["count"] == 0
    assert [u[0] for u in updates] == [1, 2, 3, 4, 5, 6]  # 3 items x 2 rubrics
    assert updates[-1][1:] == (6, "judged 6/6 (item, rubric) units")


async def test_hallucination_fallback_reports_each_answer(tmp_path: Path) -> None:
    lists = {"q_ls": ["q"] * 2, "pred_ls": ["a yes", "b no"], "ret_psg": [["p"]] * 2}
    arguments = {**lists, "hhem_model": "", "judge_cache": "", "save_path": str(tmp_path)}
    data, updates = await call("hallucination_judge", arguments, responder)
    assert data["method"] == "llm_faithfulness"
    assert [u[0] for u in updates] == [1, 2] and updates[-1][1:] == (2, "judged 2/2 answers")


async def test_nuggetize_reports_each_query_then_each_answer(tmp_path: Path) -> None:
    from tests.judge.nugget_stub import nugget_responder

    passages = {f"d{i}": f"fact {i}" for i in range(1, 4)}
    arguments = {"query": "q?", "passages": passages, "answers": {"runA": "{}", "runB": "{}"},
                 "judge_cache": "", "save_path": str(tmp_path)}  # fmt: skip
    data, updates = await call("nuggetize", arguments, nugget_responder)
    assert data["counts"]["nuggets"] == 3
    assert [u[0] for u in updates] == [1, 2, 3]  # the query's nuggets, then two answers
    assert updates[0][1] == 1 and updates[-1][1] == 3 and updates[-1][2].startswith("judged 3/3 steps")


async def test_hallucination_cross_encoder_reports_each_batch(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from tests.judge.test_hallucination import ANSWERS, PASSAGES, build_model

    folder = build_model(tmp_path / "model", {0: "hallucinated", 1: "consistent"})
    lists = {"q_ls": ["q"] * 5, "pred_ls": ANSWERS, "ret_psg": PASSAGES}  # 3 answers with passages and text
    arguments = {**lists, "hhem_model": str(folder), "hhem_batch_size": 2, "hhem_device": "cpu",
                 "save_path": str(tmp_path / "out")}  # fmt: skip
    data, updates = await call("hallucination_judge", arguments, responder)
    assert data["method"] == "hhem" and data["counts"]["ok"] == 3
    assert updates == [(2, 3, "judged 2/3 answers"), (3, 3, "judged 3/3 answers")]  # a batch of 2, then of 1
