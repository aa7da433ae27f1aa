"""The page itself: the per-query table's limit, escaping, no network resource; the tool over MCP stdio and
as the last step of a pipeline; ``ultra report`` with labels."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_ultra
from tests.report.conftest import OUTSIDE, Results
from tests.report.helpers import build, summary_rows, table_rows


def test_the_per_query_table_is_sampled_beyond_the_limit_and_says_so(results: Results, tmp_path: Path) -> None:
    files = build([results.evaluate], tmp_path / "a", max_table_rows=20)
    again = build([results.evaluate], tmp_path / "b", max_table_rows=20)
    page = files.report_path.read_text(encoding="utf-8")
    shown = table_rows(page, "per-query-table")
    assert len(shown) == 20 and shown == table_rows(again.report_path.read_text(encoding="utf-8"), "per-query-table")
    assert re.search(r"The runs have 159 \(run, query\) rows: this table shows a\s+random sample of 20", page)
    with files.per_query_csv_path.open(newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 159  # every row
    assert {row["n"] for row in summary_rows(files).values()} == {"159"}  # the summary uses every query
    whole = build([results.evaluate], tmp_path / "c")
    assert 'id="sampled"' not in whole.report_path.read_text(encoding="utf-8")


def test_text_is_escaped_and_nothing_is_loaded_from_elsewhere(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "files").mkdir(parents=True)
    result = {"id_ls": ["x", "y"], "f1": [1.0, 0.5], "settings": {"metrics": ["f1"]}}
    (run / "files" / "evaluate_1.json").write_text(json.dumps(result), encoding="utf-8")
    hostile = '<script>alert(1)</script><img src="https://example.com/t.png">'
    memory = {"q_ls": [hostile, "fine"], "pred_ls": ["a", "b"], "id_ls": ["x", "y"]}
    (run / "memory.json").write_text(json.dumps(memory), encoding="utf-8")
    page = build([run], tmp_path / "out").report_path.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    sources = re.findall(r'\s(?:src|href)="([^"]*)"', page)
    assert sources and all(s.startswith(("data:", "#")) for s in sources)  # images inline, links within the page
    assert '<link rel="stylesheet"' not in page and "@import" not in page and "url(" not in page


def test_the_tool_over_mcp_stdio(results: Results, tmp_path: Path) -> None:
    done = run_ultra(
        "call",
        "report.report",
        f"result_path={results.eval_trec}",
        f"save_path={tmp_path / 'reports'}",
        "max_table_rows=5",
        "--stdio",
        cwd=ROOT,
        env=OUTSIDE,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    report = Path(result["report_path"])
    assert report.parent.parent == tmp_path / "reports" and report.parent.name.startswith("report_")
    assert report.is_file() and all(Path(p).is_file() for p in result["plot_paths"])
    data = json.loads(next((results.eval_trec / "files").glob("evaluate_trec_*.json")).read_text(encoding="utf-8"))
    ndcg = next(row for row in result["summary"] if row["metric"] == "ndcg@10")
    assert ndcg["mean"] == data["aggregate"]["ndcg@10"] and ndcg["n"] == data["counts"]["num_q"]


def test_a_pipeline_ends_with_its_report(tmp_path: Path) -> None:
    pipeline = tmp_path / "scored.yaml"
    pipeline.write_text(
        "servers:\n  benchmark: servers/benchmark\n  evaluation: servers/evaluation\n  report: servers/report\n"
        "pipeline:\n  - benchmark.get_data\n  - evaluation.evaluate\n  - report.report\n",
        encoding="utf-8",
    )
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "evaluate_results_parameter.yaml").read_text())
    params["benchmark"]["benchmark"]["limit"] = 12
    params["evaluation"]["save_path"] = str(tmp_path / "results")
    params["report"] = {"save_path": str(tmp_path / "reports")}
    param_file = tmp_path / "scored_parameter.yaml"
    param_file.write_text(yaml.safe_dump(params), encoding="utf-8")
    done = run_ultra(
        "run", str(pipeline), "--param", str(param_file), "--output-dir", str(tmp_path / "runs"), cwd=ROOT, env=OUTSIDE
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (memory_file,) = (tmp_path / "runs").glob("scored_*/memory.json")
    memory = json.loads(memory_file.read_text(encoding="utf-8"))
    report = memory_file.parent / memory["report_path"]
    page = report.read_text(encoding="utf-8")
    rows = table_rows(page, "per-query-table")
    assert len(rows) == 12 and rows[0][1] == memory["q_ls"][0][:239].replace("&", "&amp;").replace("'", "&#39;")
    f1 = next(row for row in memory["summary"] if row["metric"] == "f1")
    assert f1["mean"] == memory["eval_res"]["avg_f1"] and f1["n"] == 12


def test_ultra_report_with_labels(results: Results, tmp_path: Path) -> None:
    done = run_ultra(
        "report",
        str(results.eval_trec),
        "--label",
        f"first={results.eval_trec}",
        "--label",
        f"pvalue={results.pvalue}",
        "--out",
        str(tmp_path / "out"),
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"wrote {tmp_path / 'out' / 'report.html'}" in done.stdout
    runs = {row["run"] for row in summary_rows_of(tmp_path / "out")}
    assert runs == {"first", "pvalue: results.test (baseline)", "pvalue: results.perturbed"}


def summary_rows_of(folder: Path) -> list[dict[str, str]]:
    with (folder / "summary.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
