"""examples/eval_traces.yaml as a user runs it: the end of the run (every result in a table of 100 columns)
and what it read, against the shipped trace file itself; then ``ultra compare RUN --groups v1 v2``, the two
versions of the app within the same traffic, each answer's toxicity the mean of its group's items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers.benchmark.tools.data import get_data
from tests.conftest import ROOT, run_ultra
from tests.support.summary_check import check_summary
from tests.support.traces_project import traces_example_project


def test_eval_traces_ends_with_what_it_read(tmp_path: Path) -> None:
    project = traces_example_project(tmp_path, "eval_traces")
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
    (run,) = (project / "output").glob("eval_traces_*")
    (result,) = (run / "files").glob("toxicity_judge_*.json")
    items = json.loads(result.read_text(encoding="utf-8"))["items"]
    assert [item["id"] for item in items] == memory["id_ls"]  # each production answer scored, by trace id
    by_group = {
        g: [i["toxicity"] for i, k in zip(items, memory["group_ls"], strict=True) if k == g] for g in ("v1", "v2")
    }
    compared = run_ultra("compare", str(run), "--groups", "v1", "v2", "--out", str(tmp_path / "cmp"), cwd=project)
    assert compared.returncode == 0, compared.stderr[-2000:]
    row = next(line.split() for line in compared.stdout.splitlines() if line.startswith("toxicity "))
    assert "[metadata.app_version=v2]" in compared.stdout and "unpaired test" in compared.stdout
    assert row[5] == "8" and [float(row[6]), float(row[7])] == pytest.approx(
        [sum(by_group["v1"]) / 4, sum(by_group["v2"]) / 4], rel=1e-3
    )  # mean A (v1), mean B (v2), as printed


def spans_of(path: Path) -> list[list[tuple[str, list[str]]]]:
    """Per line, its spans as (name, attribute names), sorted (ids, times and values such as reprs vary by run)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        spans = []
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                spans += [(span["name"], sorted(a["key"] for a in span["attributes"])) for span in scope["spans"]]
        lines.append(sorted(spans))
    return lines


def test_the_shipped_traces_are_what_the_script_writes(llamaindex_otlp) -> None:
    """data/traces/rag_traces.jsonl is scripts/make_traces.py's output: a run of the script now (the fixture's)
    writes the same spans with the same attributes, line by line, from which get_data reads the same records."""
    path, _ = llamaindex_otlp
    shipped = ROOT / "data/traces/rag_traces.jsonl"
    assert len(spans_of(shipped)) == 8 and spans_of(shipped) == spans_of(path)
    fields = ["question", "answer", "contexts", "context_ids", "context_scores", "session_id", "turn", "metadata"]
    key_map = {f"{field}_ls": field for field in fields}
    read = [get_data(benchmark={"path": str(p), "key_map": key_map, "traces": {"metadata": ["app_version"]}})
            for p in (shipped, path)]  # fmt: skip
    assert [read[0][v] for v in key_map] == [read[1][v] for v in key_map]
