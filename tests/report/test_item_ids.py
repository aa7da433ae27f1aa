"""Per-item result files carry the item ids next to the per-item values, so a report joins on ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers.evaluation.server import SPEC
from tests.report.conftest import mtrag_records
from ultra_kit.inprocess import ToolFailure, local_tools

LEXICAL = ["Recall", "Length"]


def _evaluate_mtrag(tmp_path: Path, **given):
    tool = local_tools(SPEC)["evaluate_mtrag"]
    return tool.function(**{**tool.settings, "mtrag_metrics": LEXICAL, "save_path": str(tmp_path), **given})


def test_evaluate_mtrag_writes_the_record_ids(tmp_path: Path) -> None:
    records = mtrag_records()[:5]
    ids = [f"{r['task_id']}/{n}" for n, r in enumerate(records)]
    result = _evaluate_mtrag(
        tmp_path, pred_ls=[r["prediction"] for r in records], gt_ls=[r["target"] for r in records], id_ls=ids
    )
    saved = json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))
    assert saved["id_ls"] == ids and len(saved["Length"]) == 5
    assert saved["Length"][3] == result["eval_res"]["Length"][3]


def test_evaluate_mtrag_numbers_records_without_ids(tmp_path: Path) -> None:
    result = _evaluate_mtrag(tmp_path, pred_ls=["a b", "c"], gt_ls=["a", "c"])
    assert json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))["id_ls"] == [0, 1]


def test_evaluate_mtrag_refuses_ids_of_another_length(tmp_path: Path) -> None:
    with pytest.raises(ToolFailure, match="id_ls has 1 ids but pred_ls has 2"):
        _evaluate_mtrag(tmp_path / "out", pred_ls=["a", "b"], gt_ls=["a", "b"], id_ls=["x"])
    assert not (tmp_path / "out").exists()
