"""What reaches evaluate and evaluate_trec is what the target returned; a failed item is never scored."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from servers.custom.server import SPEC as CUSTOM
from servers.evaluation.server import SPEC as EVALUATION
from tests.target.conftest import ask
from ultra_kit.inprocess import call_local_tool, local_tools


def call(spec, tool, arguments):
    return anyio.run(call_local_tool, local_tools(spec)[tool], arguments)


def test_scores_rest_on_the_targets_answers_and_ranking(tmp_path, service):
    target = {"kind": "http", "url": f"{service.url}/ask", "contexts": "contexts", "max_retries": 0,
              "body": {"question": "{{ question }}", "id": "{{ id }}"}}  # fmt: skip
    failing = {**target, "url": f"{service.url}/always500", "max_failed_fraction": 0.7}
    partial = ask(tmp_path, ["x", "y", "z"], failing, id_ls=["ok", "q2", "q3"])
    assert partial["pred_ls"] == ["A:x", None, None]

    scored = call(EVALUATION, "evaluate", {"pred_ls": partial["pred_ls"], "gt_ls": ["A:x", "A:y", "A:z"],
                                           "id_ls": ["ok", "q2", "q3"], "metrics": ["em"],
                                           "save_path": str(tmp_path / "e")})  # fmt: skip
    assert scored["eval_res"]["em"] == [1.0] and scored["eval_res"]["avg_em"] == 1.0
    assert scored["settings"]["failed_items"] == ["q2", "q3"] and scored["settings"]["n_items"] == 1

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("ok 0 ok-d2 1\nq2 0 q2-d1 1\n")
    selected = call(CUSTOM, "select_qrels", {"id_ls": partial["answered_id_ls"], "qrels_path": str(qrels)})
    trec = call(EVALUATION, "evaluate_trec", {"run_path": partial["run_path"], "qrels": selected["qrels"],
                                              "ir_metrics": ["mrr"], "save_path": str(tmp_path / "t")})  # fmt: skip
    assert trec["eval_res"]["mrr"] == 0.5  # ok-d2 at rank 2; q2 (failed) is not scored as an empty ranking
    run = Path(partial["run_path"]).read_text().splitlines()
    assert run == ["ok Q0 ok-d1 1 2 target", "ok Q0 ok-d2 2 1 target"]
    rows = [json.loads(line) for line in Path(partial["result_path"]).read_text().splitlines()]
    assert [r["id"] for r in rows if r["status"] == "ok"] == partial["answered_id_ls"] == ["ok"]
