"""Bad input: an error naming the file and what was expected, no traceback, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.report.helpers import build
from ultra_base.errors import InputError


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _fails(paths: list[Path], out: Path, *expected: str) -> None:
    with pytest.raises(InputError) as caught:
        build(paths, out)
    for text in expected:
        assert text in str(caught.value)
    assert not out.exists()  # nothing computed is written before everything is


def test_unknown_json_names_the_file_and_the_shapes_read(tmp_path: Path) -> None:
    unknown = _write(tmp_path / "other.json", {"hello": [1, 2]})
    _fails([unknown], tmp_path / "out", str(unknown), "not a result file the report knows", "evaluate_trec (")


def test_unreadable_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"aggregate": 1,\n oops', encoding="utf-8")
    _fails([broken], tmp_path / "out", str(broken), "not JSON (line 2")
    _fails([tmp_path / "missing.json"], tmp_path / "out", "missing.json", "no such file or folder")


def test_folder_that_is_no_run(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _fails([tmp_path / "empty"], tmp_path / "out", "neither memory.json", "sweep.json")


def test_per_item_lists_without_ids_or_misaligned(tmp_path: Path) -> None:
    settings = {"metrics": ["f1"], "n_items": 3}
    old = _write(tmp_path / "old.json", {"f1": [0.1, 0.2, 0.3], "avg_f1": 0.2, "settings": settings})
    _fails([old], tmp_path / "out", str(old), "no id_ls", "rerun evaluate")
    short = _write(tmp_path / "short.json", {"id_ls": ["a", "b", "c"], "f1": [0.1, 0.2], "settings": settings})
    _fails([short], tmp_path / "out", str(short), "f1 has 2 values but id_ls has 3 ids", "misaligned")


def test_run_folder_whose_questions_do_not_match_its_ids(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "files").mkdir(parents=True)
    _write(run / "files" / "evaluate_1.json", {"id_ls": ["a", "b"], "f1": [1.0, 0.0], "settings": {"metrics": ["f1"]}})
    _write(run / "memory.json", {"q_ls": ["q1", "q2", "q3"], "id_ls": ["a", "b"]})
    _fails([run], tmp_path / "out", str(run / "memory.json"), "q_ls has 3 items but id_ls has 2")


def test_the_cli_prints_the_error_without_a_traceback(tmp_path: Path) -> None:
    unknown = _write(tmp_path / "other.json", [1, 2, 3])
    done = run_ultra("report", str(unknown), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {unknown}: not a result file the report knows")
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()
    done = run_ultra("report", "--label", "no-equals-sign", cwd=tmp_path)
    assert done.returncode == 1 and "expected NAME=PATH" in done.stderr


def test_the_tool_needs_something_to_report(tmp_path: Path) -> None:
    done = run_ultra("call", "report.report", cwd=ROOT)
    assert done.returncode == 1 and "nothing to report" in done.stderr
