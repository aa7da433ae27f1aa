"""``ultra runs``: the SQLite index ``ultra run`` updates, with concurrent runs, filters and a rebuild."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.client.test_gates import eval_trec_project, gate_file
from tests.conftest import ROOT, run_ultra
from ultra_client.runs.index import INDEX_NAME, key_metrics, list_runs

WRITER = """
import sys
from pathlib import Path
from ultra_client.runs.index import record
for name in sys.argv[2:]:
    record(Path(sys.argv[1]) / name)
"""


def ultra_process(*args: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, str(ROOT / "ultra.py"), *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def test_two_concurrent_runs_are_both_indexed(tmp_path: Path) -> None:
    pipeline = eval_trec_project(tmp_path)
    gate = gate_file(tmp_path, [{"metric": "eval_res.map", "min": 0.99}])
    runs = tmp_path / "runs"
    first = ultra_process("run", str(pipeline), "--output-dir", str(runs), cwd=tmp_path)
    second = ultra_process("run", str(pipeline), "--output-dir", str(runs), "--gate", str(gate), cwd=tmp_path)
    outcomes = [(p.communicate(timeout=240), p.returncode)[::-1] for p in (first, second)]
    assert [code for code, _ in outcomes] == [0, 1], outcomes
    folders = sorted(p for p in runs.iterdir() if p.is_dir())
    assert len(folders) == 2
    with sqlite3.connect(runs / INDEX_NAME) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = {r[0]: r[1:] for r in connection.execute("SELECT folder, pipeline, status, duration, gate FROM runs")}
    assert set(rows) == {f.name for f in folders}
    for folder in folders:
        timings = json.loads((folder / "timings.json").read_text())
        assert rows[folder.name][:3] == ("eval_trec", "ok", timings["total_seconds"])
    assert sorted(str(r[3]) for r in rows.values()) == ["None", "fail"]  # the gated run's verdict
    memory = json.loads((folders[0] / "memory.json").read_text())
    (row,) = [r for r in list_runs(runs) if r["folder"] == folders[0].name]
    assert row["metrics"]["eval_res.map"] == memory["eval_res"]["map"]
    assert row["metrics"]["counts.num_q"] == memory["counts"]["num_q"]
    assert list(key_metrics(row["metrics"])) == ["eval_res.mrr", "eval_res.map", "eval_res.recall@1"]


def fake_runs(output: Path, count: int) -> list[str]:
    names = []
    for index in range(count):
        folder = output / f"p{index % 2}_20261126_{index // 60:02d}{index % 60:02d}00"
        folder.mkdir(parents=True)
        if index % 5:  # every fifth run failed: no memory.json
            (folder / "memory.json").write_text(json.dumps({"scores": {"avg_f1": index / 100}, "n": index}))
            (folder / "timings.json").write_text(json.dumps({"steps": [], "total_seconds": index + 0.5}))
        names.append(folder.name)
    return names


def test_concurrent_writers_lose_no_row_and_a_rebuild_recreates_them(tmp_path: Path) -> None:
    output = tmp_path / "output"
    names = fake_runs(output, 120)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(output), *names[start::2]], env={**os.environ, "PYTHONPATH": str(ROOT)}
        )
        for start in (0, 1)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    rows = list_runs(output)
    assert len(rows) == 120 and sum(1 for r in rows if r["status"] == "incomplete") == 24
    by_name = {r["folder"]: r for r in rows}
    assert by_name[names[7]]["metrics"] == {"scores.avg_f1": 0.07, "n": 7} and by_name[names[7]]["duration"] == 7.5
    assert by_name[names[7]]["started"] == "2026-11-26T00:07:00"

    (output / INDEX_NAME).unlink()
    for suffix in ("-wal", "-shm"):
        (output / (INDEX_NAME + suffix)).unlink(missing_ok=True)
    (output / names[3] / "memory.json").unlink()  # this run's results are gone now
    done = run_ultra("runs", "--output-dir", str(output), "--rebuild", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rebuilt = {r["folder"]: r for r in json.loads(done.stdout)}
    assert set(rebuilt) == set(names) and rebuilt[names[3]]["status"] == "incomplete"
    assert {k: v for k, v in rebuilt.items() if k != names[3]} == {k: v for k, v in by_name.items() if k != names[3]}


def test_filters_and_the_table(tmp_path: Path) -> None:
    output = tmp_path / "output"
    names = fake_runs(output, 4)
    done = run_ultra("runs", "--output-dir", str(output), "--pipeline", "p1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["folder", "status", "seconds", "cost", "gate", "key", "metrics"]  # fits 100
    assert [line.split()[0] for line in lines[2:]] == [names[3], names[1]]  # newest first
    assert lines[2].split()[1:5] == ["ok", "3.5", "unknown", "-"] and "scores.avg_f1 0.0300" in lines[2]
    assert max(len(line) for line in lines) <= 100
    whole = run_ultra("runs", "--output-dir", str(output), "--pipeline", "p1", "--full", cwd=tmp_path).stdout
    head = ["folder", "pipeline", "started", "status", "seconds", "cost", "gate", "key", "metrics"]
    assert whole.splitlines()[0].split() == head and whole.splitlines()[2].split()[1] == "p1"
    later = run_ultra("runs", "--output-dir", str(output), "--since", "2026-11-26T00:02", "--json", cwd=tmp_path)
    assert [r["folder"] for r in json.loads(later.stdout)] == [names[3], names[2]]
    shutil.rmtree(output / names[3])  # a removed folder leaves the list
    left = run_ultra("runs", "--output-dir", str(output), "--json", cwd=tmp_path)
    assert [r["folder"] for r in json.loads(left.stdout)] == [names[2], names[1], names[0]]
    bad = run_ultra("runs", "--output-dir", str(output), "--since", "last week", cwd=tmp_path)
    assert bad.returncode == 1 and "expected a date such as 2026-11-26" in bad.stderr
