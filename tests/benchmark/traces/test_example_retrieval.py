"""examples/eval_traces_retrieval.yaml as a user runs it (``python ultra.py run``): the rankings the shipped traces
recorded, made a run by custom.rankings_to_run and scored by evaluate_trec against data/traces/qrels.trec, give per
trace and on average what trec_eval's own code (pytrec_eval) gives on that run and those qrels; and
scripts/make_traces.py --qrels writes data/traces/qrels.trec again, byte for byte, from the shipped traces."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from servers.benchmark.tools.data import get_data
from tests.conftest import ROOT, run_ultra
from tests.support.summary_check import check_summary
from tests.support.traces_project import traces_example_project

QRELS = ROOT / "data/traces/qrels.trec"
TRACES = ROOT / "data/traces/rag_traces.jsonl"
# evaluate_trec's names (names: ultrarag) of the example's measures: trec_eval's
MEASURES = {"mrr": "recip_rank", "map": "map", "ndcg@1": "ndcg_cut_1", "ndcg@2": "ndcg_cut_2", "P@1": "P_1",
            "P@2": "P_2", "recall@1": "recall_1", "recall@2": "recall_2"}  # fmt: skip
EXAMPLE = ("examples/eval_traces_retrieval.yaml", "examples/parameters/eval_traces_retrieval_parameter.yaml")


def test_the_example_scores_the_traced_rankings_as_trec_eval(tmp_path: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    project = traces_example_project(tmp_path, "eval_traces_retrieval")
    done = run_ultra("run", EXAMPLE[0], cwd=project, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    memory = check_summary(done, project)
    (run_folder,) = (project / "output").glob("eval_traces_retrieval_*")

    recorded = get_data(benchmark={"path": str(TRACES), "key_map": {"id_ls": "trace_id", "ret_ids": "context_ids",
                                                                    "ret_scores": "context_scores"}})  # fmt: skip
    assert memory["run"] == {
        trace: dict(zip(ids, scores, strict=True))
        for trace, ids, scores in zip(recorded["id_ls"], recorded["ret_ids"], recorded["ret_scores"], strict=True)
    }  # each trace's own passages, with the scores its retriever gave
    with QRELS.open(encoding="utf-8") as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    assert set(qrels) == set(memory["run"]) and len(qrels) == 8
    reference = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(memory["run"])

    result = json.loads((run_folder / memory["result_path"]).read_text(encoding="utf-8"))
    assert set(result["per_query"]) == set(reference)
    for trace, row in reference.items():
        ours = result["per_query"][trace]
        assert {m: ours[m] for m in MEASURES} == pytest.approx({m: row[t] for m, t in MEASURES.items()}, abs=1e-9)
    means = {m: sum(row[t] for row in reference.values()) / len(reference) for m, t in MEASURES.items()}
    assert result["aggregate"] == pytest.approx(means, abs=1e-9) and memory["eval_res"] == result["aggregate"]
    # the answering passage is first everywhere; the related one is retrieved (second) only for the Tiber question
    assert means["mrr"] == means["P@1"] == 1.0 and means["map"] == means["P@2"] == pytest.approx(4.5 / 8)
    ideal = 2 + 1 / math.log2(3)  # gains 2 (answers) at rank 1 and 1 (related) at rank 2
    assert means["recall@1"] == 0.5 and means["ndcg@2"] == pytest.approx((7 * 2 / ideal + 1) / 8)
    tiber = recorded["id_ls"][5]
    assert recorded["ret_ids"][5] == ["tiber", "it"] and result["per_query"][tiber]["map"] == 1.0


def test_the_docs_show_what_the_example_prints(tmp_path: Path) -> None:
    """docs/traces.md's printed block is the example's own output: the lines of evaluate_trec's section."""
    done = run_ultra("run", EXAMPLE[0], "--output-dir", str(tmp_path / "runs"), cwd=ROOT,
                     env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    printed = done.stdout.split("from evaluation.evaluate_trec:\n", 1)[1].split("\n\n", 1)[0]
    assert "map                     0.5625" in printed
    assert printed in (ROOT / "docs/traces.md").read_text(encoding="utf-8")


def test_the_script_writes_the_shipped_qrels_from_the_shipped_traces(tmp_path: Path) -> None:
    out = tmp_path / "qrels.trec"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts/make_traces.py"), "--qrels", str(out), "--traces", str(TRACES)],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == QRELS.read_bytes()
    rows = [line.split() for line in QRELS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 8 * 6 and sorted({int(row[3]) for row in rows}) == [0, 1, 2]
    assert sum(row[3] == "2" for row in rows) == 8  # one answering passage per trace


def test_the_script_refuses_a_file_that_is_not_its_traces(tmp_path: Path) -> None:
    (tmp_path / "other.jsonl").write_text('{"resourceSpans": []}\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts/make_traces.py"), "--qrels", str(tmp_path / "q.trec"),
         "--traces", str(tmp_path / "other.jsonl")],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{tmp_path / 'other.jsonl'}:1: expected one trace" in done.stderr and not (tmp_path / "q.trec").exists()
