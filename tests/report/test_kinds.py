"""Every result kind rendered from real files: the report's numbers are those the tools wrote."""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import pytest

from servers.report.charts import ECDF_BELOW
from tests.report.conftest import Results
from tests.report.helpers import build, summary_rows, table_rows


def _result_file(run: Path, prefix: str) -> dict:
    (path,) = (run / "files").glob(f"{prefix}_*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _per_query(files) -> list[dict[str, str]]:
    with files.per_query_csv_path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_evaluate_trec_run_folder(results: Results, tmp_path: Path) -> None:
    files = build([results.eval_trec], tmp_path)
    data = _result_file(results.eval_trec, "evaluate_trec")
    rows = summary_rows(files)
    (run,) = files.runs
    assert run == results.eval_trec.name
    for measure, value in data["aggregate"].items():
        assert float(rows[(run, measure)]["mean"]) == pytest.approx(value, rel=1e-12, abs=1e-15)
        assert int(rows[(run, measure)]["n"]) == data["counts"]["num_q"]
    page = files.report_path.read_text(encoding="utf-8")
    assert "run_path: data/trec/results.test" in page  # the run's parameters.yaml
    assert "evaluation.evaluate_trec" in table_rows_any(page, "timings")
    shape = "ecdf" if data["counts"]["num_q"] < ECDF_BELOW else "boxplot"  # trec measures are continuous
    assert f"{shape}_ndcg_10.png" in {p.name for p in files.plot_paths}
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in files.plot_paths)


def table_rows_any(page: str, css_class: str) -> str:
    start = page.index(f'<table class="{css_class}">')
    return page[start : page.index("</table>", start)]


def test_pvalue_runs_side_by_side_with_the_significance_table(results: Results, tmp_path: Path) -> None:
    files = build([results.pvalue], tmp_path)
    data = _result_file(results.pvalue, "evaluate_trec_pvalue")
    assert files.runs == ["results.test (baseline)", "results.perturbed"]
    rows = summary_rows(files)
    for row in data["table"]:
        assert float(rows[("results.perturbed", row["metric"])]["mean"]) == pytest.approx(row["A_mean"], rel=1e-12)
        assert float(rows[("results.test (baseline)", row["metric"])]["mean"]) == pytest.approx(
            row["B_mean"], rel=1e-12
        )
    page = files.report_path.read_text(encoding="utf-8")
    side = {row[0]: row[1:] for row in table_rows(page, "side-by-side-table")}
    first = data["table"][0]
    assert side[first["metric"]][1].startswith(f"{first['A_mean']:.4f} [")  # baseline, then the new run
    shown = table_rows(page, "significance-table")
    assert len(shown) == len(data["table"])
    assert shown[0][:2] == ["results.perturbed", data["table"][0]["metric"]]
    assert shown[0][5] == f"{data['table'][0]['p_value']:.4f}"
    assert [row[-1] for row in shown] == ["yes" if row["significant"] else "no" for row in data["table"]]  # never blank


def test_evaluate_run_folder_joins_questions_and_answers_on_ids(results: Results, tmp_path: Path) -> None:
    files = build([results.evaluate], tmp_path)
    data = _result_file(results.evaluate, "evaluate")
    memory = json.loads((results.evaluate / "memory.json").read_text(encoding="utf-8"))
    rows = summary_rows(files)
    for metric in data["settings"]["metrics"]:
        assert float(rows[(files.runs[0], metric)]["mean"]) == pytest.approx(
            data[f"avg_{metric}"], rel=1e-12, abs=1e-15
        )
    per_query = {row["id"]: row for row in _per_query(files)}
    assert len(per_query) == len(data["id_ls"]) == 159
    for position in (0, 77, 158):
        row = per_query[data["id_ls"][position]]
        assert float(row["f1"]) == pytest.approx(data["f1"][position], rel=1e-12, abs=1e-15)
        assert row["question"] == memory["q_ls"][position] and row["answer"] == memory["pred_ls"][position]
    page = files.report_path.read_text(encoding="utf-8")
    assert html.escape(memory["q_ls"][0][:50], quote=True) in page


def test_a_reordered_file_gives_the_same_values_per_id(results: Results, tmp_path: Path) -> None:
    """The join is on ids: the same file with its items in reverse order is the same run."""
    (original,) = (results.evaluate / "files").glob("evaluate_*.json")
    data = json.loads(original.read_text(encoding="utf-8"))
    reversed_data = {k: v[::-1] if isinstance(v, list) else v for k, v in data.items()}
    copy = tmp_path / "reversed.json"
    copy.write_text(json.dumps(reversed_data), encoding="utf-8")
    files = build([original, copy], tmp_path / "out", labels={"a": str(original), "b": str(copy)})
    by_run: dict[str, dict[str, str]] = {}
    for row in _per_query(files):
        by_run.setdefault(row["run"], {})[row["id"]] = row["f1"]
    assert by_run["a"] == by_run["b"] and list(by_run["a"]) != list(by_run["b"])


def test_evaluate_mtrag_file_with_repeated_ids(results: Results, tmp_path: Path) -> None:
    files = build([results.mtrag], tmp_path)
    data = json.loads(results.mtrag.read_text(encoding="utf-8"))
    rows = summary_rows(files)
    averaged = [k[4:] for k in data if k.startswith("avg_") and not isinstance(data[k[4:]][0], list)]
    assert {"Recall", "RougeL_stemFalse", "Length"} <= set(averaged)
    for metric in averaged:  # a per-passage column (a list per record) is summarised through its _max
        assert float(rows[(files.runs[0], metric)]["mean"]) == pytest.approx(data[f"avg_{metric}"], rel=1e-12)
    per_query = _per_query(files)
    assert len(per_query) == 36  # 12 tasks x 3 models: the n-th answer of a task id is '<id> #n'
    second = f"{data['id_ls'][0]} #2"
    position = [i for i, key in enumerate(data["id_ls"]) if key == data["id_ls"][0]][1]
    (row,) = [r for r in per_query if r["id"] == second]
    assert float(row["Length"]) == data["Length"][position]
    assert "ids repeat" in files.report_path.read_text(encoding="utf-8")


def test_answer_judge_files(results: Results, tmp_path: Path) -> None:
    (citation,) = results.judges.glob("citation_judge_*.json")
    (idk,) = results.judges.glob("idk_judge_*.json")
    files = build([citation, idk], tmp_path, labels={"citations": str(citation), "idk": str(idk)})
    rows = summary_rows(files)
    for label, path in (("citations", citation), ("idk", idk)):
        aggregate = json.loads(path.read_text(encoding="utf-8"))["aggregate"]
        for metric in (k for k in aggregate if f"num_{k}" in aggregate):
            assert float(rows[(label, metric)]["mean"]) == pytest.approx(aggregate[metric], rel=1e-12)
            assert int(rows[(label, metric)]["n"]) == aggregate[f"num_{metric}"]
    items = json.loads(idk.read_text(encoding="utf-8"))["items"]
    attempted = sum(i["answer_attempted"] for i in items if i["status"] == "ok")
    page = files.report_path.read_text(encoding="utf-8")
    (answered,) = table_rows(page, "answered-table")
    assert answered == ["idk", f"{attempted / len(items):.1%}", f"{attempted:.1f}", str(len(items)), str(len(items))]


def test_umbrela_and_nuggetize_files(results: Results, tmp_path: Path) -> None:
    (umbrela,) = results.judges.glob("umbrela_judge_*.json")
    (nuggets,) = results.judges.glob("nuggetize_*[0-9].json")
    files = build([umbrela, nuggets], tmp_path, labels={"umbrela": str(umbrela)})
    rows = summary_rows(files)
    aggregate = json.loads(umbrela.read_text(encoding="utf-8"))["aggregate"]
    for name in ("mean_score", "P@1", "MRR"):
        assert float(rows[("umbrela", name)]["mean"]) == pytest.approx(aggregate[name], rel=1e-12)
    per_run = json.loads(nuggets.read_text(encoding="utf-8"))["aggregate"]
    assert set(files.runs) == {"umbrela", *per_run}
    for run, scores in per_run.items():
        for name in ("all", "vital", "weighted_strict"):
            if scores[name] is not None:
                assert float(rows[(run, name)]["mean"]) == pytest.approx(scores[name], rel=1e-12)
                assert int(rows[(run, name)]["n"]) == scores[f"num_{name}"]


def test_trec_rag_run_folder(results: Results, tmp_path: Path) -> None:
    files = build([results.trec_rag], tmp_path)
    memory = json.loads((results.trec_rag / "memory.json").read_text(encoding="utf-8"))
    assert sorted(files.runs) == sorted(memory["aggregate"])  # one run per answer run of the table
    rows = summary_rows(files)
    for run, means in memory["aggregate"].items():
        for column in ("citation_f1", "idk", "nugget_all", "umbrela_mean_score"):
            assert float(rows[(run, column)]["mean"]) == pytest.approx(means[column], rel=1e-12)
    page = files.report_path.read_text(encoding="utf-8")
    assert len(table_rows(page, "answered-table")) == 2
    assert "trec_rag_table joins its values" in page  # the judges' own files are not counted twice
    per_query = _per_query(files)
    assert per_query[0]["question"] and per_query[0]["answer"]  # joined on '<qid>/<run>' from memory.json


def test_judge_agreement_and_sweep(results: Results, tmp_path: Path) -> None:
    files = build([results.agreement, results.sweep], tmp_path)
    sweep = json.loads((results.sweep / "sweep.json").read_text(encoding="utf-8"))
    ok = [row for row in sweep["rows"] if row["status"] == "ok"]
    assert len(files.runs) == len(ok) == 2
    rows = summary_rows(files)
    metric = sweep["metric"].split(".", 1)[1]
    for row in ok:
        (label,) = [r for r in files.runs if r.startswith(f"trial {row['trial']} ")]
        assert float(rows[(label, metric)]["mean"]) == pytest.approx(row[sweep["metric"]], rel=1e-12)
    page = files.report_path.read_text(encoding="utf-8")
    assert '<h2 id="sweep">' in page and '<h2 id="other-results">' in page
    agreement = json.loads(results.agreement.read_text(encoding="utf-8"))
    assert f'<th>kappa_graded</th><td class="num">{agreement["kappa_graded"]:.4f}</td>' in page
