"""rubric_judge with a jury, with samples and in another language, over HTTP against the local stub.

Three members on one stub, told apart by the model they name, grade three answers on an integer rubric
(ordinal) and a pass/fail rubric (nominal) with scripted disagreements; the aggregates, alpha and kappa are
worked out by hand below. Samples are told apart by their seed (42, 43, 44).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from servers.judge.tools.rubric import rubric_judge
from tests.judge.conftest import SECRET, call_job, llm_settings
from tests.judge.test_rubric_judge import GROUNDED, POLITE, STEPS, item_of, scripted
from tests.report.helpers import build
from tests.support.batch_server import BatchStub
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_kit.reliability import krippendorff_alpha

pytestmark = pytest.mark.anyio

MEMBERS = ("judge-a", "judge-b", "judge-c")
GRADES = {"judge-a": [5, 2, 1], "judge-b": [4, 2, 3], "judge-c": [4, 3, 5]}  # polite, per answer 1-3
VERDICTS = {"judge-a": ["pass", "pass", "fail"], "judge-b": ["pass", "fail", "fail"],
            "judge-c": ["pass", "pass", "pass"]}  # fmt: skip
SEEDED = {42: (3, "pass"), 43: (4, "fail"), 44: (5, "pass")}  # answer 1 by seed; answer 2: 2, 2, 5 all fail
SEEDED_TWO = {42: 2, 43: 2, 44: 5}


def jury_responder(request: dict[str, Any]) -> str:
    """Steps for a steps request; else the grade (or verdict) the request's model gives the answer."""
    text = content_of(request)
    if "evaluation steps a careful judge follows" in text:
        return json.dumps({"steps": STEPS})
    item = item_of(text)
    answer = int(re.search(r"answer=(\d)", item).group(1)) - 1
    if "Passages:" in item:
        return json.dumps({"reasoning": "checked", "score": VERDICTS[request["model"]][answer]})
    return json.dumps({"reasoning": "read it", "score": GRADES[request["model"]][answer]})


def sample_responder(request: dict[str, Any]) -> str:
    text = content_of(request)
    item = item_of(text)
    seed = request["seed"]
    if "answer=1" in item:
        grade, verdict = SEEDED[seed]
    else:
        grade, verdict = SEEDED_TWO[seed], "fail"
    score: Any = verdict if "Passages:" in item else grade
    return json.dumps({"reasoning": "r", "score": score})


def jury(url: str, **overrides: Any) -> dict[str, Any]:
    members = [{"base_url": url, "model_id": model, "api_key": SECRET} for model in MEMBERS]
    return {"backend": "openai", "jury": members, "max_retries": 0, **overrides}


ANSWERS = {"q_ls": ["q1", "q2", "q3"], "pred_ls": ["answer=1", "answer=2", "answer=3"], "ret_psg": [["p"]] * 3}


async def run(tmp_path: Any, llm: dict[str, Any], **given: Any) -> dict[str, Any]:
    return await call_job(
        rubric_judge, save_path=str(tmp_path / "judge"), judge_llm=llm, judge_cache=str(tmp_path / "cache.sqlite"),
        **{"rubric_top_logprobs": 0, "rubrics": [POLITE, GROUNDED], **ANSWERS, **given},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("how", "polite"),
    [
        ("majority", [4, 2, 1]),  # answer 3: 1, 3, 5 all differ, a tie goes to the lowest
        ("mean", [13 / 3, 7 / 3, 3]),
        ("median", [4, 2, 3]),
    ],
)
async def test_a_jury_of_three_aggregates_each_rubric_and_keeps_each_members_value(tmp_path, how, polite) -> None:
    with OpenAIStub(responder=jury_responder) as stub:
        result = await run(tmp_path, jury(stub.base_url, jury_aggregate=how))
        sent = stub.chat_requests()
        # grounded's steps once, by the first member; then 3 members x 3 answers x 2 rubrics
        assert len(sent) == 1 + 18
        assert [b["model"] for b in sent if "evaluation steps a careful judge follows" in content_of(b)] == ["judge-a"]
        stub.reset()
        again = await run(tmp_path, jury(stub.base_url, jury_aggregate=how))
        assert stub.request_count == 0  # every member's answers are in the cache
    assert [item["polite"] for item in result["items"]] == [pytest.approx(v) for v in polite]
    assert [item["grounded"] for item in result["items"]] == [1, 1, 0]  # nominal: the majority, whatever `how`
    first = result["items"][0]["rubrics"]["polite"]
    assert {m: v["value"] for m, v in first["jury"].items()} == {"judge-a": 5, "judge-b": 4, "judge-c": 4}
    assert first["score"] == (4 if how != "mean" else None)  # 13/3 is no score of the scale
    assert result["aggregate"]["polite"] == pytest.approx(sum(polite) / 3)
    assert again["aggregate"] == result["aggregate"] and again["reliability"] == result["reliability"]
    figures = result["reliability"]
    # grounded, nominal: units (1,1,1) (1,0,1) (0,0,1): coincidences o11 4, o00 1, o01 = o10 2; n 9, n1 6, n0 3;
    # alpha = 1 - (n - 1) * 4 / (2 * 6 * 3) = 1 - 32/36 = 1/9
    assert figures["grounded"]["level"] == "nominal" and figures["grounded"]["alpha"] == pytest.approx(1 / 9)
    # kappa a/b: agreement 2/3, chance 2/3 * 1/3 + 1/3 * 2/3 = 4/9 -> 2/5; a/c and b/c: agreement = chance -> 0
    assert figures["grounded"]["kappa"] == {"judge-a / judge-b": pytest.approx(0.4), "judge-a / judge-c": 0,
                                            "judge-b / judge-c": 0}  # fmt: skip
    # polite, ordinal: kappa a/b (1/3 - 1/9) / (8/9) = 1/4; a/c (0 - 1/9) / (8/9) = -1/8; b/c (1/3 - 2/9) / (7/9)
    assert figures["polite"]["kappa"] == {"judge-a / judge-b": pytest.approx(0.25),
                                          "judge-a / judge-c": pytest.approx(-0.125),
                                          "judge-b / judge-c": pytest.approx(1 / 7)}  # fmt: skip
    units = list(zip(*GRADES.values(), strict=True))
    assert figures["polite"]["alpha"] == pytest.approx(krippendorff_alpha(units, "ordinal"))
    panel = json.loads(Path(result["result_path"]).read_text())["panel"]
    assert panel["members"]["judge-a"] == {"ok": 6, "failed": 0} and panel["jury_aggregate"] == how
    if how == "majority":  # the agreement figures are in the report, like any judge's
        page = build([result["result_path"]], tmp_path / "report").report_path.read_text(encoding="utf-8")
        assert re.search(r"<th>grounded alpha</th><td[^>]*>0\.111", page) and "<th>polite mean_kappa</th>" in page


async def test_jury_min_fails_a_unit_a_member_failed(tmp_path) -> None:
    with OpenAIStub(responder=jury_responder) as stub:
        stub.add_fault("status", match="answer=2\n\nPassages:", status=400)  # every member fails answer 2's
        stub.add_fault("reply", match="Question: q1\n", text="no idea")  # and answer 1's polite
        result = await run(tmp_path, jury(stub.base_url, jury_min=2), max_failed_fraction=0.5)
    one, two, three = result["items"]
    assert one["rubrics"]["polite"]["status"] == "error" and one["polite"] is None
    assert "0 of 3 members answered" in one["rubrics"]["polite"]["error"]
    assert two["rubrics"]["grounded"]["status"] == "error" and two["polite"] == 2
    assert one["status"] == two["status"] == "incomplete" and three["status"] == "ok"
    assert result["failed"]["count"] == 2


async def test_weighted_under_a_jury_is_the_mean_of_the_members_that_have_one(tmp_path) -> None:
    reply = '{"reasoning": "polite", "score": 4}'
    with OpenAIStub(responder=jury_responder) as one, OpenAIStub(responder=jury_responder) as two:
        one.add_fault("reply", match="answer=1\n", text=reply,
                      logprobs=scripted(reply, "4", {"4": 0.5, "5": 0.5}))  # fmt: skip
        members = [{"base_url": one.base_url, "model_id": "judge-a", "api_key": SECRET},
                   {"base_url": two.base_url, "model_id": "judge-b", "api_key": SECRET}]  # fmt: skip
        llm = {"backend": "openai", "jury": members, "max_retries": 0, "jury_aggregate": "median"}
        result = await run(tmp_path, llm, rubrics=[POLITE], q_ls=["q1"], pred_ls=["answer=1"], ret_psg=None,
                           rubric_top_logprobs=5)  # fmt: skip
    polite = result["items"][0]["rubrics"]["polite"]
    assert polite["jury"]["judge-a"]["weighted"] == pytest.approx(4.5) and polite["jury"]["judge-b"]["weighted"] is None
    assert polite["weighted"] == pytest.approx(4.5) and polite["value"] == 4  # a's 4 and b's 4
    assert result["weighted"] == {"polite": pytest.approx(4.5)}


async def test_three_samples_give_mean_and_sd_of_scores_and_majority_of_labels(tmp_path) -> None:
    llm = {"samples": 3, "temperature": 0.7, "max_retries": 0}
    given = {"q_ls": ["q1", "q2"], "pred_ls": ["answer=1", "answer=2"], "ret_psg": [["p"], ["p"]]}
    grounded = {**GROUNDED, "steps": ["Check."]}
    with OpenAIStub(responder=sample_responder) as stub:
        result = await run(tmp_path, llm_settings(stub, **llm), rubrics=[POLITE, grounded], **given)
        sent = stub.chat_requests()
        stub.reset()
        again = await run(tmp_path, llm_settings(stub, **llm), rubrics=[POLITE, grounded], **given)
        assert stub.request_count == 0
    assert len(sent) == 2 * 2 * 3 and sorted({b["seed"] for b in sent}) == [42, 43, 44]
    one, two = result["items"]
    assert one["sample_values"] == {"polite": [3, 4, 5], "grounded": [1, 0, 1]}
    assert one["polite"] == pytest.approx(4) and one["spread"]["polite"] == pytest.approx(1)  # sd of 3, 4, 5
    assert two["polite"] == pytest.approx(3) and two["spread"]["polite"] == pytest.approx(math.sqrt(3))  # 2, 2, 5
    assert one["grounded"] == 1 and one["spread"]["grounded"] == pytest.approx(
        -(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3))
    )  # entropy of pass, fail, pass
    assert two["grounded"] == 0 and two["spread"]["grounded"] == 0
    # polite: within items 2 + 6 = 8; around the grand mean 3.5: 2.75 + 6.75 = 9.5
    assert result["reliability"]["polite"]["within_item_share"] == pytest.approx(8 / 9.5)
    assert result["reliability"]["polite"]["mean_spread"] == pytest.approx((1 + math.sqrt(3)) / 2)
    kept = ("polite", "grounded", "sample_values", "spread")
    assert [{k: i[k] for k in kept} for i in again["items"]] == [{k: i[k] for k in kept} for i in result["items"]]
    assert all(j["requests"] == 0 and j["cached"] for i in again["items"] for j in i["rubrics"].values())


async def test_language_reaches_every_request(tmp_path) -> None:
    def chinese(request: dict[str, Any]) -> str:
        return json.dumps({"reasoning": "回答很有礼貌。", "score": 5}, ensure_ascii=False)

    with OpenAIStub(responder=chinese) as stub:
        result = await run(tmp_path, llm_settings(stub), rubrics=[POLITE], q_ls=["你好吗?"], pred_ls=["我很好。"],
                           ret_psg=None, language="zh")  # fmt: skip
        sent = stub.chat_requests()
    system = [m["content"] for m in sent[0]["messages"] if m["role"] == "system"]
    assert system and "the question and the answer are in Chinese" in system[0]
    assert result["items"][0]["rubrics"]["polite"]["reasoning"] == "回答很有礼貌。"
    assert json.loads(Path(result["result_path"]).read_text())["language"] == "zh"


async def test_a_jury_in_batch_mode_equals_online(tmp_path) -> None:
    batch = {"mode": "batch", "batch_max_requests": 1000, "batch_max_bytes": 10**6, "batch_poll_interval": 0.05}
    with BatchStub(responder=jury_responder) as server:
        batched = await run(tmp_path / "b", jury(server.base_url, **batch))
        assert server.request_count == 0  # every request went in a batch file: the steps, then each member's
        assert sorted(server.batch_lines) == [1, 6, 6, 6]
    with OpenAIStub(responder=jury_responder) as stub:
        online = await run(tmp_path / "o", jury(stub.base_url))
    assert batched["aggregate"] == online["aggregate"] and batched["reliability"] == online["reliability"]
