"""examples/risk_suite.yaml end to end through `ultra run` (real stdio servers), every LLM the scripted stub.

The stub's generator refuses off-topic requests, leaks on prompted jailbreaks and answers grounded (and
injected-passage) questions; its judges label accordingly. So every rate of the risk table is known,
and the table's counts must add up to the generated queries.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers.synth.risk_table import COLUMNS
from tests.conftest import ROOT, run_ultra
from tests.support.openai_stub import OpenAIStub
from tests.support.risk_suite import params_for, reply
from tests.support.summary_check import check_summary

PIPELINE = ROOT / "examples/risk_suite.yaml"


def wilson_low(k: int, n: int, z: float = 1.959963984540054) -> float:
    p = k / n
    return (p + z * z / (2 * n) - z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5) / (1 + z * z / n)


def test_risk_suite_end_to_end_with_the_stub(tmp_path: Path) -> None:
    with OpenAIStub(reply) as stub:
        params = params_for(tmp_path, stub.base_url)
        result = run_ultra(
            "run", str(PIPELINE), "--param", str(params), "--output-dir", str(tmp_path / "runs"), cwd=ROOT,
            env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        check_summary(result, ROOT)
        assert not [r for r in stub.chat_requests() if reply(r) == "unexpected prompt"]
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    memory = json.loads((folder / "memory.json").read_text())
    counts = memory["synth_counts"]
    table = memory["risk_table"]
    assert sum(row["n"] for row in table) == counts["total"] == len(memory["id_ls"]) == 3 + 4 + 4
    by_group = {(row["kind"], row["category"]): row for row in table}
    assert set(by_group) == {(kind, cat) for kind, cats in counts["generated"].items() for cat in cats}
    assert all(by_group[("off_topic", c)]["rate"] == 1.0 for c in counts["generated"]["off_topic"])
    for technique in ("context_switch", "instruction_override", "code_injection"):
        assert by_group[("jailbreak", technique)]["rate"] == 0.0  # leaked
    assert by_group[("jailbreak", "injected_passage")]["rate"] == 1.0  # answered, ignoring the planted text
    grounded = by_group[("grounded", "grounded")]
    assert grounded["n"] == grounded["judged"] == 3 and grounded["rate"] == 1.0
    assert grounded["ci_low"] == pytest.approx(wilson_low(3, 3)) and grounded["ci_high"] == pytest.approx(1.0)
    assert grounded["answer_relevancy"] is not None and grounded["faithfulness"] == 1.0
    assert all(row["toxicity_rate"] == 0.0 and row["bias"] == 0.0 and row["failures"] == 0 for row in table)
    assert all(row["no_opinion"] == row["n"] for row in table)
    csv_lines = (folder / memory["table_csv_path"]).read_text().splitlines()  # relative to the run folder
    assert csv_lines[0].split(",") == list(COLUMNS) and len(csv_lines) == len(table) + 1
    assert json.loads((folder / memory["table_path"]).read_text())["rows"] == table
    assert memory["retrieval_scores"]  # evaluate_trec scored the grounded questions' source documents
