"""Repeated judging (``judge_llm.samples``): k requests per item over HTTP, each its own cached request (seed 42,
43, 44 at the temperature set), the item's mean and sd and the run's within-item share of variance by hand."""

from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

import pytest

from servers.judge.answers.run import build_items, run_answer_judge
from tests.judge.conftest import call_job
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_base.errors import InputError

pytestmark = pytest.mark.anyio

# biased opinions out of 4, per answer and seed: "one" 1, 2, 3 (bias .25 .5 .75); "two" 0, 0, 2 (0, 0, .5)
BIASED = {("answer one", 42): 1, ("answer one", 43): 2, ("answer one", 44): 3}
BIASED |= {("answer two", 42): 0, ("answer two", 43): 0, ("answer two", 44): 2}


def opinions(request: dict[str, Any]) -> str:
    answer = "answer one" if "answer one" in content_of(request) else "answer two"
    biased = BIASED[(answer, request["seed"])]
    listed = [{"opinion": f"o{i}", "biased": "yes" if i < biased else "no", "category": "political"} for i in range(4)]
    return json.dumps({"opinions": listed})


SAMPLED = {"base_url": "", "model_id": "stub-judge", "api_key": "", "samples": 3, "temperature": 0.7}


async def judge(stub: OpenAIStub, tmp_path: Any, **llm: Any) -> dict[str, Any]:
    items = build_items(["q1?", "q2?"], ["answer one", "answer two"])
    return await call_job(
        run_answer_judge, "bias", items, judge_llm={**SAMPLED, "base_url": stub.base_url, **llm},
        judge_cache=str(tmp_path / "cache.sqlite"), save_path=str(tmp_path),
    )  # fmt: skip


async def test_three_samples_give_the_mean_the_sd_and_the_judges_own_noise(tmp_path) -> None:
    with OpenAIStub(opinions) as stub:
        result = await judge(stub, tmp_path)
        sent = stub.chat_requests()
        stub.reset()
        again = await judge(stub, tmp_path)
        assert stub.request_count == 0  # a rerun sends nothing: every sample is cached
    assert len(sent) == 6 and {body["temperature"] for body in sent} == {0.7}
    for answer in ("answer one", "answer two"):
        assert sorted(b["seed"] for b in sent if answer in content_of(b)) == [42, 43, 44]
    one, two = result["items"]
    assert one["sample_values"]["bias"] == [0.25, 0.5, 0.75] and two["sample_values"]["bias"] == [0.0, 0.0, 0.5]
    assert one["bias"] == pytest.approx(0.5) and two["bias"] == pytest.approx(1 / 6)
    # sd with n - 1: one: (.25^2 + 0 + .25^2) / 2 = 1/16 -> .25; two: ((1/6)^2 * 2 + (1/3)^2) / 2 = 1/12
    assert one["spread"]["bias"] == pytest.approx(0.25) and two["spread"]["bias"] == pytest.approx(math.sqrt(1 / 12))
    assert one["spread"]["no_opinion"] == 0.0  # the same label three times: entropy 0
    assert one["requests"] == 3 and result["aggregate"]["bias"] == pytest.approx((0.5 + 1 / 6) / 2)
    # within items 1/8 + 1/6 = 7/24; around the grand mean 1/3: (1 + 4 + 25 + 16 + 16 + 4) / 144 = 11/24
    figures = result["reliability"]["bias"]
    assert figures["within_item_share"] == pytest.approx(7 / 11)
    assert figures["mean_spread"] == pytest.approx((0.25 + math.sqrt(1 / 12)) / 2)
    assert result["reliability"]["no_opinion"]["within_item_share"] is None  # no variation at all
    assert again["items"] == [{**item, "cached": True, "requests": 0} for item in result["items"]]
    assert one["biased_opinions"] == 2  # the details are those of the sample that gave the value (seed 43)
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 6


async def test_samples_need_a_temperature(tmp_path) -> None:
    with OpenAIStub(opinions) as stub:
        for temperature in (None, 0):
            with pytest.raises(InputError, match=r"judge_llm.samples 3 needs judge_llm.temperature > 0"):
                await judge(stub, tmp_path, temperature=temperature)
        assert stub.request_count == 0
        single = await judge(stub, tmp_path, samples=1)
    assert single["reliability"] == {} and "spread" not in single["items"][0]
    assert single["items"][0]["bias"] == 0.25  # sample 0 is the request a run without samples sends (seed 42)


def two_members(request: dict[str, Any]) -> str:
    """``opinions`` for judge-a; judge-b finds one biased opinion more in every sample."""
    if request["model"] == "judge-a":
        return opinions(request)
    listed = json.loads(opinions(request))["opinions"]
    biased = sum(o["biased"] == "yes" for o in listed) + 1
    return json.dumps({"opinions": [{**o, "biased": "yes" if i < biased else "no"} for i, o in enumerate(listed)]})


async def test_a_jury_with_samples_combines_each_members_samples_first(tmp_path) -> None:
    with OpenAIStub(two_members) as stub:
        jury = [{"base_url": stub.base_url, "model_id": f"judge-{m}", "api_key": ""} for m in "ab"]
        result = await judge(stub, tmp_path, jury=jury, jury_aggregate="mean")
        assert stub.request_count == 12  # 2 members x 3 samples x 2 answers
    one, two = result["items"]
    assert {m: v["bias"] for m, v in one["jury"].items()} == pytest.approx({"judge-a": 0.5, "judge-b": 0.75})
    assert one["bias"] == pytest.approx(0.625) and two["bias"] == pytest.approx((1 / 6 + 5 / 12) / 2)
    assert one["jury"]["judge-b"]["spread"]["bias"] == pytest.approx(0.25)
    # each member's samples lie as judge-a's do around its own means: 7/24 within of 11/24, pooled 14/22
    assert result["reliability"]["bias"]["within_item_share"] == pytest.approx(7 / 11)
    assert result["reliability"]["bias"]["level"] == "interval" and "kappa" not in result["reliability"]["bias"]
