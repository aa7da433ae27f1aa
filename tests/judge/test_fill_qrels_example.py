"""examples/fill_qrels.yaml end to end with `ultra run`: offline as shipped (the annotators' recorded grades, no key),
and live (fill_recorded_qrels: '') with its judge pointed at the local stub with scripted grades."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, SECRET, llm_settings
from tests.support.background import Command, Finished, in_background
from tests.support.openai_stub import OpenAIStub, hashed_grade
from tests.support.summary_check import check_summary


def test_fill_qrels_example_runs(tmp_path: Path) -> None:
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "fill_qrels_parameter.yaml").read_text())
    with OpenAIStub(responder=hashed_grade) as stub:  # a grade 0-3 from a hash of the request: scripted, stable
        params["judge"].update(
            judge_llm={**llm_settings(stub), "api_key": "${OPENAI_API_KEY}"},
            judge_cache=str(tmp_path / "cache.sqlite"),
            save_path=str(tmp_path / "judge"),
            fill_budget=40,
            fill_recorded_qrels="",  # the live path: one setting away
        )
        params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
        param_file = tmp_path / "fill_qrels_parameter.yaml"
        param_file.write_text(yaml.safe_dump(params))
        command = ("run", "examples/fill_qrels.yaml", "--param", str(param_file))
        done = run_ultra(*command, cwd=ROOT, env={"OPENAI_API_KEY": SECRET})
        assert done.returncode == 0, done.stderr[-3000:]
        check_summary(done, ROOT)
        assert 0 < stub.request_count <= 40
        again = run_ultra(*command, cwd=ROOT, env={"OPENAI_API_KEY": SECRET})  # from the cache
        assert again.returncode == 0 and stub.request_count <= 40
    report = json.loads(sorted((tmp_path / "judge").glob("fill_qrels_*.json"))[0].read_text())
    assert report["fill_counts"]["chosen"] == 40 and set(report["per_run"]) == {"run.bm25", "run.tfidf", "run.title"}
    evaluated = json.loads(next((tmp_path / "evaluation").glob("evaluate_trec_*.json")).read_text())
    bm25 = report["per_run"]["run.bm25"]
    assert evaluated["aggregate"]["ndcg@20"] == bm25["ndcg@20"]["after"]  # evaluate_trec read the merged qrels
    assert evaluated["aggregate"]["Judged@20"] == bm25["Judged@20"]["after"]
    assert SECRET not in done.stdout + done.stderr


def offline_fill(tmp_path: Path) -> Command:
    """The shipped parameter file (results under ``tmp_path``) run without OPENAI_API_KEY: a background run."""
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "fill_qrels_parameter.yaml").read_text())
    judge = params["judge"]
    judge["save_path"], params["evaluation"]["save_path"] = str(tmp_path / "judge"), str(tmp_path / "evaluation")
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(params))
    args = ("run", "examples/fill_qrels.yaml", "--param", str(tmp_path / "p.yaml"), "--output-dir",
            str(tmp_path / "runs"))  # fmt: skip
    return Command(args, timeout=300, unset=("OPENAI_API_KEY",))


@in_background(offline_fill)
def test_fill_qrels_example_runs_offline_on_the_annotators_recorded_grades_without_a_key(
    background_run: Finished,
) -> None:
    """The shipped parameter file with OPENAI_API_KEY unset: the chosen holes take the recorded grades, and every
    number equals trec_eval's on the qrels before and after the filling, computed here independently."""
    from servers.judge.relevance.agreement import read_qrels
    from ultra_trec import evaluate

    done, tmp_path = background_run.done, background_run.folder
    judge = yaml.safe_load((ROOT / "examples" / "parameters" / "fill_qrels_parameter.yaml").read_text())["judge"]
    assert judge["fill_recorded_qrels"] == "data/umbrela/qrels.annotated20.txt"
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(next((tmp_path / "judge").glob("fill_qrels_*.json")).read_text())
    assert report["usage"] == {"requests": 0, "recorded": judge["fill_recorded_qrels"]}
    assert report["fill_counts"] == {
        "holes": 169, "chosen": 100, "judged": 100, "failed": 0, "holes_left": 69}  # fmt: skip
    before = read_qrels(ROOT / judge["human_qrels_path"])
    recorded = read_qrels(ROOT / judge["fill_recorded_qrels"])
    after = {qid: dict(docs) for qid, docs in before.items()}
    for grade in report["llm_grades"]:
        assert grade["score"] == recorded[grade["qid"]][grade["docid"]]
        after[grade["qid"]][grade["docid"]] = grade["score"]
    origins = (tmp_path / "judge").glob("fill_qrels_*.origin.tsv")
    assert {line.split("\t")[3] for line in next(origins).read_text().splitlines()[1:]} == {
        "recorded:data/umbrela/qrels.annotated20.txt"}  # fmt: skip
    for path in judge["run_paths"]:
        name = Path(path).name.removesuffix(".trec")
        for measure in judge["fill_measures"]:
            old = evaluate(before, str(ROOT / path), [measure], relevance_level=2).aggregate[measure]
            new = evaluate(after, str(ROOT / path), [measure], relevance_level=2).aggregate[measure]
            assert report["per_run"][name][measure]["before"] == pytest.approx(old, abs=1e-12)
            assert report["per_run"][name][measure]["after"] == pytest.approx(new, abs=1e-12)
    ndcg = {name: report["per_run"][name]["ndcg@20"] for name in ("run.bm25", "run.tfidf", "run.title")}
    assert max(ndcg, key=lambda n: ndcg[n]["before"]) == "run.title"  # the pool's own run looked best
    assert min(ndcg, key=lambda n: ndcg[n]["after"]) == "run.title"  # and is last once the holes are judged
    assert report["kendall_tau_b"]["ndcg@20"] == -1.0
    assert [round(ndcg[n][k], 2) for n, k in [("run.title", "before"), ("run.bm25", "before"), ("run.bm25", "after"),
            ("run.tfidf", "after")]] == [0.58, 0.54, 0.83, 0.87]  # the example's header quotes them  # fmt: skip
