"""compare_judged: the hierarchical bootstrap against the exact distribution of a tiny case worked out by hand,
a seeded null simulation, judge result files as judging passes, and bad input."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import anyio
import numpy as np
import pytest

from servers.evaluation.judged.bootstrap import resampled_differences
from servers.evaluation.server import SPEC
from tests.conftest import ROOT
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools

# A: q1 sampled [1, 0], q2 [1, 1]; B scores 0 everywhere. Observed difference (0.5 + 1) / 2 = 0.75.
# Stage 1 draws (q1,q1) 1/4, one of each 1/2, (q2,q2) 1/4; stage 2 redraws q1's two samples: mean 1, 0.5, 0
# with 1/4, 1/2, 1/4; q2's mean is always 1. So the round's difference is
#   1: 1/4 + 1/2 * 1/4 + 1/4 * 1/16;  0.75: 1/2 * 1/2 + 1/4 * 1/4;  0.5: 1/2 * 1/4 + 1/4 * 3/8;
#   0.25: 1/4 * 1/4;  0: 1/4 * 1/16.
EXACT = {1.0: 0.390625, 0.75: 0.3125, 0.5: 0.21875, 0.25: 0.0625, 0.0: 0.015625}
A = {"q1": [1, 0], "q2": [1, 1]}
B = {"q1": [0], "q2": [0, 0]}


def call(tool: str, **arguments):
    return anyio.run(call_local_tool, local_tools(SPEC)[tool], arguments)


def test_hierarchical_bootstrap_matches_the_exact_distribution_of_a_tiny_case() -> None:
    rounds = 40000
    hierarchical, naive = resampled_differences(
        [np.array(A[q], float) for q in A], [np.array(B[q], float) for q in B], n_resamples=rounds, seed=3
    )
    seen = Counter(np.round(hierarchical, 6).tolist())
    assert set(seen) == set(EXACT)
    for value, probability in EXACT.items():
        assert seen[value] / rounds == pytest.approx(probability, abs=0.008)
    naive_seen = Counter(np.round(naive, 6).tolist())  # item means exact: 1, 0.75, 0.5 with 1/4, 1/2, 1/4
    assert set(naive_seen) == {1.0, 0.75, 0.5}
    assert naive_seen[0.75] / rounds == pytest.approx(0.5, abs=0.01)


def test_the_tool_reports_both_tests_and_the_flag(tmp_path: Path) -> None:
    result = call("compare_judged", samples={"A": A, "B": B}, n_resamples=40000, seed=3,
                  save_path=str(tmp_path / "c.json"))["comparisons"]["A - B"]  # fmt: skip
    assert result["diff"] == pytest.approx(0.75)
    # |d* - 0.75| >= 0.75 only for d* = 0: p = (1 + rounds * 1/64) / (1 + rounds)
    assert result["with_judge_noise"]["p_value"] == pytest.approx(0.015625, abs=0.003)
    assert result["with_judge_noise"]["ci"] == [0.25, 1.0]  # 0 holds 1.6% < 2.5%; below 1 lies 61%
    assert result["judge_as_exact"]["p_value"] == pytest.approx(1 / 40001)
    assert result["judge_as_exact"]["ci"] == [0.5, 1.0]
    assert result["significant_only_if_judge_exact"] is False  # both significant at 0.05
    assert result["n_items"] == 2 and result["samples_per_item"] == [1, 2]
    assert json.loads((tmp_path / "c.json").read_text())["comparisons"]["A - B"]["diff"] == pytest.approx(0.75)


def test_seeded_null_simulation() -> None:
    """No true difference, judge noise sd 0.3, 3 samples: the noise-aware test stays at or below alpha + 0.02."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("judge_noise_sim", ROOT / "bench" / "judge_noise_sim.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rates = module.rejection_rates(150, 30, 3, 0.3, n_resamples=400, seed=11)
    assert rates["with_judge_noise"] <= 0.07
    assert rates["judge_as_exact"] >= rates["with_judge_noise"]


def judge_pass(path: Path, scores: dict[str, float]) -> str:
    items = [{"id": i, "status": "ok", "faithfulness": s} for i, s in scores.items()]
    path.write_text(json.dumps({"aggregate": {"faithfulness": 0.0, "num_faithfulness": 2}, "items": items}))
    return str(path)


def test_judge_result_files_are_judging_passes(tmp_path: Path) -> None:
    files = {
        "A": [judge_pass(tmp_path / "a1.json", {"q1": 1, "q2": 1}), judge_pass(tmp_path / "a2.json", {"q1": 0})],
        "B": [judge_pass(tmp_path / "b1.json", {"q1": 0, "q2": 0, "q3": 1})],
    }
    result = call("compare_judged", sample_files=files, n_resamples=40000, seed=3,
                  save_path=str(tmp_path / "c.json"))["comparisons"]["A - B"]  # fmt: skip
    assert result["diff"] == pytest.approx(0.75) and result["items_left_out"] == 1
    assert result["with_judge_noise"]["ci"] == [0.25, 1.0]


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ToolFailure, match="at least two systems"):
        call("compare_judged", samples={"A": A}, save_path=str(tmp_path / "c.json"))
    with pytest.raises(ToolFailure, match="0 items in common"):
        call("compare_judged", samples={"A": A, "B": {"x": [1]}}, save_path=str(tmp_path / "c.json"))
    assert not (tmp_path / "c.json").exists()
