"""nuggetize against the stub: formulas by hand, windows and batches, wrong-length labels, reuse, cache, MCP."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from mcp import Client

from servers.judge.nuggets.run import dump, run_nuggetize
from servers.judge.nuggets.stages import answer_scores, selected
from servers.judge.server import SPEC
from tests.judge.conftest import call_job, llm_settings
from tests.judge.nugget_stub import nugget_responder, stage, stages
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_base.errors import InputError

pytestmark = pytest.mark.anyio

V, OK = "vital", "okay"
S, P, N = "support", "partial_support", "not_support"


def test_scores_by_hand() -> None:
    got = answer_scores([V, V, OK, OK], [S, P, S, N])
    want = {
        "all": (1 + 0.5 + 1 + 0) / 4,
        "all_strict": 2 / 4,
        "vital": 1.5 / 2,
        "vital_strict": 1 / 2,
        "weighted": (1.5 + 0.5 * 1) / (2 + 0.5 * 2),
        "weighted_strict": (1 + 0.5 * 1) / (2 + 0.5 * 2),
    }
    assert got == pytest.approx(want)
    # no vital nugget: Vital has no value (not 0, not a fake denominator); Weighted is the okay mean
    no_vital = answer_scores([OK, OK], [S, P])
    assert no_vital["vital"] is None and no_vital["vital_strict"] is None
    assert no_vital["weighted"] == pytest.approx((0.5 * 1.5) / (0.5 * 2)) and no_vital["weighted_strict"] == 0.5
    # no okay nugget: Weighted equals Vital
    no_okay = answer_scores([V, V, V], [P, N, S])
    assert no_okay["weighted"] == no_okay["vital"] == pytest.approx(1.5 / 3)
    assert no_okay["weighted_strict"] == no_okay["vital_strict"] == pytest.approx(1 / 3)
    # nothing at all
    assert set(answer_scores([], []).values()) == {None}
    # unlabelled nuggets (failed batches) are left out of every set, not counted as not_support
    partial = answer_scores([V, None, OK], [S, S, None])
    assert partial["all"] == 1.0 and partial["vital"] == 1.0 and partial["weighted"] == 1.0


def test_top_k_keeps_vital_first_in_importance_order() -> None:
    from servers.judge.nuggets.stages import QueryNuggets

    item = QueryNuggets("q", "x", texts=list("abcde"), importance=[OK, V, OK, V, None])
    assert selected(item, 0) == [0, 1, 2, 3, 4]
    assert selected(item, 3) == [0, 1, 3]  # both vital, then the first okay
    assert selected(item, 1) == [1]


def _passages(n: int) -> dict[str, str]:
    return {f"d{i}": (f"vital fact {i}" if i % 3 == 0 else f"fact {i}") for i in range(1, n + 1)}


@pytest.mark.parametrize(
    ("num_passages", "create", "batches"), [(0, 0, 0), (1, 1, 1), (10, 1, 1), (11, 2, 2), (31, 4, 3)]
)
async def test_windows_and_batches(tmp_path, num_passages: int, create: int, batches: int) -> None:
    passages = _passages(num_passages)
    nuggets_created = min(num_passages, 30)
    answers = {"runA": json.dumps({"fact 1": S, "vital fact 3": P}), "runB": "{}"}
    with OpenAIStub(responder=nugget_responder) as stub:
        result = await call_job(
            run_nuggetize,
            query="q?", passages=passages or None, answers=answers, judge_llm=llm_settings(stub),
            save_path=str(tmp_path),
        )  # fmt: skip
        counts = stages(stub.chat_requests())
        creates = [content_of(r) for r in stub.chat_requests() if "Updated nugget list" in content_of(r)]
    assert counts == {"create": create, "score": batches, "assign": 2 * batches}
    assert result["counts"]["nuggets"] == nuggets_created
    (record,) = dump(result["nuggets_path"])
    assert [n["text"] for n in record["nuggets"]] == list(passages.values())[:30]
    assert [n["importance"] for n in record["nuggets"]] == [
        V if t.startswith("vital") else OK for t in list(passages.values())[:30]
    ]
    if num_passages > 10:  # the second window carries the ten nuggets so far and passages 11..20
        assert "Nuggets so far (10)" in creates[1] and "1. fact 11" in creates[1] and "fact 10" not in creates[1][-60:]
    per_a = result["per_query"]["q1"]["runA"]
    if nuggets_created == 0:
        assert per_a["status"] == "no_nuggets" and per_a["all"] is None
        assert result["aggregate"]["runA"]["num_excluded"] == 1
        return
    have_1, have_3 = nuggets_created >= 1, nuggets_created >= 3
    vital_count = nuggets_created // 3
    assert per_a["all"] == pytest.approx((have_1 + 0.5 * have_3) / nuggets_created)
    assert per_a["vital"] == (pytest.approx(0.5 / vital_count) if vital_count else None)
    okay_count = nuggets_created - vital_count
    assert per_a["weighted"] == pytest.approx((0.5 * have_3 + 0.5 * have_1) / (vital_count + 0.5 * okay_count))
    assert result["aggregate"]["runB"]["all"] == 0.0 and result["aggregate"]["runB"]["num_answers"] == 1


async def test_create_list_over_the_limit_fails_the_tool_when_nothing_else_was_judged(tmp_path) -> None:
    def respond(request):
        if "Updated nugget list" in content_of(request):
            return json.dumps([f"n{i}" for i in range(31)])  # one too many, every time
        return nugget_responder(request)

    out = tmp_path / "out"
    with OpenAIStub(responder=respond) as stub:
        with pytest.raises(InputError) as raised:
            await call_job(
                run_nuggetize,
                query="q", passages=_passages(3), answers="{}", judge_llm=llm_settings(stub, max_retries=1),
                save_path=str(out), max_failed_fraction=1.0,
            )  # fmt: skip
        assert stub.request_count == 2  # the request and one repair
    # the only batch failed: no nuggets, so nothing was judged; the cause is named, no file is written
    assert str(raised.value) == (
        "nuggetize: every one of 1 batches failed (parse_error 1): "
        "unreadable after 2 replies: expected at most 30 nuggets, got 31"
    )
    assert not out.exists() or not list(out.iterdir())


async def test_a_query_whose_create_failed_is_incomplete_not_nuggetless(tmp_path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"qid": "1", "query": "one"}\n{"qid": "2", "query": "two"}\n')
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"docid": f"d{i}", "text": f"fact {i}"}) + "\n" for i in range(1, 5)))
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 d1 1 2 r\n1 Q0 d2 2 1 r\n2 Q0 d3 1 2 r\n2 Q0 d4 2 1 r\n")
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"qid": "1", "answer": "{}"}\n{"qid": "2", "answer": "{}"}\n')

    def respond(request):
        if stage(request) == "create" and "fact 3" in content_of(request):
            return "no list today"  # query 2's only create window fails
        return nugget_responder(request)

    with OpenAIStub(responder=respond) as stub:
        result = await call_job(
            run_nuggetize,
            queries_path=str(queries), corpus_path=str(corpus), run_path=str(run), answers_path=str(answers),
            judge_llm=llm_settings(stub, max_retries=0), save_path=str(tmp_path / "out"), max_failed_fraction=0.5,
        )  # fmt: skip
    # batches: query 1 create + score + assign, query 2 create (failed): 1 of 4
    assert result["failed"] == {
        "count": 1,
        "total": 4,
        "reasons": {"error": 0, "parse_error": 1},
        "first_error": "unreadable after 1 replies: no JSON list in the reply",
    }
    assert result["per_query"]["1"]["run"]["status"] == "ok"
    assert result["per_query"]["2"]["run"]["status"] == "incomplete"  # not "no_nuggets": its create failed
    assert result["aggregate"]["run"]["excluded_by_status"] == {"incomplete": 1}
    saved = json.loads(Path(result["result_path"]).read_text())
    assert saved["failed"] == result["failed"]
    assert saved["metric_kinds"]["num_nuggets"] == "count" and saved["metric_kinds"]["vital"] == "continuous"


async def test_wrong_length_labels_are_retried_then_a_failed_batch(tmp_path) -> None:
    seen = {"assign_second": 0}

    def respond(request):
        text = content_of(request)
        if "partial_support" in text and "Nuggets (1):" in text:  # the 11th nugget's batch, always 2 labels
            return '["support", "support"]'
        if "partial_support" in text and "1. fact 11" not in text and len(request["messages"]) == 2:
            seen["assign_second"] += 1
            return '["support"]'  # first batch: wrong length once, repaired on the next request
        return nugget_responder(request)

    answer = json.dumps({text: S for text in _passages(11).values()})
    with OpenAIStub(responder=respond) as stub:
        result = await call_job(
            run_nuggetize,
            query="q", passages=_passages(11), answers={"r": answer}, judge_llm=llm_settings(stub, max_retries=2),
            save_path=str(tmp_path), max_failed_fraction=0.2,
        )  # fmt: skip
        assert stages(stub.chat_requests())["assign"] == 2 + 3  # batch 1: ask + 1 repair; batch 2: ask + 2 repairs
    (row,) = dump(result["assignments_path"])
    assert row["status"] == "incomplete" and row["failed_batches"] == 1 and row["num_unlabelled"] == 1
    assert len(row["nuggets"]) == 11  # the failed batch's nugget is kept, unlabelled
    assert row["nuggets"][10] == {"text": "fact 11", "importance": OK, "assignment": None}
    failed = [b for b in row["batches"] if b["status"] != "ok"]
    assert failed[0]["requests"] == 3 and "expected a list of 1 labels, got 2" in failed[0]["error"]
    assert result["counts"]["assign_failed"] == 1
    agg = result["aggregate"]["r"]
    assert agg["num_excluded"] == 1 and agg["all"] is None and agg["excluded_by_status"] == {"incomplete": 1}
    # the partial scores over the ten labelled nuggets are kept on the answer (3 of them vital, all supported)
    assert row["scores"]["all"] == 1.0 and row["scores"]["vital_strict"] == 1.0


async def test_failed_score_batch_leaves_importance_unknown(tmp_path) -> None:
    def respond(request):
        if 'each "vital" or "okay"' in content_of(request):
            return '["vital", "sometimes"]'
        return nugget_responder(request)

    with OpenAIStub(responder=respond) as stub:
        result = await call_job(
            run_nuggetize,
            query="q", passages=_passages(2), answers="{}", judge_llm=llm_settings(stub, max_retries=0),
            save_path=str(tmp_path), max_failed_fraction=0.5,
        )  # fmt: skip
    (record,) = dump(result["nuggets_path"])
    assert [n["importance"] for n in record["nuggets"]] == [None, None]
    assert result["counts"]["score_failed"] == 1 and result["per_query"]["q1"]["run"]["status"] == "incomplete"


async def test_stored_nuggets_are_reused_without_create_or_score(tmp_path) -> None:
    with OpenAIStub(responder=nugget_responder) as stub:
        first = await call_job(
            run_nuggetize,
            query="q", passages=_passages(12), answers={"a": "{}"}, judge_llm=llm_settings(stub),
            save_path=str(tmp_path),
        )  # fmt: skip
        stub.reset()
        second = await call_job(
            run_nuggetize,
            query="q", answers={"b": json.dumps({"vital fact 3": S}), "c": "{}", "d": "{\"other\": 1}"},
            nuggets_path=first["nuggets_path"], judge_llm=llm_settings(stub), save_path=str(tmp_path),
        )  # fmt: skip
        assert stages(stub.chat_requests()) == {"create": 0, "score": 0, "assign": 3 * 2}
    assert second["counts"]["reused_queries"] == 1 and second["counts"]["nuggets"] == 12
    assert second["per_query"]["q1"]["b"]["vital"] == pytest.approx(1 / 4)  # vital: 3, 6, 9, 12


async def test_stored_31_nuggets_assign_in_four_batches(tmp_path) -> None:
    store = tmp_path / "n.jsonl"
    texts = [f"fact {i}" for i in range(1, 32)]
    record = {"qid": "q1", "query": "q", "nuggets": [{"text": t, "importance": OK} for t in texts]}
    store.write_text(json.dumps(record) + "\n")
    with OpenAIStub(responder=nugget_responder) as stub:
        result = await call_job(
            run_nuggetize,
            query="q", answers=json.dumps({"fact 31": S}), nuggets_path=str(store), judge_llm=llm_settings(stub),
            save_path=str(tmp_path),
        )  # fmt: skip
        sizes = [int(content_of(r).split("Nuggets (")[1].split(")")[0]) for r in stub.chat_requests()]
    assert sorted(sizes) == [1, 10, 10, 10]
    assert result["per_query"]["q1"]["run"]["all"] == pytest.approx(1 / 31)
    assert result["per_query"]["q1"]["run"]["vital"] is None  # no vital nugget
    truncated = await _with_top_k(tmp_path, store)
    assert truncated["per_query"]["q1"]["run"]["num_nuggets"] == 20


async def _with_top_k(tmp_path, store):
    with OpenAIStub(responder=nugget_responder) as stub:
        return await call_job(
            run_nuggetize,
            query="q", answers="{}", nuggets_path=str(store), nugget_top_k=20, judge_llm=llm_settings(stub),
            save_path=str(tmp_path),
        )  # fmt: skip


async def test_min_judgment_filters_passages_and_cache_answers_a_rerun(tmp_path) -> None:
    passages = {"d1": "fact 1", "d2": "fact 2", "d3": "vital fact 3", "d4": "fact 4"}
    grades = {"q1": {"d1": 3, "d2": 1, "d3": 2, "d4": None}}
    cache = str(tmp_path / "cache.sqlite")
    options = dict(query="q", passages=passages, answers="{}", scores=grades, save_path=str(tmp_path))
    with OpenAIStub(responder=nugget_responder) as stub:
        first = await call_job(run_nuggetize, **options, judge_llm=llm_settings(stub), judge_cache=cache)
        (create,) = [content_of(r) for r in stub.chat_requests() if "Updated nugget list" in content_of(r)]
        assert "fact 1" in create and "vital fact 3" in create and "fact 2" not in create and "fact 4" not in create
        used = stub.request_count
        again = await call_job(run_nuggetize, **options, judge_llm=llm_settings(stub), judge_cache=cache)
        assert stub.request_count == used == 3  # create, score, assign; the re-run is answered by the cache
    assert again["usage"]["cache_hits"] == 3 and again["usage"]["requests"] == 0
    assert again["per_query"] == first["per_query"]
    (record,) = dump(first["nuggets_path"])
    assert record["unjudged_passages"] == 1 and record["num_passages"] == 2
    low = await _min_judgment_one(tmp_path, passages, grades)
    assert low == 3


async def _min_judgment_one(tmp_path, passages, grades) -> int:
    with OpenAIStub(responder=nugget_responder) as stub:
        result = await call_job(
            run_nuggetize,
            query="q", passages=passages, answers="{}", scores=grades, min_judgment=1, judge_llm=llm_settings(stub),
            save_path=str(tmp_path),
        )  # fmt: skip
    return result["counts"]["nuggets"]


async def test_files_mode_several_runs_and_mcp(tmp_path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"qid": "1", "query": "one"}\n{"qid": "2", "query": "two"}\n')
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"docid": f"d{i}", "text": f"fact {i}"}) + "\n" for i in range(1, 5)))
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 d1 1 2 r\n1 Q0 d2 2 1 r\n2 Q0 d3 1 2 r\n2 Q0 d4 2 1 r\n")
    answers = tmp_path / "answers.jsonl"
    rows = [
        {"qid": "1", "run": "A", "answer": json.dumps({"fact 1": S, "fact 2": P})},
        {"qid": "1", "run": "B", "answer": "{}"},
        {"qid": "2", "run": "A", "answer": json.dumps({"fact 4": S})},
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with OpenAIStub(responder=nugget_responder) as stub:
        async with Client(SPEC.create_app()) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert {"nuggets_path", "aggregate", "assignments_path"} <= set(
                listed["nuggetize"].output_schema["properties"]
            )
            reply = await client.call_tool(
                "nuggetize",
                {
                    "queries_path": str(queries), "corpus_path": str(corpus), "run_path": str(run),
                    "answers_path": str(answers), "judge_llm": llm_settings(stub), "judge_cache": "",
                    "save_path": str(tmp_path),
                },
            )  # fmt: skip
        assert stages(stub.chat_requests()) == {"create": 2, "score": 2, "assign": 3}
    assert not reply.is_error, reply.content[0].text
    result = reply.structured_content
    assert result["aggregate"]["A"]["all"] == pytest.approx(((1 + 0.5) / 2 + 1 / 2) / 2)
    assert result["aggregate"]["B"]["all"] == 0.0 and result["aggregate"]["B"]["num_answers"] == 1
    assert len(dump(result["assignments_path"])) == 3 and math.isclose(result["per_query"]["2"]["A"]["all"], 0.5)
