"""Benchmark: how often do the judge-noise-aware and the naive comparison reject when there is no difference?

Each simulated dataset has ``--queries`` queries; per query a true quality q ~ U(0, 1) that both systems
share (no true difference on any query), and ``--samples`` judge scores per system and query, q plus
normal noise of sd ``--noise`` (the judge's own noise, independent between samples). ``compare_judged``'s
bootstrap runs on each dataset; the script counts how often each test rejects at alpha = 0.05.

    python bench/judge_noise_sim.py [--datasets 1000] [--queries 30] [--samples 3] [--noise 0.3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ultra_trec.significance import compare_samples  # noqa: E402


def rejection_rates(
    datasets: int, queries: int, samples: int, noise: float, *, n_resamples: int, seed: int, alpha: float = 0.05
) -> dict[str, float]:
    """Share of null datasets each test calls significant, and how often only the naive one does."""
    rng = np.random.default_rng(seed)
    counts = {"with_judge_noise": 0, "judge_as_exact": 0, "significant_only_if_judge_exact": 0}
    for k in range(datasets):
        quality = rng.random(queries)
        a = [q + rng.normal(0, noise, samples) for q in quality]
        b = [q + rng.normal(0, noise, samples) for q in quality]
        result = compare_samples(a, b, n_resamples=n_resamples, seed=seed + k, alpha=alpha)
        counts["with_judge_noise"] += result["with_judge_noise"]["significant"]
        counts["judge_as_exact"] += result["judge_as_exact"]["significant"]
        counts["significant_only_if_judge_exact"] += result["significant_only_if_judge_exact"]
    return {name: count / datasets for name, count in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    rates = rejection_rates(args.datasets, args.queries, args.samples, args.noise,
                            n_resamples=args.resamples, seed=args.seed)  # fmt: skip
    print(f"{args.datasets} null datasets, {args.queries} queries x {args.samples} samples, noise sd {args.noise}:")
    for name, rate in rates.items():
        print(f"  {name}: {rate:.3f}")
    print(f"  in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
