"""examples/eval_traces.yaml as a user runs it: the end of the run (every result in a table of 100 columns)
and what it read, against the shipped trace file itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import ROOT, run_ultra
from tests.support.summary_check import check_summary


def test_eval_traces_ends_with_what_it_read(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "data/traces", project / "data/traces")
    (project / "examples/parameters").mkdir(parents=True)
    for file in ("examples/eval_traces.yaml", "examples/parameters/eval_traces_parameter.yaml"):
        shutil.copy(ROOT / file, project / file)
    done = run_ultra("run", "examples/eval_traces.yaml", cwd=project, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    memory = check_summary(done, project)
    trace_ids = set()
    for line in (project / "data/traces/rag_traces.jsonl").read_text("utf-8").splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                trace_ids |= {span["traceId"] for span in scope["spans"]}
    assert set(memory["id_ls"]) <= trace_ids and len(memory["id_ls"]) == len(memory["q_ls"]) > 0
    assert len(memory["group_ls"]) == len(memory["id_ls"]) and memory["data_info"]["group_by"]
