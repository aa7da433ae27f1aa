"""Every example that runs offline in seconds, run as a new user would (no API key set): the end of the run fits
100 columns, its run folder keeps the file each step wrote (an earlier step's under ``files/<step>/``), every path
in ``memory.json`` names a file in the folder, and ``ultra report RUN`` shows each step's results (its sections,
and summary rows of each step's metrics).

The SmolLM2 examples (rag_full, consistency, risk_suite, risk_suite_target, sweep_rag) take minutes and have their
own tests; load_data loads data and writes no result to report; mtrag and mtrag_full need BERTScore's
model (tests/client/test_summary.py, tests/evaluation/test_mtrag_full.py)."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, Prepare, in_background
from tests.support.summary_check import assert_fits

# example -> (files in files/, time stamps taken out; the report's sections beyond every report's own; metrics)
EXPECTED = {
    "eval_trec": ({"evaluate_trec.json"}, set(), {"map", "ndcg@10"}),
    "eval_trec_pvalue": ({"evaluate_trec_pvalue.json"}, {"comparison", "significance"}, {"map"}),
    "evaluate_results": ({"evaluate.json"}, set(), {"f1", "rouge-l"}),
    "eval_traces": ({"toxicity_judge.json"}, {"slices"}, {"toxicity"}),  # a section per app version
    "eval_traces_retrieval": ({"evaluate_trec.json"}, set(), {"map", "ndcg@2"}),
    "sweep_retrieval_pipeline": ({"evaluate_trec.json", "retriever_search.trec"}, set(), {"ndcg@5"}),
    "eval_target_python": ({"ask.jsonl", "ask.trec", "evaluate.json", "evaluate_trec.json"}, set(), {"f1", "map"}),
    "judge_calibration": (
        {"faithfulness_judge.json", "ppi.json", "report.html", "summary.csv", "per_query.csv", "ppi_ppi.png"},
        {"ppi"},
        {"faithfulness"},
    ),
    "fill_qrels": (
        {"evaluate_trec.json", "fill_qrels.qrels", "fill_qrels.origin.tsv", "judge.fill_qrels/fill_qrels.json"},
        {"fill-qrels"},
        {"ndcg@20", "Judged@20"},
    ),
}
STAMP = re.compile(r"_\d{8}_\d{6}(_\d+)?")


def ultra(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_ultra(*args, cwd=cwd, timeout=600, unset=("OPENAI_API_KEY",))  # a new user's shell: no key


def paths_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.startswith("files/") else []
    if isinstance(value, dict):
        return [p for item in value.values() for p in paths_in(item)]
    if isinstance(value, list):
        return [p for item in value for p in paths_in(item)]
    return []


def example_run(name: str) -> Prepare:
    """``ultra run examples/NAME.yaml`` as ``ultra`` above runs it (no key), its run folder under ``folder/runs``:
    started beside the suite (tests/support/background.py)."""

    def prepare(folder: Path) -> Command:
        args = ("run", f"examples/{name}.yaml", "--output-dir", str(folder / "runs"))
        return Command(args, timeout=600, unset=("OPENAI_API_KEY",))

    return prepare


RUNS = [pytest.param(name, marks=in_background(example_run(name))) for name in sorted(EXPECTED)]


@pytest.mark.parametrize("name", RUNS)
def test_an_offline_example_keeps_every_result_and_its_report_shows_each(
    name: str, background_run: Finished, tmp_path: Path
) -> None:
    files, sections, metrics = EXPECTED[name]
    done = background_run.done
    assert done.returncode == 0, done.stderr[-3000:]
    ending = "\n".join(line for line in done.stdout.splitlines() if not line.startswith("report: /"))
    assert_fits(ending)  # the end of the run fits 100 columns (but the report's path, here under a long tmp_path)
    (folder,) = [p for p in (background_run.folder / "runs").iterdir() if p.is_dir()]  # beside runs.sqlite
    kept = {STAMP.sub("", str(p.relative_to(folder / "files"))) for p in (folder / "files").rglob("*") if p.is_file()}
    assert kept == files
    memory = json.loads((folder / "memory.json").read_text())
    named = paths_in(memory)
    assert named and all((folder / path).is_file() for path in named), named
    report = ultra("report", str(folder), "--out", str(tmp_path / "report"), cwd=ROOT)
    assert report.returncode == 0, report.stderr[-3000:]
    page = (tmp_path / "report" / "report.html").read_text()
    shown = set(re.findall(r'<h2 id="([a-z-]+)"', page))
    assert shown >= {"summary-heading", "plots", "per-query", "parameters"} | sections, shown
    with open(tmp_path / "report" / "summary.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["metric"] for row in rows} >= metrics and all(int(row["n"]) > 0 for row in rows)


def test_a_zipped_and_unpacked_fill_qrels_folder_still_reports_and_names_its_own_files(tmp_path: Path) -> None:
    """The README's promise: a run folder can be zipped or moved and still read. fill_qrels' before/after section
    comes back from the unpacked copy alone, naming the merged qrels and the grades' origin inside it."""
    done = ultra("run", "examples/fill_qrels.yaml", "--output-dir", str(tmp_path / "runs"), cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    archive = shutil.make_archive(str(tmp_path / "run"), "zip", root_dir=folder.parent, base_dir=folder.name)
    shutil.rmtree(tmp_path / "runs")
    shutil.unpack_archive(archive, tmp_path / "unpacked")
    unpacked = tmp_path / "unpacked" / folder.name
    report = ultra("report", str(unpacked), "--out", str(tmp_path / "report"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr[-3000:]
    page = (tmp_path / "report" / "report.html").read_text()
    assert '<h2 id="fill-qrels"' in page and page.count("<tr><td>run.") == 3 * 3 + 3  # 3 runs x 3 measures, Judged@20
    named = re.search(r"merged qrels <code>([^<]+)</code> · LLM grades <code>([^<]+)</code>", page)
    assert named and all(Path(path).is_relative_to(unpacked / "files") for path in named.groups()), named
    assert all(Path(path).is_file() for path in named.groups())
    # P@20 ties the three runs before the filling: its tau-b is undefined and the page says so (was a blank cell)
    assert '<td>P@20</td><td class="num">undefined: the runs tie (before or after)</td>' in page
