"""umbrela_judge's pure parts end to end against the stub: grades, statuses, metrics, qrels file, inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers.judge.common import inputs
from servers.judge.relevance.agreement import read_qrels
from servers.judge.relevance.run import run_umbrela
from servers.judge.relevance.umbrela import Judgment, query_metrics
from tests.judge.conftest import SAMPLE, SECRET, call_job, llm_settings, oracle, query_and_passage
from tests.support.openai_stub import OpenAIStub
from ultra_base.errors import InputError
from ultra_trec.engine import evaluate

pytestmark = pytest.mark.anyio


def sample_grades() -> dict[tuple[str, str], int]:
    """The human grades of the sample, keyed by (query text, passage text) as the prompt shows them."""
    queries = inputs.read_queries(SAMPLE / "queries.jsonl")
    corpus = inputs.read_corpus(SAMPLE / "corpus.jsonl")
    human = read_qrels(SAMPLE / "qrels.human.txt")
    grades = {(queries[q], corpus[d]): g for q, docs in human.items() for d, g in docs.items()}
    # Passages the humans did not judge get a 1 ("related") so that all four labels occur.
    return grades


async def test_file_mode_grades_metrics_and_qrels(stub: OpenAIStub, tmp_path) -> None:
    stub.responder = oracle(sample_grades(), default=1)
    result = await call_job(
        run_umbrela,
        queries_path=str(SAMPLE / "queries.jsonl"),
        run_path=str(SAMPLE / "run.bm25.trec"),
        corpus_path=str(SAMPLE / "corpus.jsonl"),
        depth=10,
        k_values=[1, 5, 10],
        judge_llm=llm_settings(stub, max_workers=8),
        save_path=str(tmp_path),
    )
    assert result["counts"] == {"pairs": 180, "ok": 180, "parse_error": 0, "error": 0}
    # 9 pairs repeat a passage text under another docid: asked once, answered for both.
    assert stub.request_count == 171 and result["usage"]["cache_hits"] == 9
    # The qrels file holds what the oracle answered: the human grade, else 1.
    llm = read_qrels(result["llm_qrels_path"])
    human = read_qrels(SAMPLE / "qrels.human.txt")
    assert sum(len(d) for d in llm.values()) == 180
    for qid, docs in llm.items():
        for docid, grade in docs.items():
            assert grade == human.get(qid, {}).get(docid, 1)
    # P@k and MRR with relevant = grade >= 2 agree with trec_eval's (relevance level 2) on the same grades.
    trec = evaluate(
        result["llm_qrels_path"],
        SAMPLE / "run.bm25.trec",
        ["P@1", "P@5", "P@10", "mrr"],
        relevance_level=2,
        max_depth=10,
    )
    for name in ("P@1", "P@5", "P@10"):
        assert result["aggregate"][name] == pytest.approx(trec.aggregate[name], abs=1e-12)
    assert result["aggregate"]["MRR"] == pytest.approx(trec.aggregate["mrr"], abs=1e-12)
    saved = json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))
    assert saved["prompt"]["name"] == "umbrela_v1" and len(saved["prompt"]["sha256"]) == 64
    assert len(saved["judgments"]) == 180 and saved["settings"]["judge_llm"]["model_id"] == "stub-judge"
    kinds = saved["metric_kinds"]  # every per-query value declared; the passage numbers as counts (the report)
    assert set(kinds) == {k for row in saved["per_query"].values() for k in row}, kinds
    assert {k for k, kind in kinds.items() if kind == "count"} == {"num_judged", "num_excluded"}
    assert SECRET not in json.dumps(saved) and SECRET not in json.dumps(result)


async def test_unparseable_replies_become_parse_errors_never_scores(stub: OpenAIStub, tmp_path) -> None:
    def respond(request) -> str:
        query, passage = query_and_passage(request)
        if "never" in passage:
            return "This passage is relevant on a scale of 0 to 3."  # no marker, ever
        if "late" in passage and len(request["messages"]) == 2:
            return "Hmm, let me think about 3 things."  # first reply unreadable; the repair works
        return "##final score: 3"

    stub.responder = respond
    result = await call_job(
        run_umbrela,
        query="what is a qrels file",
        passages={"d1": "a qrels file lists judgments", "d2": "never readable", "d3": "late but fine"},
        judge_llm=llm_settings(stub, max_retries=2),
        save_path=str(tmp_path),
        backoff_base=0.001,
        max_failed_fraction=0.5,  # d2 fails on purpose
    )
    assert result["scores"] == {"q1": {"d1": 3, "d2": None, "d3": 3}}
    assert result["counts"] == {"pairs": 3, "ok": 2, "parse_error": 1, "error": 0}
    (failure,) = result["failures"]
    assert failure["docid"] == "d2" and failure["status"] == "parse_error"
    assert failure["raw"] == "This passage is relevant on a scale of 0 to 3." and "score" not in failure
    assert failure["requests"] == 3  # the first reply plus judge_llm.max_retries repairs
    # The repair request carries the bad reply and the repair message.
    repairs = [b for b in stub.chat_requests() if len(b["messages"]) == 4]
    assert repairs and all(b["messages"][2]["role"] == "assistant" for b in repairs)
    assert result["per_query"]["q1"]["num_excluded"] == 1
    assert Path(result["llm_qrels_path"]).read_text().splitlines() == ["q1 0 d1 3", "q1 0 d3 3"]


async def test_errors_are_reported_with_reason(stub: OpenAIStub, tmp_path) -> None:
    stub.add_fault("status", status=400, message="context length exceeded", match="too long")
    result = await call_job(
        run_umbrela,
        query="q",
        passages=["fine", "too long"],
        judge_llm=llm_settings(stub),
        save_path=str(tmp_path),
        max_failed_fraction=0.5,
    )
    assert result["scores"]["q1"]["2"] is None
    assert result["failures"][0]["status"] == "error" and "context length exceeded" in result["failures"][0]["error"]


def test_query_metrics_by_hand() -> None:
    def judged(*scores):
        return [Judgment("q", f"d{i}", i, s, "ok" if s is not None else "parse_error") for i, s in enumerate(scores, 1)]

    # ranks 1..5 grades 3, 0, 2, None, 2 -> condensed list relevant: T F T T (the failure is left out)
    metrics = query_metrics(judged(3, 0, 2, None, 2), [2, 4])
    assert metrics["num_excluded"] == 1 and metrics["num_judged"] == 4
    assert metrics["mean_score"] == pytest.approx(7 / 4)
    assert metrics["P@2"] == pytest.approx(1 / 2) and metrics["P@4"] == pytest.approx(3 / 4)
    assert metrics["AP@2"] == pytest.approx(1.0)
    assert metrics["AP@4"] == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    assert metrics["MRR"] == 1.0
    assert query_metrics(judged(0, 1, 2), [1])["MRR"] == pytest.approx(1 / 3)
    nothing = query_metrics(judged(None), [1])
    assert nothing["mean_score"] is None and nothing["P@1"] == 0.0


def test_inputs_name_file_and_line(tmp_path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"qid": "1", "query": "a"}\n{"qid": "2"}\n')
    with pytest.raises(InputError, match=r"q\.jsonl:2: no query text"):
        inputs.read_queries(queries)
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"docid": "d1", "text": "x"}\n{not json\n')
    with pytest.raises(InputError, match=r"c\.jsonl:2: invalid JSON"):
        inputs.read_corpus(corpus)
    tsv = tmp_path / "q.tsv"
    tsv.write_text("qid\tquery\n1\tfirst\n2\tsecond\textra\n")
    with pytest.raises(InputError, match=r"q\.tsv:3: expected 2 tab-separated fields"):
        inputs.read_queries(tsv)
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 d1 1 2.0 t\n7 Q0 d1 1 2.0 t\n")
    good_queries = tmp_path / "good.tsv"
    good_queries.write_text("1\tfirst\n")
    good_corpus = tmp_path / "good.jsonl"
    good_corpus.write_text('{"docid": "d1", "text": "x"}\n')
    with pytest.raises(InputError, match=r"run\.trec:2: query '7' of the run is not in the queries file"):
        inputs.file_pairs(good_queries, run, good_corpus, depth=5)
    run.write_text("1 Q0 d1 1 2.0 t\n1 Q0 d9 2 1.0 t\n")
    with pytest.raises(InputError, match=r"1 documents of the run are not in the corpus"):
        inputs.file_pairs(good_queries, run, good_corpus, depth=5)


def test_run_is_ranked_like_trec_eval(tmp_path) -> None:
    run = tmp_path / "run.trec"
    # rank column ignored; ties broken by docid descending in byte order
    run.write_text("1 Q0 d1 9 1.0 t\n1 Q0 d10 8 1.0 t\n1 Q0 d9 7 1.0 t\n1 Q0 d2 1 0.5 t\n1 Q0 a 2 3.0 t\n")
    assert inputs.top_documents(run, depth=4).docids == {"1": ["a", "d9", "d10", "d1"]}


async def test_structured_output_is_opt_in(stub: OpenAIStub, tmp_path) -> None:
    stub.responder = lambda request: '{"score": 2}'
    result = await call_job(
        run_umbrela,
        query="q",
        passages=["p"],
        judge_llm=llm_settings(stub, structured_output=True),
        save_path=str(tmp_path),
    )
    assert result["scores"] == {"q1": {"1": 2}}
    assert stub.chat_requests()[0]["response_format"]["type"] == "json_schema"
