"""Time ``ultra sweep`` (a 20-trial grid over an evaluation-only pipeline) against 20 separate ``ultra run``
processes with the same parameter files, in the same sitting.

    python bench/sweep_bench.py [--repeats 3]
    python bench/sweep_bench.py --workers 1,2 [--trial-load N] [--repeats 3]

Reported (medians over the repeats):

* the sweep's wall time and the 20 runs' wall time, and their ratio;
* the sweep's overhead per trial beyond the tools' own time: (trial wall time - the steps' seconds
  from its timings.json), the median over the trials (target: at most 0.2 s);
* the same end to end: (20-trial sweep - 1-trial sweep) / 19 - the mean steps' seconds of a trial;
* the sweep's fixed cost: its wall time minus the sum of the trials' wall times (start-up, servers,
  ranking, significance tests, plots).

With ``--workers 1,2``: 12 trials of ``examples/sweep_retrieval.yaml`` (BM25 k1 x six top_k) as
``ultra sweep --workers W`` on a fresh study (its default storage, a journal file), for each W; then the last W on
SQLite, and two workers on a throwaway PostgreSQL and MariaDB where installed (``tests/support/``). Each run's
wall time is split into start-up, trial phase and finish (``bench/sweep_workers.py``), with its CPU seconds and
the storage's time per trial (claiming it and storing its record). Reported: the ratio of two workers' wall time
to one's (target: at most 0.65), one worker's fixed cost, and the ratio that halving its trial phase alone would
give. ``--trial-load N`` runs the same sweep over N copies of the data: trials of about a second instead of a tenth.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TREC = ROOT / "data" / "trec"
PIPELINE = "servers:\n  evaluation: servers/evaluation\npipeline:\n  - evaluation.evaluate_trec\n"
GRID = [
    "--grid",
    "evaluation.max_depth=[1, 2, 5, 10, 20, 50, 100, 200, 500, null]",
    "--grid",
    f"evaluation.run_path=[{TREC / 'results.test'}, {TREC / 'results.perturbed'}]",
]


def ultra(*args: str, cwd: Path) -> float:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1",
        "ULTRA_READ_ROOTS": tempfile.gettempdir(),
    }
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "ultra.py"), *args], cwd=cwd, env=env, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"ultra {' '.join(args)} failed ({done.returncode}):\n{done.stderr.decode()[-3000:]}")
    return time.perf_counter() - started


def one_sitting(work: Path) -> dict[str, float]:
    (work / "pipes" / "parameters").mkdir(parents=True)
    (work / "pipes" / "trec.yaml").write_text(PIPELINE, encoding="utf-8")
    base = {
        "evaluation": {
            "run_path": str(TREC / "results.test"),
            "qrels_path": str(TREC / "qrels.test"),
            "ir_metrics": ["map", "ndcg", "P", "recall"],
            "ks": [5, 10, 100],
            "relevance_level": 1,
            "max_depth": None,
            "save_path": str(work / "results"),
        }
    }
    (work / "pipes" / "parameters" / "trec_parameter.yaml").write_text(yaml.safe_dump(base), encoding="utf-8")
    sweep_seconds = ultra("sweep", "pipes/trec.yaml", *GRID, "--metric", "eval_res.map", "--output-dir", "sw", cwd=work)
    one = ["--grid", "evaluation.max_depth=[null]", "--metric", "eval_res.map", "--output-dir", "sw1"]
    one_seconds = ultra("sweep", "pipes/trec.yaml", *one, cwd=work)
    rows = json.loads((work / "sw" / "sweep.json").read_text(encoding="utf-8"))["rows"]
    assert len(rows) == 20 and all(row["status"] == "ok" for row in rows), rows
    overheads = [row["wall_seconds"] - row["tool_seconds"] for row in rows]
    runs_seconds = 0.0
    for row in rows:  # the same parameter files, one `ultra run` process each
        param = work / row["folder"] / "parameters.yaml"
        runs_seconds += ultra(
            "run", "pipes/trec.yaml", "--param", str(param), "--output-dir", str(work / "runs"), cwd=work
        )
    return {
        "sweep_seconds": sweep_seconds,
        "runs_seconds": runs_seconds,
        "ratio": runs_seconds / sweep_seconds,
        "overhead_per_trial": statistics.median(overheads),
        "marginal_overhead_per_trial": (sweep_seconds - one_seconds) / 19
        - statistics.mean(r["tool_seconds"] for r in rows),
        "overhead_per_trial_max": max(overheads),
        "tool_seconds_per_trial": statistics.median(row["tool_seconds"] for row in rows),
        "fixed_seconds": sweep_seconds - sum(row["wall_seconds"] for row in rows),
    }


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--repeats", type=int, default=3)
    options.add_argument("--workers", help="e.g. 1,2: time --workers W on 12 trials of examples/sweep_retrieval.yaml")
    options.add_argument(
        "--trial-load", type=int, metavar="N", help="with --workers: heavier trials, over N copies of the data"
    )
    args = options.parse_args()
    if args.workers:
        sys.path.insert(0, str(ROOT))
        from bench.sweep_workers import bench

        workers = [int(w) for w in args.workers.split(",")]
        print(json.dumps(bench(workers, args.repeats, args.trial_load), indent=2))
        return
    results = []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="sweep-bench-") as folder:
            results.append(one_sitting(Path(folder)))
        print(f"repeat {repeat + 1}: " + ", ".join(f"{k} {v:.3f}" for k, v in results[-1].items()), file=sys.stderr)
    medians = {key: statistics.median(r[key] for r in results) for key in results[0]}
    print(json.dumps({"repeats": args.repeats, "trials": 20, "medians": medians}, indent=2))


if __name__ == "__main__":
    main()
