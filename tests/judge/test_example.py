"""examples/umbrela.yaml end to end with `ultra run`, its judge pointed at the local stub server."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import yaml

from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, SAMPLE, SECRET, llm_settings, oracle
from tests.judge.test_umbrela import sample_grades
from tests.support.openai_stub import OpenAIStub
from tests.support.summary_check import check_summary


def run_umbrela_example(tmp_path: Path, judge_llm: dict, *more: str) -> subprocess.CompletedProcess:
    """``ultra run examples/umbrela.yaml`` with ``judge_llm`` (its key read from $OPENAI_API_KEY), files in tmp_path
    (``more``: further arguments of ``ultra run``)."""
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "umbrela_parameter.yaml").read_text())
    params["judge"].update(
        judge_llm={**judge_llm, "api_key": "${OPENAI_API_KEY}"},
        judge_cache=str(tmp_path / "cache.sqlite"),
        save_path=str(tmp_path / "judge"),
    )
    params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
    param_file = tmp_path / "umbrela_parameter.yaml"
    param_file.write_text(yaml.safe_dump(params))
    return run_ultra(
        "run", "examples/umbrela.yaml", "--param", str(param_file), *more, cwd=ROOT, env={"OPENAI_API_KEY": SECRET}
    )


def test_umbrela_example_runs(tmp_path: Path) -> None:
    with OpenAIStub(responder=oracle(sample_grades(), default=1)) as stub:
        done = run_umbrela_example(tmp_path, llm_settings(stub))
        assert done.returncode == 0, done.stderr[-3000:]
        check_summary(done, ROOT)
        assert stub.request_count == 171  # 180 pairs, 9 repeated passage texts
    results = sorted((tmp_path / "judge").glob("judge_agreement_*.json"))
    report = json.loads(results[-1].read_text())
    # The oracle answers with the human grade, so every shared pair agrees.
    assert report["kappa_graded"] == 1.0 and report["num_pairs"] > 0
    assert [r["name"] for r in report["ranking"]["runs"]] == ["run.bm25.trec", "run.tfidf.trec", "run.title.trec"]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in done.stdout + done.stderr
    assert SAMPLE.exists()


def test_a_jurys_agreement_is_in_the_run_summary(tmp_path: Path) -> None:
    """examples/umbrela.yaml with a jury of three: judge-c grades one higher than the others (capped at 3)."""
    grades = sample_grades()
    plain = oracle(grades, default=1)

    def members(request: dict) -> str:
        grade = int(plain(request).rsplit(" ", 1)[1])
        return f"##final score: {min(grade + 1, 3) if request['model'] == 'judge-c' else grade}"

    with OpenAIStub(responder=members) as stub:
        jury = [{"base_url": stub.base_url, "model_id": f"judge-{m}", "api_key": "${OPENAI_API_KEY}"} for m in "abc"]
        done = run_umbrela_example(tmp_path, {**llm_settings(stub), "jury": jury})
        assert done.returncode == 0, done.stderr[-3000:]
        assert stub.request_count == 3 * 171
    memory = check_summary(done, ROOT)
    figures = memory["reliability"]["score"]
    assert figures["level"] == "ordinal" and figures["units"] == 180 and 0 < figures["alpha"] < 1
    table = done.stdout.split("done: ")[0]
    assert re.search(rf"^score\s+ordinal\s+{figures['alpha']:.4f}\s+180\s+{figures['mean_kappa']:.4f}\s*$", table, re.M)
    report = json.loads(sorted((tmp_path / "judge").glob("judge_agreement_*.json"))[-1].read_text())
    assert report["kappa_graded"] == 1.0  # the majority is a and b's grade: the human one
    for member in "abc":  # the cost table: a row per member model, each with its own 171 requests (#41)
        assert re.search(rf"^judge\.umbrela_judge\s+judge-{member}\s+171\s", done.stdout, re.M), done.stdout
    assert SECRET not in done.stdout + done.stderr


def test_the_umbrela_run_folder_keeps_each_steps_result_and_reports_after_a_move(tmp_path: Path) -> None:
    """Each step writes a result_path (a later one overwrites it in memory): the run folder keeps all three (the
    earlier ones under files/<step>/), and ``ultra report`` of the folder, moved away from the tools' own output
    folders (deleted), shows the judged run's measures (#41: the page was empty)."""
    with OpenAIStub(responder=oracle(sample_grades(), default=1)) as stub:
        done = run_umbrela_example(tmp_path, llm_settings(stub), "--output-dir", str(tmp_path / "runs"))
        assert done.returncode == 0, done.stderr[-3000:]
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    kept = {re.sub(r"_\d{8}_\d{6}(_\d+)?", "", str(p.relative_to(folder / "files")))
            for p in (folder / "files").rglob("*.json")}  # fmt: skip
    assert {"judge.umbrela_judge/umbrela_judge.json", "evaluation.evaluate_trec/evaluate_trec.json",
            "judge_agreement.json"} <= kept, kept  # fmt: skip
    moved = tmp_path / "elsewhere" / folder.name
    shutil.move(str(folder), str(moved))
    for made in ("judge", "evaluation", "runs"):
        shutil.rmtree(tmp_path / made, ignore_errors=True)
    report = run_ultra("report", str(moved), "--out", str(tmp_path / "report"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr[-3000:]
    page = (tmp_path / "report" / "report.html").read_text()
    assert "0 items" not in page
    with open(tmp_path / "report" / "summary.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    metrics = {row["metric"] for row in rows}
    assert {"ndcg@10", "map", "mean_score", "MRR", "AP@10"} <= metrics and all(int(row["n"]) == 18 for row in rows)
    assert not metrics & {"num_judged", "num_excluded", "num_ret", "num_rel"}, metrics  # counts, not metrics
