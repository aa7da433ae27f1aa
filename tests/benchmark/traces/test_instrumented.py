"""get_data reads back what real instrumented chains recorded: question, answer, passages with ids,
latency, session and turn equal what the chain saw."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from servers.benchmark.tools.data import get_data

FIELDS = {
    "q_ls": "question",
    "pred_ls": "answer",
    "ctx_ls": "contexts",
    "ids_ls": "context_ids",
    "scores_ls": "context_scores",
    "id_ls": "trace_id",
    "session_ls": "session_id",
    "turn_ls": "turn",
    "latency_ls": "latency_s",
    "meta_ls": "metadata",
    "start_ls": "start_time",
}


def read(path: Path, key_map: dict[str, str] = FIELDS, **settings: Any) -> dict[str, Any]:
    return get_data(
        benchmark={"path": str(path), "key_map": key_map, "traces": {"metadata": ["app_version"]}, **settings}
    )


def expected_turns(seen: list[dict[str, Any]]) -> list[int]:
    turns, counts = [], Counter(())
    for s in seen:
        counts[s["session_id"]] += 1
        turns.append(counts[s["session_id"]])
    return turns


def check_same(result: dict[str, Any], seen: list[dict[str, Any]], *, scores: bool) -> None:
    assert result["q_ls"] == [s["question"] for s in seen]
    assert result["pred_ls"] == [s["answer"] for s in seen]
    assert result["ctx_ls"] == [s["contexts"] for s in seen]
    assert result["ids_ls"] == [s["context_ids"] for s in seen]
    assert result["session_ls"] == [s["session_id"] for s in seen]
    assert result["turn_ls"] == expected_turns(seen)
    assert result["meta_ls"] == [{"app_version": s["app_version"]} for s in seen]
    assert len(set(result["id_ls"])) == len(seen)
    for latency, s in zip(result["latency_ls"], seen, strict=True):
        assert 0 < latency <= s["wall_s"]  # the root span lies inside the call the script timed
    assert result["start_ls"] == sorted(result["start_ls"])
    if scores:
        assert result["scores_ls"] == [s["context_scores"] for s in seen]
    info = result["data_info"]
    assert (info["total_rows"], info["kept_rows"], info["dropped_rows"]) == (len(seen), len(seen), 0)


def test_llamaindex_otlp(llamaindex_otlp) -> None:
    path, seen = llamaindex_otlp
    result = read(path, {**FIELDS, "model_ls": "model"})
    check_same(result, seen, scores=True)
    assert set(result["model_ls"]) == {"table-llm"}
    assert result["ids_ls"][0] == ["fr", "it"]  # the bag-of-words retriever's choice, not a fixed order


def test_langchain_otlp(langchain_otlp) -> None:
    path, seen = langchain_otlp
    check_same(read(path, format="otlp"), seen, scores=False)


def test_langsmith_runs(langsmith_runs) -> None:
    path, seen = langsmith_runs
    check_same(read(path), seen, scores=False)  # auto: recognised by its content


def test_openai_chat_calls(openai_chat) -> None:
    """Bare chat calls under openinference-instrumentation-openai: each trace is one LLM span whose ``input.value``
    is the request's JSON (the system message, the session's earlier turns, the question); the question is the
    last user message of ``llm.input_messages``, the answer ``llm.output_messages``', model and tokens the call's."""
    path, seen = openai_chat
    result = read(path, {**FIELDS, "model_ls": "model", "in_ls": "tokens_in", "out_ls": "tokens_out"})
    check_same(result, seen, scores=False)
    assert result["q_ls"][1] == "When was the Eiffel Tower finished?"  # not turn 1's question, nor the request
    assert (result["model_ls"], result["in_ls"], result["out_ls"]) == tuple(
        [s[k] for s in seen] for k in ("model", "tokens_in", "tokens_out")
    )


def test_rewrite_then_answer(openai_chain) -> None:
    """A chain span (OpenInference's own tracer) around two chat calls, rewriting the question, then answering; the
    fourth question's first answering call failed (HTTP 500) and the app asked again. The answer is the chain's
    output by default (the app's, with a passage id appended), the answering call's when ``traces.answer_span``
    names its span (the last ``ChatCompletion`` to end, not the rewrite); ``error`` marks the trace of the failed
    call, the one ``errors_only`` keeps."""
    path, seen = openai_chain
    fields = {"q": "question", "a": "answer", "e": "error", "s": "session_id", "t": "turn"}
    shown = get_data(benchmark={"path": str(path), "key_map": fields})
    assert (shown["q"], shown["a"], shown["e"]) == tuple([s[k] for s in seen] for k in ("question", "shown", "error"))
    assert shown["t"] == expected_turns(seen) and sum(shown["e"]) == 1
    named = get_data(benchmark={"path": str(path), "key_map": fields, "traces": {"answer_span": "ChatCompletion"}})
    assert named["a"] == [s["answer"] for s in seen] and seen[0]["query"] not in named["a"]
    failed = get_data(benchmark={"path": str(path), "key_map": fields, "filters": {"errors_only": True}})
    assert failed["q"] == [s["question"] for s in seen if s["error"]]
    assert failed["data_info"]["dropped_reasons"] == {"filtered out (errors_only)": len(seen) - 1}


def test_one_request_per_file(llamaindex_otlp, tmp_path: Path) -> None:
    """The Collector may write one (pretty-printed) request per file: .json, recognised by content."""
    path, seen = llamaindex_otlp
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    single = tmp_path / "one.json"
    single.write_text(json.dumps(first, indent=2), encoding="utf-8")
    check_same(read(single), seen[:1], scores=True)


def test_group_by_and_choice(llamaindex_otlp) -> None:
    path, seen = llamaindex_otlp
    grouped = read(path, group_by="metadata.app_version")
    assert grouped["group_ls"] == [s["app_version"] for s in seen]
    assert grouped["data_info"]["group_by"] == "metadata.app_version"
    v2 = read(path, filters={"equals": {"metadata.app_version": "v2"}})
    assert v2["q_ls"] == [s["question"] for s in seen if s["app_version"] == "v2"]
    assert v2["data_info"]["dropped_reasons"] == {"filtered out (metadata.app_version = 'v2')": 4}
    unique = read(path, dedup="question")
    assert unique["q_ls"] == list(dict.fromkeys(s["question"] for s in seen))
    assert unique["data_info"]["dropped_reasons"] == {"repeated question (dedup)": 2}  # France and Germany, twice
    strata = read(path, sample={"n": 2, "strategy": "stratified", "by": "metadata.app_version"})
    assert sorted(m["app_version"] for m in strata["meta_ls"]) == ["v1", "v2"]
    assert strata["data_info"]["dropped_reasons"] == {"not in the sample (stratified, n=2)": 6}
    recent = read(path, sample={"n": 2, "strategy": "recent"})
    assert recent["q_ls"] == [s["question"] for s in seen[-2:]]
    later = read(path, filters={"since": recent["start_ls"][0]})
    assert later["q_ls"] == recent["q_ls"]
    earlier = read(path, filters={"until": recent["start_ls"][0]})
    assert earlier["q_ls"] == [s["question"] for s in seen[:-2]]
    assert earlier["data_info"]["dropped_reasons"] == {f"filtered out (until {recent['start_ls'][0]})": 2}
    drawn = [read(path, sample={"n": 3, "seed": seed}) for seed in (1, 1, 2)]
    assert drawn[0]["id_ls"] == drawn[1]["id_ls"] != drawn[2]["id_ls"]  # the seed decides, the same seed again
    for sampled in drawn:
        assert sampled["id_ls"] == [i for i in grouped["id_ls"] if i in sampled["id_ls"]]  # in time order
        info = sampled["data_info"]
        assert (info["total_rows"], info["kept_rows"], info["dropped_reasons"]) == (
            8,
            3,
            {"not in the sample (random, n=3)": 5},
        )
    session = read(path, filters={"matches": {"session_id": "^s[12]$"}, "with_retrieval": True})
    assert session["session_ls"] == ["s1", "s1", "s2", "s2"]


def test_langfuse_observations(langfuse_observations) -> None:
    """A page of observations in the langfuse SDK's own models and serialisation (ObservationsV2Response),
    recognised by its content; the retriever's passages and ids come from its output documents."""
    path, seen = langfuse_observations
    page = json.loads(path.read_text(encoding="utf-8"))
    assert set(page) == {"data", "meta"} and {"traceId", "parentObservationId", "type"} <= set(page["data"][1])
    check_same(read(path), seen, scores=False)


def test_evaluate_trec_on_the_traced_retrieval(llamaindex_otlp, tmp_path: Path) -> None:
    """evaluate_trec on the ranking each trace's retriever recorded, as a run ``{trace id: context ids}`` made from
    get_data's lists, against qrels (the corpus passage that answers each question, by trace id): each query's
    reciprocal rank is 1 / the rank of that passage among what the chain retrieved."""
    import anyio

    from servers.evaluation.server import SPEC
    from ultra_kit.inprocess import call_local_tool, local_tools

    path, seen = llamaindex_otlp
    data = read(path)
    answers = {"France": "fr", "Germany": "de", "Italy": "it", "Eiffel": "eiffel", "Rhine": "rhine", "Tiber": "tiber"}
    relevant = [next(doc for word, doc in answers.items() if word in s["question"]) for s in seen]
    qrels = {trace: {doc: 1} for trace, doc in zip(data["id_ls"], relevant, strict=True)}
    run = dict(zip(data["id_ls"], data["ids_ls"], strict=True))
    arguments = {"run": run, "qrels": qrels, "ir_metrics": ["mrr"], "ks": [], "save_path": str(tmp_path)}
    result = anyio.run(call_local_tool, local_tools(SPEC)["evaluate_trec"], arguments)
    chain_saw = [s["context_ids"] for s in seen]
    ranks = [ids.index(doc) + 1 if doc in ids else None for ids, doc in zip(chain_saw, relevant, strict=True)]
    expected = [1 / rank if rank else 0.0 for rank in ranks]
    assert result["eval_res"]["mrr"] == pytest.approx(sum(expected) / len(expected))
    assert result["counts"]["num_q"] == len(seen) and result["counts"]["num_rel_ret"] == sum(map(bool, ranks))
    per_query = json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))["per_query"]
    assert {trace: (q["mrr"], q["num_ret"]) for trace, q in per_query.items()} == {
        trace: (value, len(ids)) for trace, value, ids in zip(data["id_ls"], expected, chain_saw, strict=True)
    }  # each trace's own ranking (a ranking of another trace's question would miss its passage)
