"""Benchmark: do PPI intervals cover the human mean on real judgments? MT-RAG, 159 tasks x 3 systems.

Data: ``data/mtrag/judged_human_477.jsonl``: per answer MT-RAG's stored LLM-judge scores (``RL_F_idk``,
``RB_llm_idk``, 0-1) and the annotators' faithfulness ratings (1-4). An answer's human label is its mean
rating rescaled to 0-1, (mean - 1) / 3; the ground truth of a system is the mean of its 159 labels, of a
pair the mean of the 159 per-task differences. Each of ``--reps`` draws labels ``n`` tasks (the same for
the three systems, without replacement); the other 159 - n tasks are judged only. Per judge and n:

- coverage: how often the interval at alpha = 0.05 holds the ground truth (PPI++, classical PPI, human-only;
  judge-only shows the judge's bias), over systems and draws;
- width: the mean interval width over the human-only one's;
- power: for the pairs that differ on the full human data (their 159-task human-only interval excludes 0),
  how often the n-label interval excludes 0; "false" the same for the pairs that do not.

    python bench/ppi_coverage.py [--reps 1000] [--seed 0] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.tools import call  # noqa: E402

DATA = ROOT / "data" / "mtrag" / "judged_human_477.jsonl"
JUDGES = ["RL_F_idk", "RB_llm_idk"]
SIZES = [20, 40, 80]
METHODS = {"PPI++": lambda r: r, "classical": lambda r: r["classical"], "human-only": lambda r: r["human_only"],
           "judge-only": lambda r: r["judge_only"]}  # fmt: skip


def load() -> tuple[list[str], list[str], dict[str, np.ndarray], dict[str, dict[str, np.ndarray]]]:
    """(systems, tasks, labels per system, judge scores per judge and system), tasks in one order."""
    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    systems = list(dict.fromkeys(r["model_id"] for r in rows))
    tasks = sorted({r["task_id"] for r in rows})
    where = {(r["model_id"], r["task_id"]): r for r in rows}
    labels = {s: np.array([(np.mean(where[s, t]["faithfulness"]) - 1) / 3 for t in tasks]) for s in systems}
    scores = {j: {s: np.array([float(where[s, t][j]) for t in tasks]) for s in systems} for j in JUDGES}
    return systems, tasks, labels, scores


def ppi(tasks: list[str], chosen: np.ndarray, labels: dict[str, np.ndarray], scores: dict[str, np.ndarray],
        alpha: float, folder: str) -> dict:  # fmt: skip
    """The ``ppi`` tool on every system: judge scores on every task, human labels on the ``chosen`` ones."""
    judged = {s: dict(zip(tasks, f.tolist(), strict=True)) for s, f in scores.items()}
    human = {s: {t: float(y) for t, y, c in zip(tasks, labels[s], chosen, strict=True) if c} for s in labels}
    return call("evaluation", "ppi", judged=judged, human=human, alpha=alpha, save_path=folder)


def run(reps: int, seed: int, alpha: float = 0.05) -> dict:
    """Coverage, width and power per judge and n (see the module's docstring), through the ``ppi`` tool."""
    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # each call's result file goes to a temporary folder
    with tempfile.TemporaryDirectory() as folder:
        return _run(reps, seed, alpha, folder)


def _run(reps: int, seed: int, alpha: float, folder: str) -> dict:
    systems, tasks, labels, scores = load()
    pairs = list(combinations(systems, 2))
    truth = {s: float(labels[s].mean()) for s in systems}
    diffs = {p: labels[p[0]] - labels[p[1]] for p in pairs}
    every = ppi(tasks, np.ones(len(tasks), bool), labels, labels, alpha, folder)["ppi_diff"]
    full = {p: every[f"{p[0]} - {p[1]}"]["human_only"]["ci"] for p in pairs}
    differ = {p: not (lo <= 0 <= hi) for p, (lo, hi) in full.items()}
    rng = np.random.default_rng(seed)
    table = []
    for judge in JUDGES:
        for n in SIZES:
            hits = {m: 0 for m in METHODS}
            width = {m: 0.0 for m in METHODS}
            power = {m: [0, 0] for m in ("PPI++", "classical", "human-only")}  # [differing pairs, others]
            for _ in range(reps):
                chosen = np.zeros(len(tasks), bool)
                chosen[rng.choice(len(tasks), n, replace=False)] = True
                result = ppi(tasks, chosen, labels, scores[judge], alpha, folder)
                for s in systems:
                    for m, part in METHODS.items():
                        lo, hi = part(result["ppi_res"][s])["ci"]
                        hits[m] += lo <= truth[s] <= hi
                        width[m] += hi - lo
                for p in pairs:
                    for m in power:
                        lo, hi = METHODS[m](result["ppi_diff"][f"{p[0]} - {p[1]}"])["ci"]
                        power[m][0 if differ[p] else 1] += not (lo <= 0 <= hi)
            draws = reps * len(systems)
            n_differ = sum(differ.values())
            table.append({
                "judge": judge, "n": n,
                "coverage": {m: hits[m] / draws for m in METHODS},
                "width_vs_human": {m: width[m] / width["human-only"] for m in METHODS},
                "power": {m: v[0] / (reps * n_differ) if n_differ else None for m, v in power.items()},
                "false_difference": {m: v[1] / (reps * (len(pairs) - n_differ)) if len(pairs) > n_differ else None
                                     for m, v in power.items()},
            })  # fmt: skip
    return {
        "truth": truth,
        "pairs": {f"{a} - {b}": {"difference": float(diffs[a, b].mean()), "differ": differ[a, b]} for a, b in pairs},
        "reps": reps, "seed": seed, "alpha": alpha, "table": table,
    }  # fmt: skip


def markdown(result: dict) -> str:
    """The table docs/judges.md shows."""
    lines = [
        "| judge | n | coverage PPI++ | coverage classical | coverage human-only | coverage judge-only "
        "| width PPI++ / human | width classical / human | power PPI++ | power classical | power human-only |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["table"]:
        c, w, p = row["coverage"], row["width_vs_human"], row["power"]
        lines.append(
            f"| {row['judge']} | {row['n']} | {c['PPI++']:.3f} | {c['classical']:.3f} | {c['human-only']:.3f} "
            f"| {c['judge-only']:.3f} | {w['PPI++']:.2f} | {w['classical']:.2f} "
            f"| {p['PPI++']:.2f} | {p['classical']:.2f} | {p['human-only']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="also write the whole result as JSON")
    args = parser.parse_args()
    start = time.perf_counter()
    result = run(args.reps, args.seed)
    print(json.dumps({"truth": result["truth"], "pairs": result["pairs"]}, indent=2))
    print(markdown(result))
    for row in result["table"]:
        print(f"{row['judge']} n={row['n']}: false difference (pairs the full data does not separate): "
              + ", ".join(f"{m} {v:.3f}" for m, v in row["false_difference"].items() if v is not None))  # fmt: skip
    print(f"{args.reps} draws per judge and n in {time.perf_counter() - start:.1f} s")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
