"""The evaluation jobs called as the tools call them: settings from parameter.yaml, overrides on top."""

from __future__ import annotations

from typing import Any

from servers.evaluation.answers.evaluate import evaluate_answers
from servers.evaluation.mtrag.evaluate import evaluate_mtrag_records
from ultra_kit.factory import tool_settings
from ultra_kit.settings import defaults

SETTINGS = defaults("evaluation")


def score_answers(pred_ls: Any, gt_ls: Any, metrics: Any, **overrides: Any) -> dict[str, Any]:
    """``evaluate_answers`` with the server's defaults for the settings not given."""
    settings = tool_settings(evaluate_answers, SETTINGS)
    return evaluate_answers(pred_ls, gt_ls, **{**settings, "metrics": metrics, **overrides})


def score_mtrag(*records: Any, **overrides: Any) -> dict[str, Any]:
    """``evaluate_mtrag_records`` with the server's defaults for the settings not given."""
    return evaluate_mtrag_records(*records, **{**tool_settings(evaluate_mtrag_records, SETTINGS), **overrides})
