"""Time ``ultra report`` over 3 runs x 10,000 queries x 20 metrics, and measure report.html's size.

    python bench/report_bench.py [--repeats 5] [--queries 10000] [--metrics 20] [--runs 3]

The inputs are three ``evaluate``-style result files (id_ls, a per-item list per metric, settings)
with seeded random values (a different distribution per metric) and the same ids in a different
order in each file, written once. Reported (medians over the repeats):

* the whole ``ultra report`` command as a subprocess (start-up, reading, joining, bootstrap, plots,
  HTML, files) - target at most 5 s - and its CPU time (user + sys: the wall time on an idle machine,
  as the report runs on one core; the load average is printed, since a loaded machine stretches wall time);
* the CPU time of the in-process stages (read and join, bootstrap summary, plots, page and CSV);
* the size of report.html - target at most 5 MB (the per-query table is a seeded sample beyond
  ``max_table_rows``; the page says so).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 5.0
TARGET_BYTES = 5 * 1024 * 1024


def make_inputs(folder: Path, runs: int, queries: int, metrics: int) -> list[Path]:
    """``runs`` evaluate-style files over the same query ids, each in its own order."""
    import numpy as np

    rng = np.random.default_rng(0)
    ids = [f"q{i:06d}" for i in range(queries)]
    paths = []
    for run in range(runs):
        order = rng.permutation(queries)
        data: dict = {"id_ls": [ids[i] for i in order]}
        for metric in range(metrics):
            values = rng.beta(1 + metric % 5, 1 + run + metric % 3, size=queries)
            data[f"metric_{metric:02d}"] = [round(float(v), 6) for v in values]
        data["settings"] = {"metrics": [f"metric_{m:02d}" for m in range(metrics)], "n_items": queries}
        path = folder / f"run_{run}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    return paths


def time_parts(paths: list[Path], out: Path) -> dict[str, float]:
    """CPU seconds of each stage of one in-process report (wall time is at the mercy of the machine's load)."""
    from servers.report import page, plots, sources, stats
    from ultra_kit.settings import defaults

    settings = defaults("report")
    marks = {"start": time.process_time()}
    collected = sources.collect([str(p) for p in paths], {})
    marks["read and join"] = time.process_time()
    summary = stats.summarise(
        collected.runs,
        resamples=settings["bootstrap_resamples"],
        confidence=settings["confidence"],
        seed=settings["seed"],
    )
    marks["bootstrap summary"] = time.process_time()
    figures = plots.boxplots(collected.runs)
    marks["plots"] = time.process_time()
    page.render_html(
        collected,
        summary,
        figures,
        confidence=settings["confidence"],
        resamples=settings["bootstrap_resamples"],
        seed=settings["seed"],
        max_table_rows=settings["max_table_rows"],
    )
    page.per_query_csv(collected)
    marks["page and csv"] = time.process_time()
    names = list(marks)
    return {names[i]: marks[names[i]] - marks[names[i - 1]] for i in range(1, len(names))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="report-bench-") as temp:
        folder = Path(temp)
        paths = make_inputs(folder, args.runs, args.queries, args.metrics)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, str(ROOT / "ultra.py"), "report", *map(str, paths)]
        walls, cpus, sizes, parts = [], [], [], []
        for repeat in range(args.repeats):
            out = folder / f"out_{repeat}"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run([*command, "--out", str(out)], env=env, capture_output=True, text=True)
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 1
            sizes.append((out / "report.html").stat().st_size)
            parts.append(time_parts(paths, folder / f"parts_{repeat}"))
        wall = statistics.median(walls)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        size = statistics.median(sizes)
        print(f"report over {args.runs} runs x {args.queries} queries x {args.metrics} metrics, {args.repeats} repeats")
        print(f"  ultra report (subprocess): median {wall:.2f} s (min {min(walls):.2f}, max {max(walls):.2f})")
        print(f"    its CPU time (user + sys): median {statistics.median(cpus):.2f} s  (load average {load})")
        for name in parts[0]:
            print(f"    in-process {name:<18} median {statistics.median(p[name] for p in parts):.2f} s CPU")
        in_process = statistics.median(sum(p.values()) for p in parts)
        print(f"    in-process total              median {in_process:.2f} s CPU")
        print(f"  report.html: {size / 1e6:.2f} MB ({size} bytes)")
        print(
            f"  targets: <= {TARGET_SECONDS:.0f} s: {'met' if wall <= TARGET_SECONDS else 'MISSED'}; "
            f"<= 5 MB: {'met' if size <= TARGET_BYTES else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
