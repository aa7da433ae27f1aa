"""rubric_judge against the local stub over HTTP: integer and label scales, generated steps, failures, logprobs."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from servers.judge.tools.rubric import rubric_judge
from tests.judge.conftest import call_job, llm_settings
from tests.support.batch_server import BatchStub
from tests.support.openai_stub import OpenAIStub, content_of

pytestmark = pytest.mark.anyio

POLITE = {"name": "polite", "criteria": "Is the answer polite?", "steps": ["Read the answer."], "scale": [1, 5],
          "inputs": ["question", "answer"]}  # fmt: skip
GROUNDED = {"name": "grounded", "criteria": "Does the answer rest on the passages?", "scale": {"pass": 1, "fail": 0},
            "inputs": ["answer", "passages"]}  # fmt: skip
STEPS = ["Find each claim of the answer.", "Look for it in the passages."]


def item_of(text: str) -> str:
    return text.rsplit("Item to judge:\n\n", 1)[1]


def responder(request: dict[str, Any]) -> str:
    """Steps for a steps request; else the score the answer text asks for (``score=N`` / ``label=X``)."""
    text = content_of(request)
    if "evaluation steps a careful judge follows" in text:
        return json.dumps({"steps": STEPS})
    item = item_of(text)
    if "GARBLED" in item:
        return "I would rather not say."
    if "Passages:" in item:
        return json.dumps({"reasoning": "checked", "score": re.search(r"label=(\w+)", item).group(1)})
    return json.dumps({"reasoning": "read it", "score": int(re.search(r"score=(\d)", item).group(1))})


def judge(stub: OpenAIStub, tmp_path, **given: Any) -> Any:
    given.setdefault("judge_llm", llm_settings(stub, max_retries=1))
    return call_job(rubric_judge, save_path=str(tmp_path / "judge"), rubric_top_logprobs=0, **given)


async def test_integer_and_label_scales_and_generated_steps(tmp_path) -> None:
    answers = ["score=5 label=pass", "score=2 label=fail", "score=4 label=Pass"]
    cache = str(tmp_path / "cache.sqlite")
    with OpenAIStub(responder=responder) as stub:
        result = await judge(
            stub, tmp_path, q_ls=["q1", "q2", "q3"], pred_ls=answers, ret_psg=[["p1"], ["p2", "p3"], []],
            rubrics=[POLITE, GROUNDED], judge_cache=cache, judge_llm=llm_settings(stub, structured_output=True),
        )  # fmt: skip
        # one steps request (grounded declares none), then one request per (item, rubric)
        assert stub.request_count == 1 + 3 * 2
        bodies = stub.chat_requests()
        schemas = {b["response_format"]["json_schema"]["name"]: b["response_format"] for b in bodies}
        assert set(schemas) == {"rubric_steps_v1", "rubric_judge_v1"}
        enums = sorted(
            str(b["response_format"]["json_schema"]["schema"]["properties"]["score"]["enum"]) for b in bodies[1:]
        )
        assert enums == sorted(["[1, 2, 3, 4, 5]"] * 3 + ["['pass', 'fail']"] * 3)
        again = await judge(
            stub, tmp_path, q_ls=["q1", "q2", "q3"], pred_ls=answers, ret_psg=[["p1"], ["p2", "p3"], []],
            rubrics=[POLITE, GROUNDED], judge_cache=cache, judge_llm=llm_settings(stub, structured_output=True),
        )  # fmt: skip
        assert stub.request_count == 7  # the rerun, steps included, comes from the cache
    assert again["aggregate"] == result["aggregate"]
    assert result["aggregate"] == {
        "polite": (5 + 2 + 4) / 3, "num_polite": 3, "grounded": (1 + 0 + 1) / 3, "num_grounded": 3,
        "num_items": 3, "num_excluded": 0,
    }  # fmt: skip
    first = result["items"][0]
    assert (first["polite"], first["grounded"]) == (5.0, 1.0)
    assert (
        first["rubrics"]["grounded"]["score"] == "pass" and result["items"][2]["rubrics"]["grounded"]["score"] == "pass"
    )
    described = {r["name"]: r for r in result["rubrics"]}
    assert described["grounded"]["steps"] == STEPS and described["grounded"]["steps_generated"] is True
    assert described["polite"]["steps"] == POLITE["steps"] and described["polite"]["steps_generated"] is False
    text = json.dumps(GROUNDED, sort_keys=True)
    assert described["grounded"]["text"] == text
    assert described["grounded"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    written = json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))
    assert written["rubrics"] == result["rubrics"] and written["tool"] == "rubric_judge"
    # the generated steps are what the grounded requests showed, the declared ones the polite requests
    shown = [content_of(b) for b in bodies[1:]]
    assert sum("1. Find each claim of the answer.\n2. Look for it in the passages." in t for t in shown) == 3
    assert sum("Evaluation steps:\n1. Read the answer.\n" in t for t in shown) == 3


async def test_failures_are_counted_never_scored(tmp_path) -> None:
    with OpenAIStub(responder=responder) as stub:
        stub.add_fault("status", status=400, message="bad request", match="score=1")
        result = await judge(
            stub, tmp_path, q_ls=["a", "b", "c", "d"], pred_ls=["score=3", "GARBLED", "score=1", "score=5"],
            rubrics=[POLITE], max_failed_fraction=0.5,
        )  # fmt: skip
    statuses = [item["status"] for item in result["items"]]
    assert statuses == ["ok", "parse_error", "error", "ok"]
    assert result["aggregate"]["polite"] == (3 + 5) / 2 and result["aggregate"]["num_polite"] == 2
    assert result["items"][1]["polite"] is None and "raw" in result["items"][1]["rubrics"]["polite"]
    assert result["failed"]["count"] == 2 and result["failed"]["total"] == 4
    assert result["failed"]["reasons"] == {"error": 1, "parse_error": 1}
    assert result["counts"] == {"items": 4, "ok": 2, "parse_error": 1, "error": 1}
    with OpenAIStub(responder=responder) as stub, pytest.raises(Exception, match="2 of 4 judgments failed"):
        await judge(stub, tmp_path, q_ls=["a", "b", "c", "d"], pred_ls=["score=3", "GARBLED", "GARBLED", "score=5"],
                    rubrics=[POLITE], max_failed_fraction=0.25)  # fmt: skip


def scripted(reply: str, at: str, alternatives: dict[str, float]) -> list[dict[str, Any]]:
    """Token log-probabilities spelling ``reply``: one token per character run, ``at`` a token of its own
    whose top alternatives are ``alternatives`` (token -> probability)."""
    start = reply.rindex(at)
    pieces = [reply[:start], at, reply[start + len(at) :]]
    tops = [{"token": token, "logprob": math.log(p)} for token, p in alternatives.items()]
    return [
        {"token": piece, "logprob": -0.1, "top_logprobs": tops if piece == at and i == 1 else []}
        for i, piece in enumerate(pieces)
        if piece
    ]


async def test_logprob_weighted_score_by_hand(tmp_path) -> None:
    reply = '{"reasoning": "mostly polite", "score": 4}'
    label_reply = '{"reasoning": "grounded", "score": "pass"}'
    cache = str(tmp_path / "cache.sqlite")
    with OpenAIStub(responder=responder) as stub:
        stub.add_fault("reply", match="Question: a\n", text=reply,
                       logprobs=scripted(reply, "4", {"4": 0.6, " 5": 0.25, "3": 0.05, "The": 0.1}))  # fmt: skip
        stub.add_fault("reply", match="label=pass\n\nPassages:", text=label_reply,
                       logprobs=scripted(label_reply, "pass", {"pass": 0.7, "fail": 0.2, "maybe": 0.1}))  # fmt: skip
        grounded = {**GROUNDED, "steps": ["Check."]}
        given = dict(q_ls=["a", "b"], pred_ls=["score=4 label=pass", "score=2 label=fail"], ret_psg=[["p"], ["p"]],
                     rubrics=[POLITE, grounded], rubric_top_logprobs=5, judge_cache=cache)  # fmt: skip
        result = await call_job(rubric_judge, save_path=str(tmp_path / "j"),
                                judge_llm=llm_settings(stub), **given)  # fmt: skip
        sent = stub.chat_requests()
        assert all(b["logprobs"] is True and b["top_logprobs"] == 5 for b in sent)
        again = await call_job(rubric_judge, save_path=str(tmp_path / "j"), judge_llm=llm_settings(stub), **given)
        assert stub.request_count == 4  # the rerun's answers, log-probabilities too, come from the cache
    by_hand = (0.6 * 4 + 0.25 * 5 + 0.05 * 3) / (0.6 + 0.25 + 0.05)  # "The" is not on the scale
    label_by_hand = (0.7 * 1 + 0.2 * 0) / (0.7 + 0.2)
    for run in (result, again):
        first = run["items"][0]["rubrics"]
        assert first["polite"]["score"] == 4 and first["polite"]["weighted"] == pytest.approx(by_hand)
        assert first["grounded"]["weighted"] == pytest.approx(label_by_hand)
        second = run["items"][1]["rubrics"]["polite"]
        assert second["weighted"] is None
        assert second["weighted_reason"] == "the endpoint returned no token log-probabilities"
    assert result["weighted"] == {"polite": pytest.approx(by_hand), "grounded": pytest.approx(label_by_hand)}


async def test_missing_inputs_and_bad_declarations_are_refused(tmp_path) -> None:
    with OpenAIStub(responder=responder) as stub:
        with pytest.raises(Exception, match=r"need \['ret_psg'\]"):
            await judge(stub, tmp_path, q_ls=["a"], pred_ls=["b"], rubrics=[GROUNDED])
        with pytest.raises(Exception, match=r"rubrics\[0\]: rubric 1 \('polite'\): unknown input 'context'"):
            await judge(stub, tmp_path, q_ls=["a"], pred_ls=["b"], rubrics=[{**POLITE, "inputs": ["context"]}])
        assert stub.request_count == 0


async def test_batch_mode_generates_the_steps_first_and_equals_online(tmp_path) -> None:
    batch = {"mode": "batch", "batch_max_requests": 1000, "batch_max_bytes": 10**6, "batch_poll_interval": 0.05}
    given = dict(pred_ls=["score=4 label=pass", "score=1 label=fail"], ret_psg=[["p"], ["p"]], rubrics=[GROUNDED])
    with BatchStub(responder=responder) as server:
        batched = await judge(server, tmp_path, judge_llm=llm_settings(server, **batch),
                              judge_cache=str(tmp_path / "b.sqlite"), **given)  # fmt: skip
        assert server.request_count == 0 and server.batch_lines == [1, 2]  # the steps, then the two judgments
        online = await judge(server, tmp_path, judge_cache=str(tmp_path / "o.sqlite"), **given)
    assert batched["aggregate"] == online["aggregate"] == {"grounded": 0.5, "num_grounded": 2, "num_items": 2,
                                                           "num_excluded": 0}  # fmt: skip
    assert batched["rubrics"][0]["steps"] == STEPS == online["rubrics"][0]["steps"]


@pytest.mark.parametrize(
    "garbage",
    [["{", "<step 1>", "{", "<step 2>"], ["<step 1>", "<step 2>", "<step 3>"], ["Check the answer."] * 3, ["ok"]],
)
async def test_generated_steps_that_are_not_instructions_fail_the_rubric_counted(tmp_path, garbage) -> None:
    def garbled_steps(request: dict[str, Any]) -> str:
        if "evaluation steps a careful judge follows" in content_of(request):
            return json.dumps({"steps": garbage})
        return responder(request)

    with OpenAIStub(responder=garbled_steps) as stub:
        result = await judge(stub, tmp_path, q_ls=["a", "b"], pred_ls=["score=4 label=pass", "score=2 label=fail"],
                             ret_psg=[["p"], ["p"]], rubrics=[POLITE, GROUNDED], max_failed_fraction=1.0)  # fmt: skip
        assert stub.request_count == 1 + 2  # the steps, then only the polite judgments: nothing judged by garbage
    for item in result["items"]:
        assert item["status"] == "incomplete" and item["grounded"] is None and item["polite"] is not None
        grounded = item["rubrics"]["grounded"]
        assert grounded["status"] == "parse_error" and "not a list of instructions" in grounded["error"]
    assert result["failed"]["reasons"]["parse_error"] == 2 and result["aggregate"]["grounded"] is None
    with OpenAIStub(responder=garbled_steps) as stub, pytest.raises(Exception, match="not a list of instructions"):
        await judge(stub, tmp_path, q_ls=["a"], pred_ls=["label=pass"], ret_psg=[["p"]], rubrics=[GROUNDED])
