"""A run folder holds the files its tools wrote and can be moved (or zipped) and still be read."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from tests.conftest import ROOT, run_ultra

PIPELINE = """\
servers:
  evaluation: servers/evaluation
pipeline:
  - evaluation.evaluate_trec
"""


def test_run_folder_moved_after_the_run_is_still_readable(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "data").symlink_to(ROOT / "data")
    pipeline = project / "trec.yaml"
    pipeline.write_text(PIPELINE, encoding="utf-8")
    result = run_ultra("run", str(pipeline), cwd=project)
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in (project / "output").iterdir() if p.name.startswith("trec_")]
    files = [p for p in (folder / "files").iterdir()]
    assert files and not any(p.is_symlink() for p in files), "files/ holds the files, not links"

    archive = shutil.make_archive(str(tmp_path / "run"), "zip", folder)
    moved = tmp_path / "elsewhere" / "run"
    shutil.move(folder, moved)
    shutil.rmtree(project / "output")  # the shared output/evaluation/ is gone too

    for copy in (moved, tmp_path / "unzipped"):
        if copy.name == "unzipped":
            with zipfile.ZipFile(archive) as zipped:
                zipped.extractall(copy)
        memory = json.loads((copy / "memory.json").read_text(encoding="utf-8"))
        relative = memory["result_path"]
        assert relative.startswith("files/evaluate_trec_") and relative.endswith(".json")
        saved = json.loads((copy / relative).read_text(encoding="utf-8"))
        assert saved["aggregate"]["map"] == memory["eval_res"]["map"]


TWO_RESULTS = """\
servers:
  evaluation: servers/evaluation
pipeline:
  - evaluation.evaluate_trec           # result_path of results.test ...
  - evaluation.evaluate_trec_pvalue    # ... replaced in memory by this step's result_path
"""


def test_a_result_a_later_step_replaced_is_kept_under_its_step_and_reported(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "data").symlink_to(ROOT / "data")
    pipeline = project / "two.yaml"
    pipeline.write_text(TWO_RESULTS, encoding="utf-8")
    result = run_ultra("run", str(pipeline), cwd=project)
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in (project / "output").iterdir() if p.name.startswith("two_")]
    memory = json.loads((folder / "memory.json").read_text(encoding="utf-8"))
    assert memory["result_path"].startswith("files/evaluate_trec_pvalue_")
    (earlier,) = (folder / "files" / "evaluation.evaluate_trec").iterdir()
    trec = json.loads(earlier.read_text(encoding="utf-8"))
    assert set(trec["aggregate"]) >= {"map", "ndcg@10"}  # evaluate_trec's own result, not the p-value file
    # the p-value step's new run is the run evaluate_trec scored: one MAP, two files
    assert trec["aggregate"]["map"] == memory["eval_res"]["map"]["B_mean"]

    report = run_ultra("report", str(folder), "--out", str(tmp_path / "report"), cwd=project)
    assert report.returncode == 0, report.stderr
    runs = {line.split(",")[0] for line in (tmp_path / "report" / "summary.csv").read_text("utf-8").splitlines()}
    # evaluate_trec's per-query values (read from files/<step>/) are the run folder's own run
    assert {folder.name, "results.perturbed"} <= runs, runs
