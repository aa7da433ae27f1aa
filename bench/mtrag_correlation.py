"""Kendall tau of RB_agg_idk against the mean human rating per dimension over MT-RAG's 477 records.

Columns: MT-RAG's stored RB_agg_idk (BERTScore on deberta-xlarge-mnli, rescaled), and with
``--ours FILE`` (the conformance records *with contexts*, flattened from MT-RAG's human-evaluation subset)
RB_agg_idk recomputed here: our RougeL, and BERTScore on the offline MiniLM model (extra
``bertscore``), with the IDK judgement implied by the stored ``conditional_idk``. Kendall's tau-b
(scipy), with its two-sided p-value.

    python bench/mtrag_correlation.py [--data FILE] [--ours FILE_WITH_CONTEXTS]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.tools import call  # noqa: E402

DATA = ROOT / "tests" / "data" / "mtrag" / "conformance_477.jsonl"
DIMENSIONS = ["naturalness", "appropriateness", "completeness", "faithfulness", "win-rate"]


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def implied_idk(record: dict) -> float:
    correct = record["expected"]["conditional_idk"]
    return correct if record["answerability"] in ("UNANSWERABLE", "CONVERSATIONAL") else 1 - correct


def mean_rating(record: dict, dimension: str) -> float:
    return statistics.mean(float(v) for v in record["human"][dimension].values())


def stored_rb_agg_idk(records: list[dict]) -> list[float]:
    """RB_agg_idk as MT-RAG stored it (tests/evaluation check that evaluate_mtrag's formula gives it back)."""
    return [float(r["expected"]["RB_agg_idk"]) for r in records]


def our_rb_agg_idk(records: list[dict]) -> list[float]:
    """RB_agg_idk recomputed end to end by the ``evaluate_mtrag`` tool on the offline MiniLM BERTScore."""
    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # its result file goes to a temporary folder
    with tempfile.TemporaryDirectory() as folder:
        result = call(
            "evaluation", "evaluate_mtrag",
            pred_ls=[r["prediction"] for r in records], gt_ls=[r["target"] for r in records],
            ctx_ls=[r["contexts"] for r in records], answerability_ls=[r["answerability"] for r in records],
            idk_ls=[implied_idk(r) for r in records], mtrag_metrics=["RB_agg"], save_path=folder,
        )  # fmt: skip
    return result["eval_res"]["RB_agg_idk"]


def main() -> None:
    from scipy.stats import kendalltau

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--ours", type=Path, default=None, help="conformance records with contexts")
    args = parser.parse_args()
    records = load(args.data)
    columns = {"RB_agg_idk (MT-RAG stored, deberta-xlarge-mnli)": stored_rb_agg_idk(records)}
    if args.ours is not None:
        with_contexts = {(r["task_id"], r["model_id"]): r for r in load(args.ours)}
        ordered = [with_contexts[(r["task_id"], r["model_id"])] for r in records]
        columns["RB_agg_idk (ours, MiniLM-L6 BERTScore)"] = our_rb_agg_idk(ordered)
    print(f"Kendall tau-b over {len(records)} records (p-value in parentheses)\n")
    print("| human dimension (mean of annotators) | " + " | ".join(columns) + " |")
    print("| --- |" + " ---: |" * len(columns))
    for dimension in DIMENSIONS:
        human = [mean_rating(r, dimension) for r in records]
        cells = []
        for values in columns.values():
            tau, p = kendalltau(values, human)
            cells.append(f"{tau:.3f} ({p:.1e})")
        print(f"| {dimension} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
