"""Time ``ultra report`` and ``ultra compare`` over 3 runs x 10,000 queries x 20 metrics, and measure the pages.

    python bench/report_bench.py [--repeats 5] [--queries 10000] [--metrics 20] [--runs 3]

The inputs are three ``evaluate``-style result files (id_ls, a per-item list per metric, settings)
with seeded random values (a different distribution per metric) and the same ids in a different
order in each file, written once. Reported (medians over the repeats):

* the whole ``ultra report`` and ``ultra compare`` commands as subprocesses (start-up, reading, joining,
  bootstrap, paired tests, charts, HTML, files) - target at most 5 s each - and their CPU time (user + sys:
  the wall time on an idle machine, as they run on one core; the load average is printed, since a loaded
  machine stretches wall time);
* the CPU time of each tool called in-process through the server's SPEC (the tools' public face);
* the size of report.html and compare.html - target at most 5 MB each (the per-query table is a seeded
  sample beyond ``max_table_rows``, the scatters beyond ``max_scatter_points``; the pages say so).
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


def time_tools(paths: list[Path], out: Path) -> dict[str, float]:
    """CPU seconds of each tool called in-process through the report server's SPEC (its public face), as
    ``ultra report`` and ``ultra compare`` call them (wall time is at the mercy of the machine's load)."""
    from bench.tools import tool
    from ultra_base.errors import add_read_root

    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # the bench writes into its temporary folder, as --out does
    add_read_root(str(out.parent))
    tools = {name: tool("report", name) for name in ("report", "compare")}
    spent = {}
    for name, arguments in (
        ("report", {"result_paths": [str(p) for p in paths], "out_dir": str(out / "report")}),
        ("compare", {"run_paths": [str(p) for p in paths], "out_dir": str(out / "compare")}),
    ):
        start = time.process_time()
        tools[name].function(**{**tools[name].settings, **arguments})
        spent[name] = time.process_time() - start
    return spent


def run_command(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one subprocess; exits on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        raise SystemExit(1)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


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
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"{args.runs} runs x {args.queries} queries x {args.metrics} metrics, {args.repeats} repeats "
              f"(load average {load})")  # fmt: skip
        for command, page in (("report", "report.html"), ("compare", "compare.html")):
            walls, cpus, sizes = [], [], []
            for repeat in range(args.repeats):
                out = folder / f"{command}_{repeat}"
                wall, cpu = run_command([sys.executable, str(ROOT / "ultra.py"), command, *map(str, paths),
                                         "--out", str(out)], env)  # fmt: skip
                walls.append(wall)
                cpus.append(cpu)
                sizes.append((out / page).stat().st_size)
            wall, size = statistics.median(walls), statistics.median(sizes)
            print(f"  ultra {command} (subprocess): median {wall:.2f} s (min {min(walls):.2f}, max {max(walls):.2f})")
            print(f"    its CPU time (user + sys): median {statistics.median(cpus):.2f} s")
            print(f"  {page}: {size / 1e6:.2f} MB ({size} bytes)")
            print(f"  targets: <= {TARGET_SECONDS:.0f} s: {'met' if wall <= TARGET_SECONDS else 'MISSED'}; "
                  f"<= 5 MB: {'met' if size <= TARGET_BYTES else 'MISSED'}")  # fmt: skip
        spent = [time_tools(paths, folder / f"tools_{repeat}") for repeat in range(args.repeats)]
        for name in spent[0]:
            print(f"  in-process tool {name:<8} median {statistics.median(s[name] for s in spent):.2f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
