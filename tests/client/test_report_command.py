"""``ultra report`` calls the report server's tool in this process; its ``--out`` folder may lie anywhere,
while an MCP caller's ``out_dir`` stays inside the output folder like every path a tool writes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ROOT, run_ultra


def _result_file(folder: Path) -> Path:
    path = folder / "evaluate_1.json"
    path.write_text(json.dumps({"id_ls": ["a", "b"], "f1": [1.0, 0.5], "settings": {"metrics": ["f1"]}}))
    return path


def test_the_tool_keeps_out_dir_inside_the_output_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ULTRA_ALLOW_OUTSIDE_OUTPUT")
    result = _result_file(tmp_path)
    done = run_ultra("call", "report.report", f"result_paths=[{result}]", f"out_dir={tmp_path / 'out'}", cwd=ROOT)
    assert done.returncode == 1 and "out_dir is outside the output folder" in done.stderr
    assert not (tmp_path / "out").exists()


def test_ultra_report_writes_into_the_folder_it_is_given(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ULTRA_ALLOW_OUTSIDE_OUTPUT")  # --out needs no opt-out
    result = _result_file(tmp_path)
    done = run_ultra("report", str(result), "--out", str(tmp_path / "out"), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == f"wrote {tmp_path / 'out' / 'report.html'}"
    assert "f1" in (tmp_path / "out" / "summary.csv").read_text(encoding="utf-8")
