"""Juries (``judge_llm.jury``): every member judges every item over HTTP, the item's value is their majority,
mean or median, and the agreement figures are Krippendorff's alpha and pairwise Cohen's kappa, by hand.

Three members on one local stub server, told apart by the model they name; their grades are scripted so
that they disagree. A failing member runs on a second stub whose requests for one passage fail.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from servers.judge.answers.run import build_items, run_answer_judge
from servers.judge.nuggets.run import dump, run_nuggetize
from servers.judge.relevance.run import run_umbrela
from tests.judge.conftest import SECRET, call_job, query_and_passage
from tests.judge.nugget_stub import nugget_responder, stage, stages
from tests.report.helpers import build
from tests.support.batch_server import BatchStub
from tests.support.openai_stub import OpenAIStub
from ultra_base.errors import InputError

pytestmark = pytest.mark.anyio

PASSAGES = {f"d{i}": f"passage number {i}" for i in range(1, 5)}
# member -> grade per passage: d1 two 3s and a 2; d2 all 1; d3 three different (a tie); d4 two 2s and a 0
GRADES = {"judge-a": [3, 1, 0, 2], "judge-b": [3, 1, 1, 0], "judge-c": [2, 1, 3, 2], "judge-d": [0, 0, 0, 0]}
MEMBERS = ("judge-a", "judge-b", "judge-c")


def scripted(request: dict[str, Any]) -> str:
    """The grade the request's model gives the request's passage."""
    _, passage = query_and_passage(request)
    return f"##final score: {GRADES[request['model']][int(passage.rsplit(' ', 1)[1]) - 1]}"


def jury_llm(*urls: str, models: tuple[str, ...] = MEMBERS, **overrides: Any) -> dict[str, Any]:
    members = [{"base_url": url, "model_id": model, "api_key": SECRET} for url, model in zip(urls, models, strict=True)]
    return {"jury": members, "max_retries": 0, **overrides}


async def umbrela(llm: dict[str, Any], **given: Any) -> dict[str, Any]:
    return await call_job(run_umbrela, query="which passage?", passages=PASSAGES, judge_llm=llm, **given)


@pytest.fixture
def jury_stub() -> Any:
    with OpenAIStub(scripted) as server:
        yield server


@pytest.mark.parametrize(
    ("how", "grades"),
    [
        ("majority", [3, 1, 0, 2]),  # d3: 0, 1, 3 tie: the lowest; d4: 2 twice
        ("mean", [3, 1, 1, 1]),  # 8/3, 1, 4/3, 4/3 rounded to whole grades
        ("median", [3, 1, 1, 2]),
    ],
)
async def test_the_jury_aggregates_every_item_and_keeps_each_members_grade(jury_stub, tmp_path, how, grades) -> None:
    url = jury_stub.base_url
    result = await umbrela(jury_llm(url, url, url, jury_aggregate=how), save_path=str(tmp_path))
    assert [result["scores"]["q1"][f"d{i}"] for i in range(1, 5)] == grades
    assert jury_stub.request_count == 12  # 3 members x 4 passages
    assert sorted({body["model"] for body in jury_stub.chat_requests()}) == list(MEMBERS)
    document = json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))
    for index, judgment in enumerate(document["judgments"]):
        assert {m: v["score"] for m, v in judgment["jury"].items()} == {m: GRADES[m][index] for m in MEMBERS}
    qrels = Path(result["llm_qrels_path"]).read_text(encoding="utf-8").split("\n")
    assert qrels[:4] == [f"q1 0 d{i} {g}" for i, g in enumerate(grades, start=1)]
    assert document["panel"]["members"] == {m: {"ok": 4, "failed": 0} for m in MEMBERS}
    assert SECRET not in json.dumps(document)


async def test_alpha_and_kappa_computed_by_hand(jury_stub, tmp_path) -> None:
    url = jury_stub.base_url
    result = await umbrela(jury_llm(url, url, url), save_path=str(tmp_path))
    figures = result["reliability"]["score"]
    # Ordinal alpha. Coincidences (each ordered pair of a unit's 3 values weighs 1/2): o11 = 3, o22 = 1, o33 = 1,
    # o23 = o32 = 1, o02 = o20 = 1, o01 = o10 = o03 = o30 = o13 = o31 = 1/2; marginals n0..n3 = 2, 4, 3, 3 (n = 12).
    # Ordinal distances d(c,k) = (n_c + ... + n_k - (n_c + n_k) / 2)^2: d01 = 9, d02 = 42.25, d03 = 90.25,
    # d12 = 12.25, d13 = 42.25, d23 = 9. Observed sum o*d = 2 * 122 = 244; expected sum n_c*n_k*d = 2 * 1602 = 3204;
    # alpha = 1 - (n - 1) * 244 / 3204 = 520 / 3204.
    assert figures["level"] == "ordinal" and figures["units"] == 4
    assert figures["alpha"] == pytest.approx(520 / 3204)
    # Kappa: a/b agree on 2 of 4, chance 4/16 -> 1/3; a/c 2 of 4, chance 4/16 -> 1/3; b/c 1 of 4, chance 3/16 -> 1/13
    assert figures["kappa"] == pytest.approx(
        {"judge-a / judge-b": 1 / 3, "judge-a / judge-c": 1 / 3, "judge-b / judge-c": 1 / 13}
    )
    assert figures["mean_kappa"] == pytest.approx((1 / 3 + 1 / 3 + 1 / 13) / 3)
    # the report shows them under "Other results", beside the jury's own metric values
    page = build([result["result_path"]], tmp_path / "report").report_path.read_text(encoding="utf-8")
    assert re.search(r"<th>score alpha</th><td[^>]*>0\.162", page) and "<th>score mean_kappa</th>" in page


async def test_a_failing_member_leaves_the_item_to_the_others_only_with_jury_min(jury_stub, tmp_path) -> None:
    with OpenAIStub(scripted) as failing:
        failing.add_fault("status", status=500, match="passage number 3")  # judge-c fails d3 only
        urls = (jury_stub.base_url, jury_stub.base_url, failing.base_url)
        two = await umbrela(jury_llm(*urls, jury_min=2), save_path=str(tmp_path / "two"))
        three = await umbrela(jury_llm(*urls, jury_min=3), save_path=str(tmp_path / "three"), max_failed_fraction=0.5)
    assert two["scores"]["q1"] == {"d1": 3, "d2": 1, "d3": 0, "d4": 2}  # d3 by a and b: 0, 1 tie -> 0
    assert two["failed"]["count"] == 0
    assert three["scores"]["q1"] == {"d1": 3, "d2": 1, "d3": None, "d4": 2}
    assert three["counts"]["error"] == 1 and three["failed"]["count"] == 1
    (failure,) = three["failures"]
    assert failure["error"] == "jury: 2 of 3 members answered; judge_llm.jury_min is 3"
    assert failure["jury"]["judge-c"]["status"] == "error" and "500" in failure["jury"]["judge-c"]["error"]
    document = json.loads(Path(three["result_path"]).read_text(encoding="utf-8"))
    assert document["panel"]["members"]["judge-c"] == {"ok": 3, "failed": 1}
    assert "d3" not in Path(three["llm_qrels_path"]).read_text(encoding="utf-8")


async def test_each_member_has_its_own_cache_entries(jury_stub, tmp_path) -> None:
    url, cache = jury_stub.base_url, str(tmp_path / "cache.sqlite")
    first = await umbrela(jury_llm(url, url, url), save_path=str(tmp_path), judge_cache=cache)
    jury_stub.reset()
    again = await umbrela(jury_llm(url, url, url), save_path=str(tmp_path), judge_cache=cache)
    assert jury_stub.request_count == 0 and again["scores"] == first["scores"]
    assert again["usage"]["cache_hits"] == 12 and set(again["usage"]["members"]) == set(MEMBERS)
    with sqlite3.connect(cache) as db:
        rows = dict(db.execute("SELECT model_id, COUNT(*) FROM answers GROUP BY model_id").fetchall())
    assert rows == dict.fromkeys(MEMBERS, 4)
    # another member in c's place: only its requests are sent
    models = ("judge-a", "judge-b", "judge-d")
    swapped = await umbrela(jury_llm(url, url, url, models=models), save_path=str(tmp_path), judge_cache=cache)
    assert {body["model"] for body in jury_stub.chat_requests()} == {"judge-d"} and jury_stub.request_count == 4
    assert swapped["scores"]["q1"] == {"d1": 3, "d2": 1, "d3": 0, "d4": 0}  # d4: 2, 0, 0


def rating(request: dict[str, Any]) -> str:
    """rag_judge ratings: judge-a 8, judge-b 2, judge-c 3 for every answer."""
    return f"##final score: {dict(zip(MEMBERS, (8, 2, 3), strict=True))[request['model']]}"


@pytest.mark.parametrize(("how", "score"), [("mean", 13 / 30), ("median", 0.3), ("majority", 0.2)])
async def test_an_answer_judge_takes_the_jury_too(tmp_path, how, score) -> None:
    items = build_items(["q?"], ["an answer"], ret_psg=[["a passage"]], gt_ls=["the reference"])
    with OpenAIStub(rating) as stub:
        url = stub.base_url
        result = await call_job(
            run_answer_judge, "rag", items, judge_llm=jury_llm(url, url, url, jury_aggregate=how),
            save_path=str(tmp_path),
        )  # fmt: skip
    (item,) = result["items"]
    assert item["rag_score"] == pytest.approx(score)  # ratings 8, 2, 3 / 10; three different: the lowest wins
    assert {m: v["rag_score"] for m, v in item["jury"].items()} == {"judge-a": 0.8, "judge-b": 0.2, "judge-c": 0.3}
    assert item["requests"] == 3 and result["aggregate"]["rag_score"] == pytest.approx(score)


async def test_majority_over_scores_and_bad_juries_are_refused_with_the_reason(jury_stub, tmp_path) -> None:
    url = jury_stub.base_url
    items = build_items(["q?"], ["an answer"])
    with pytest.raises(InputError, match=r"majority needs labels, but bias's \['bias'\] are scores: set judge_llm"):
        await call_job(run_answer_judge, "bias", items, judge_llm=jury_llm(url, url, url), save_path=str(tmp_path))
    members = jury_llm(url, url, url)["jury"]
    for llm, message in [
        ({"jury": members[:1]}, r"judge_llm.jury must be a list of 2 or more members"),
        ({"jury": members, "jury_min": 4}, r"judge_llm.jury_min must be between 1 and the 3 members"),
        ({"jury": members, "jury_aggregate": "vote"}, r"jury_aggregate must be one of \['majority', 'mean'"),
        ({"jury": [members[0], members[0]]}, r"names the model \['judge-a'\] twice: jury members are different"),
        ({"jury": [members[0], {**members[1], "weight": 2}]}, r"judge_llm.jury\[1\] has unknown keys \['weight'\]"),
        ({"jury": [members[0], {"base_url": url}]}, r"judge_llm.jury\[1\] needs a model_id"),
    ]:
        with pytest.raises(InputError, match=message):
            await umbrela(llm, save_path=str(tmp_path))
    assert jury_stub.request_count == 0


def nugget_members(request: dict[str, Any]) -> str:
    """nugget_stub's replies; at the assign stage judge-b says support and judge-c not_support to every nugget."""
    if stage(request) != "assign" or request["model"] == "judge-a":
        return nugget_responder(request)
    count = len(json.loads(nugget_responder(request).split("\n", 1)[1]))
    return json.dumps([{"judge-b": "support", "judge-c": "not_support"}[request["model"]]] * count)


@pytest.mark.parametrize(
    ("how", "labels"),
    [
        ("majority", ["support", "not_support", "not_support"]),  # 2 support; a three-way tie: the lowest; 2 not
        ("mean", ["partial_support", "partial_support", "partial_support"]),  # 2/3, 1/2, 1/3: the nearest label
    ],
)
async def test_nugget_assignment_takes_the_jury(tmp_path, how, labels) -> None:
    passages = ["vital fact one", "okay fact two", "vital fact three"]
    answer = json.dumps({"vital fact one": "support", "okay fact two": "partial_support"})
    with OpenAIStub(nugget_members) as stub:
        url = stub.base_url
        result = await call_job(
            run_nuggetize, query="q?", passages=passages, answers={"runA": answer},
            judge_llm=jury_llm(url, url, url, jury_aggregate=how), save_path=str(tmp_path),
        )  # fmt: skip
        assert stages(stub.chat_requests()) == {"create": 1, "score": 1, "assign": 3}  # judge-a creates, scores
    (record,) = dump(result["assignments_path"])
    assert [n["assignment"] for n in record["nuggets"]] == labels
    assert [n["jury"]["judge-b"]["support"] for n in record["nuggets"]] == [1.0, 1.0, 1.0]
    assert {b["member"] for b in record["batches"]} == set(MEMBERS)
    if how == "majority":  # importance vital, okay, vital: all 1/3, vital 1/2, weighted 1 / 2.5
        assert result["per_query"]["q1"]["runA"]["all"] == pytest.approx(1 / 3)
        assert result["per_query"]["q1"]["runA"]["weighted"] == pytest.approx(0.4)
    # credits per nugget (a, b, c): (1, 1, 0), (.5, 1, 0), (0, 1, 0). Coincidences o00 = 1, o02 = o20 = 2.5,
    # o22 = 1, o01 = o10 = o12 = o21 = 1/2; n = 4, 1, 4. Ordinal d01 = d12 = 6.25, d02 = 25. Observed 2 * 68.75,
    # expected 2 * 450: alpha = 1 - 8 * 137.5 / 900 = -2/9
    assert result["reliability"]["support"]["alpha"] == pytest.approx(-2 / 9)


async def test_each_member_runs_its_own_batches_in_batch_mode(tmp_path) -> None:
    batch = {"mode": "batch", "batch_max_requests": 1000, "batch_max_bytes": 10**6, "batch_poll_interval": 0.05}
    with BatchStub(responder=scripted) as server:
        url, cache = server.base_url, str(tmp_path / "cache.sqlite")
        batched = await umbrela(jury_llm(url, url, url, **batch), save_path=str(tmp_path), judge_cache=cache)
        assert server.request_count == 0 and sorted(server.batch_lines) == [4, 4, 4]  # one batch per member
        rerun = await umbrela(jury_llm(url, url, url, **batch), save_path=str(tmp_path), judge_cache=cache)
        assert len(server.batch_lines) == 3 and rerun["usage"]["requests"] == 0
    assert batched["scores"]["q1"] == rerun["scores"]["q1"] == {"d1": 3, "d2": 1, "d3": 0, "d4": 2}


async def test_a_member_may_be_a_pool(jury_stub, tmp_path) -> None:
    with OpenAIStub(scripted) as second:
        llm = jury_llm(jury_stub.base_url, jury_stub.base_url, jury_stub.base_url)
        pool = [{"base_url": url, "api_key": ""} for url in (jury_stub.base_url, second.base_url)]
        llm["jury"][0] = {"model_id": "judge-a", "endpoints": pool, "max_workers": 1}
        result = await umbrela(llm, save_path=str(tmp_path))
        assert {body["model"] for body in second.chat_requests()} == {"judge-a"} and second.request_count >= 1
    assert result["scores"]["q1"] == {"d1": 3, "d2": 1, "d3": 0, "d4": 2}
    assert set(result["usage"]["members"]["judge-a"]["endpoints"]) == {
        url.removeprefix("http://").removesuffix("/v1") for url in (jury_stub.base_url, second.base_url)
    }
