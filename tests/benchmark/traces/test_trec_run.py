"""The retrieval production recorded, scored in a pipeline: ``ultra run`` of get_data (trace ids, context ids
and scores) -> custom.rankings_to_run -> evaluation.evaluate_trec against qrels keyed by trace id gives, per
trace, what trec_eval (pytrec_eval) and the Python path give on the same run and qrels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from servers.benchmark.tools.data import get_data
from servers.evaluation.server import SPEC
from tests.benchmark.traces.running import ultra_run
from ultra_kit.inprocess import call_local_tool, local_tools

PIPELINE = {
    "servers": {"benchmark": "servers/benchmark", "custom": "servers/custom", "evaluation": "servers/evaluation"},
    "pipeline": ["benchmark.get_data", "custom.rankings_to_run", "evaluation.evaluate_trec"],
}
KEY_MAP = {"q_ls": "question", "id_ls": "trace_id", "ret_ids": "context_ids", "ret_scores": "context_scores"}
MEASURES = {"recip_rank": "recip_rank", "map": "map", "ndcg_cut_3": "ndcg_cut.3", "P_1": "P.1"}  # ours: pytrec's


def qrels_of(ids: list[str], seen: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Judged relevant for the i-th trace: the passage its chain ranked at (i mod n) + 1 (grade 2) and, for a
    landmark's question, the country's passage (grade 1, retrieved or not), so that the reciprocal ranks
    differ between traces and ndcg and map differ from them."""
    country = {"Eiffel": "fr", "Rhine": "de", "Tiber": "it"}
    qrels = {}
    for i, (trace, s) in enumerate(zip(ids, seen, strict=True)):
        judged = {s["context_ids"][i % len(s["context_ids"])]: 2}
        judged.update({doc: 1 for word, doc in country.items() if word in s["question"] and doc not in judged})
        qrels[trace] = judged
    return qrels


def run_pipeline(folder: Path, traces: Path, qrels: Path) -> tuple[Path, dict[str, Any]]:
    """``ultra run`` of the pipeline: its run folder and memory."""
    params = {
        "benchmark": {"benchmark": {"path": str(traces), "format": "otlp", "key_map": KEY_MAP}},
        "evaluation": {"qrels_path": str(qrels), "ir_metrics": list(MEASURES), "ks": [], "names": "trec_eval",
                       "save_path": str(folder / "results")},
    }  # fmt: skip
    run = ultra_run(folder, PIPELINE, params)
    return run, json.loads((run / "memory.json").read_text(encoding="utf-8"))


def test_the_pipeline_scores_each_traces_ranking_as_trec_eval(llamaindex_otlp, tmp_path: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    path, seen = llamaindex_otlp
    data = get_data(benchmark={"path": str(path), "format": "otlp", "key_map": KEY_MAP})
    qrels = qrels_of(data["id_ls"], seen)
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))

    run, memory = run_pipeline(tmp_path, path, qrels_file)
    recorded = {
        t: dict(zip(s["context_ids"], s["context_scores"], strict=True))
        for t, s in zip(data["id_ls"], seen, strict=True)
    }
    assert memory["run"] == recorded  # each trace's own passages with the scores its retriever gave
    assert memory["run_info"] == {"queries": len(seen), "queries_without_ranking": [], "scored_by_rank": 0,
                                  "dropped_docids": 0}  # fmt: skip
    result = json.loads((run / memory["result_path"]).read_text(encoding="utf-8"))
    per_query = {q: {m: row[m] for m in MEASURES} for q, row in result["per_query"].items()}

    reference = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(recorded)
    assert set(per_query) == set(reference) == set(data["id_ls"])
    for trace, row in reference.items():  # trec_eval's own code on the same run and qrels, per trace
        assert per_query[trace] == pytest.approx({m: row[name.replace(".", "_")] for m, name in MEASURES.items()})
    first = [min((s["context_ids"].index(d) + 1 for d in qrels[t] if d in s["context_ids"]), default=0)
             for t, s in zip(data["id_ls"], seen, strict=True)]  # fmt: skip
    assert [per_query[t]["recip_rank"] for t in data["id_ls"]] == [1 / r if r else 0.0 for r in first]
    assert len(set(first)) > 1 and any(row["map"] != row["recip_rank"] for row in per_query.values())

    listed = {"run": dict(zip(data["id_ls"], data["ret_ids"], strict=True)), "qrels": qrels, "ks": [],
              "ir_metrics": list(MEASURES), "names": "trec_eval", "save_path": str(tmp_path / "py")}  # fmt: skip
    python_path = anyio.run(call_local_tool, local_tools(SPEC)["evaluate_trec"], listed)
    assert python_path["eval_res"] == pytest.approx(result["aggregate"])  # the scores keep the recorded order
