"""Benchmark: the ``evaluate`` tool against the plain per-pair computation UltraRAG uses.

5,000 long answer pairs (MT-RAG predictions against their own targets, the 477 records repeated)
with em, acc, f1, coverem, stringem, rouge-1, rouge-2, rouge-l. The baseline normalises each
pair and calls ``rouge_score.RougeScorer(use_stemmer=True).score`` once per pair for all three
ROUGE types (UltraRAG itself calls it once per ROUGE metric, three times per pair, so its real
cost is higher still). Values must be identical; the script fails otherwise.

    python bench/answers_bench.py [--pairs 5000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import string
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.tools import function as server_function  # noqa: E402

DATA = ROOT / "tests" / "data" / "mtrag" / "conformance_477.jsonl"
METRICS = ["em", "acc", "f1", "coverem", "stringem", "rouge-1", "rouge-2", "rouge-l"]


def squad_normalize(text: str) -> str:
    """The official SQuAD v1.1 script's ``normalize_answer``: lower, drop punctuation and articles, fix spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def normalize_gold(text: str) -> str:
    """A gold answer normalised; its lower-cased text when normalisation empties it (SQuAD v2's rule)."""
    return squad_normalize(text) or text.lower()


def baseline(preds: list[str], golds: list[list[str]]) -> dict[str, list[float]]:
    """Per pair: normalise, then the plain metric code and rouge-score per gold (UltraRAG's approach)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    out: dict[str, list[float]] = {m: [] for m in METRICS}
    for pred, gold_list in zip(preds, golds, strict=False):
        p = squad_normalize(pred)
        gs = [normalize_gold(g) for g in gold_list]
        p_tokens = p.split()
        out["em"].append(float(any(p == g for g in gs)))
        out["acc"].append(float(bool(p) and any(g in p for g in gs)))
        out["coverem"].append(float(any(all(t in p_tokens for t in g.split()) for g in gs)))
        out["stringem"].append(sum(g in p for g in gs) / len(gs))
        f1s = []
        for g in gs:
            common = sum((Counter(p_tokens) & Counter(g.split())).values())
            if common == 0:
                f1s.append(0.0)
                continue
            precision, recall = common / len(p_tokens), common / len(g.split())
            f1s.append(2 * precision * recall / (precision + recall))
        out["f1"].append(max(f1s))
        scores = [scorer.score(g, p) for g in gs]
        out["rouge-1"].append(max(s["rouge1"].fmeasure for s in scores))
        out["rouge-2"].append(max(s["rouge2"].fmeasure for s in scores))
        out["rouge-l"].append(max(s["rougeL"].fmeasure for s in scores))
    return out


def timed(fn, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    records = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    preds = [records[i % len(records)]["prediction"] for i in range(args.pairs)]
    golds = [[records[i % len(records)]["target"]] for i in range(args.pairs)]
    words = sum(len(p.split()) for p in preds) / len(preds)

    # Warm both paths once (imports, NLTK's stemmer), outside the timings.
    baseline(preds[:5], golds[:5])
    evaluate = server_function("evaluation", "evaluate")  # through the server's SPEC, as `ultra call` runs it
    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # results go to a temporary folder
    with tempfile.TemporaryDirectory() as tmp:
        settings = {"metrics": METRICS, "save_path": tmp}
        evaluate(pred_ls=preds[:5], gt_ls=golds[:5], **settings)
        base_time, base = timed(lambda: baseline(preds, golds), args.repeats)
        tool_time, tool = timed(lambda: evaluate(pred_ls=preds, gt_ls=golds, **settings), args.repeats)
    ours = tool["eval_res"]
    identical = all(ours[m] == base[m] for m in METRICS)
    print(f"{args.pairs} pairs, {words:.0f} words per prediction on average, median of {args.repeats} runs")
    print("| computation | seconds | pairs/s |")
    print("| --- | ---: | ---: |")
    print(f"| per-pair baseline (normalise + rouge-score, stemmer) | {base_time:.2f} | {args.pairs / base_time:.0f} |")
    print(
        f"| `evaluate` tool (cached tokens/stems, bit-parallel LCS) | {tool_time:.2f} | {args.pairs / tool_time:.0f} |"
    )
    print(f"speed-up: {base_time / tool_time:.1f}x; identical values for all metrics: {identical}")
    if not identical:
        raise SystemExit("values differ from the baseline")


if __name__ == "__main__":
    main()
