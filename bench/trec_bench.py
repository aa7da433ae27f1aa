"""Benchmark ``evaluate_trec`` against pytrec_eval on a large generated fixture (whole processes).

    python bench/trec_bench.py                 # generate the fixture in a temp dir, 3 alternating rounds
    python bench/trec_bench.py --via ultra     # time `ultra call evaluation.evaluate_trec` (in-process call)
    python bench/trec_bench.py --via stdio     # time `ultra call --stdio ...` (server subprocess + MCP)
    python bench/trec_bench.py --keep DIR      # keep (and reuse) the fixture in DIR

The fixture is deterministic: 5,000 queries with 10-50 graded judgments each (grades 0-3), two
runs of 1,000 documents per query (5M lines each) written in rank order, scores rounded to two
decimals so ties are common, with most judged documents retrieved. Timed, alternating:
(a) our tool on run A with 16 measures, as a process: ``python -m servers.core.trec.cli``
    (``--via cli``, the tool's code without the client), ``python ultra.py call
    evaluation.evaluate_trec`` (``--via ultra``: the client runs the tool in-process, the
    default of ``ultra call``) or ``ultra call --stdio`` (``--via stdio``: the client starts the
    server as a subprocess and calls it over MCP);
(b) pytrec_eval: parse both files with its parsers, evaluate, mean per measure.
The project is byte-compiled first (as an installed package is), and before each timed process
the input files are read once, untimed, so both start from the page cache. It prints medians,
peak RSS (ru_maxrss of the process tree's largest process; the fixture is generated in a
subprocess because a child's ru_maxrss starts from its parent's size at fork) and the ratio,
checks per-query agreement within 1e-9, and times the significance test (16 measures, 5,000
queries, 10,000 resamples) in-process on the per-query values of both runs.
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

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
QUERIES, DEPTH, CORPUS = 5_000, 1_000, 2_000_000
KS = (5, 10, 15, 20, 30, 100)
OUR_MEASURES = ["map", "mrr", "P@5", "P@10", *[f"recall@{k}" for k in KS], *[f"ndcg@{k}" for k in KS]]
PYTREC_MEASURES = {
    "map",
    "recip_rank",
    "P.5,10",
    "recall." + ",".join(map(str, KS)),
    "ndcg_cut." + ",".join(map(str, KS)),
}
PYTREC_NAMES = {"recip_rank": "mrr", **{f"P_{k}": f"P@{k}" for k in (5, 10)}}
PYTREC_NAMES |= {f"recall_{k}": f"recall@{k}" for k in KS} | {f"ndcg_cut_{k}": f"ndcg@{k}" for k in KS}

PYTREC_SCRIPT = """
import json, sys, statistics, pytrec_eval
qrels_path, run_path, measures, dump = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f:
    run = pytrec_eval.parse_run(f)
per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
names = next(iter(per_query.values())).keys()
mean = {m: statistics.fmean(v[m] for v in per_query.values()) for m in names}
print(json.dumps(mean))
if dump != "-":
    with open(dump, "w") as f:
        json.dump(per_query, f)
"""


def generate(folder: Path, seed: int = 2024) -> tuple[Path, Path, Path]:
    """Write qrels, run_a and run_b into ``folder`` (skipped when already there)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    qrels_path, run_a, run_b = folder / "qrels.txt", folder / "run_a.txt", folder / "run_b.txt"
    if all(p.exists() for p in (qrels_path, run_a, run_b)):
        return qrels_path, run_a, run_b
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    qids = pa.array((np.arange(QUERIES) * 7 + 100_001).astype(str))
    judged = rng.integers(10, 51, QUERIES)
    q_of_judgment = np.repeat(np.arange(QUERIES), judged)
    # judged documents: distinct within a query (a random block of ids per query)
    within = np.arange(judged.sum()) - np.repeat(np.cumsum(judged) - judged, judged)
    block = rng.integers(0, CORPUS // 2, QUERIES)
    judged_doc = (block[q_of_judgment] + within * 13) % (CORPUS // 2)
    grade = rng.choice([0, 0, 1, 1, 2, 3], size=judged_doc.size)
    write_options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")

    def docnames(ids: np.ndarray) -> pa.Array:
        return pc.binary_join_element_wise("D", pa.array(ids).cast(pa.string()), "")

    pacsv.write_csv(
        pa.table(
            {
                "q": qids.take(q_of_judgment),
                "i": np.zeros(judged_doc.size, np.int8),
                "d": docnames(judged_doc),
                "r": grade,
            }
        ),
        qrels_path,
        write_options=write_options,
    )
    for path, run_seed, keep_rate in ((run_a, seed + 1, 0.8), (run_b, seed + 2, 0.7)):
        r = np.random.default_rng(run_seed)
        kept = r.random(judged_doc.size) < keep_rate
        q_kept, d_kept, g_kept = q_of_judgment[kept], judged_doc[kept], grade[kept]
        per_query = np.bincount(q_kept, minlength=QUERIES)
        fill = DEPTH - per_query
        q_fill = np.repeat(np.arange(QUERIES), fill)
        within_fill = np.arange(fill.sum()) - np.repeat(np.cumsum(fill) - fill, fill)
        d_fill = CORPUS // 2 + (r.integers(0, CORPUS // 2, QUERIES)[q_fill] + within_fill) % (CORPUS // 2)
        query = np.concatenate([q_kept, q_fill])
        doc = np.concatenate([d_kept, d_fill])
        score = np.round(np.concatenate([r.normal(1.0 + 0.6 * g_kept, 1.0), r.normal(0.0, 1.0, q_fill.size)]), 2)
        # rank order within each query (score descending); ties in a random order, as systems emit them
        order = np.lexsort((r.random(query.size), -score, query))
        query, doc, score = query[order], doc[order], score[order]
        rank = np.tile(np.arange(1, DEPTH + 1), QUERIES)
        table = pa.table(
            {
                "q": qids.take(query),
                "z": pa.array(np.full(query.size, "Q0")),
                "d": docnames(doc),
                "k": rank,
                "s": pc.cast(pa.array(score), pa.string()),
                "t": pa.array(np.full(query.size, "bench")),
            }
        )
        pacsv.write_csv(table, path, write_options=write_options)
    return qrels_path, run_a, run_b


def byte_compile_project() -> None:
    """Write the project's .pyc files, as ``pip install .`` does for an installed package.

    An editable install is not compiled, and with PYTHONDONTWRITEBYTECODE set (as on these
    machines) every ``ultra`` process would compile its modules again (about 0.15 s); pytrec_eval's
    modules are compiled at install time.
    """
    import compileall

    for folder in ("servers", "ultra_client"):
        compileall.compile_dir(ROOT / folder, quiet=1)
    compileall.compile_file(ROOT / "ultra.py", quiet=1)


def warm_page_cache(*paths: Path) -> None:
    """Read the files once (untimed) so every timed process starts with them in the page cache.

    Some virtual machines here reclaim the page cache within seconds; without this, each process
    would also time a variable amount of disk reading.
    """
    for path in paths:
        with open(path, "rb") as handle:
            while handle.read(1 << 22):
                pass


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds (user + sys), peak RSS MiB) of a whole process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    error = process.stderr.read().decode() if process.stderr else ""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{error[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def ours_command(via: str, qrels: Path, run: Path, save: Path) -> list[str]:
    if via in ("ultra", "stdio"):
        return [
            sys.executable,
            str(ROOT / "ultra.py"),
            "call",
            *(["--stdio"] if via == "stdio" else []),
            "evaluation.evaluate_trec",
            f"run_path={run}",
            f"qrels_path={qrels}",
            f"ir_metrics={json.dumps(OUR_MEASURES)}",
            "ks=[]",
            f"save_path={save}",
        ]
    return [
        sys.executable,
        "-m",
        "servers.core.trec.cli",
        str(qrels),
        str(run),
        "-m",
        *OUR_MEASURES,
        "-k",  # no ks, as ks=[] above
        "--save-path",
        str(save),
    ]


def check_agreement(qrels: Path, run: Path, our_file: Path, folder: Path, env: dict[str, str]) -> float:
    """Largest per-query difference between our saved per_query values and pytrec_eval's."""
    dump = folder / "pytrec_per_query.json"
    subprocess.run(
        [sys.executable, "-c", PYTREC_SCRIPT, str(qrels), str(run), json.dumps(sorted(PYTREC_MEASURES)), str(dump)],
        check=True,
        env=env,
        capture_output=True,
    )
    theirs = json.loads(dump.read_text())
    ours = json.loads(our_file.read_text())["per_query"]
    if set(theirs) != set(ours):
        raise SystemExit(f"query sets differ: {len(theirs)} vs {len(ours)}")
    worst = 0.0
    for qid, values in theirs.items():
        for name, value in values.items():
            worst = max(worst, abs(ours[qid][PYTREC_NAMES.get(name, name)] - value))
    return worst


def time_significance(qrels: Path, run_a: Path, run_b: Path) -> tuple[float, float]:
    """(seconds of the paired tests alone, seconds of compare_runs end to end) in this process."""
    sys.path.insert(0, str(ROOT))
    from servers.core.settings import defaults
    from servers.core.trec.compare import compare_runs
    from servers.core.trec.engine import evaluate_tables
    from servers.core.trec.io import read_qrels, read_run
    from servers.core.trec.measures import parse_measures
    from servers.core.trec.significance import holm, paired_tests

    start = time.perf_counter()
    settings = defaults("evaluation")
    options = {name: settings[name] for name in ("relevance_level", "n_resamples", "seed", "alpha", "correction")}
    compare_runs(qrels, [run_a], run_b, OUR_MEASURES, ks=[], **options)
    whole = time.perf_counter() - start
    measures = parse_measures(OUR_MEASURES)
    table = read_qrels(qrels)
    a = evaluate_tables(table, read_run(run_a), measures)
    b = evaluate_tables(table, read_run(run_b), measures)
    new = np.vstack([a.values[m.name] for m in measures])
    old = np.vstack([b.values[m.name] for m in measures])
    start = time.perf_counter()
    tests = paired_tests(new, old, n_resamples=options["n_resamples"], seed=options["seed"], alpha=options["alpha"])
    holm(tests.p_value)
    return time.perf_counter() - start, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--via", choices=["cli", "ultra", "stdio"], default="ultra")
    parser.add_argument("--generate-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="fixture folder to keep and reuse (default: a temp dir)")
    parser.add_argument("--skip-significance", action="store_true")
    args = parser.parse_args()
    if args.generate_only:
        generate(args.generate_only)
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory(prefix="trec_bench_") as scratch:
        folder = args.keep or Path(scratch) / "fixture"
        start = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--generate-only", str(folder)], check=True)
        byte_compile_project()
        qrels, run_a, run_b = (folder / name for name in ("qrels.txt", "run_a.txt", "run_b.txt"))
        print(
            f"fixture in {folder} ({time.perf_counter() - start:.1f} s): {run_a.stat().st_size / 2**20:.0f} MiB per run"
        )
        save = Path(scratch) / "out"
        measures = json.dumps(sorted(PYTREC_MEASURES))
        commands = {
            f"ours ({args.via})": ours_command(args.via, qrels, run_a, save),
            "pytrec_eval (parse + evaluate + mean)": [
                sys.executable,
                "-c",
                PYTREC_SCRIPT,
                str(qrels),
                str(run_a),
                measures,
                "-",
            ],
        }
        samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        for round_number in range(args.rounds):
            for name, command in commands.items():
                warm_page_cache(qrels, run_a)
                samples[name].append(timed(command, env))
            print(
                f"round {round_number + 1}: "
                + ", ".join(f"{n.split()[0]} {s[-1][0]:.2f} s" for n, s in samples.items())
            )
        medians = {
            name: [statistics.median(column) for column in zip(*rows, strict=True)] for name, rows in samples.items()
        }
        latest = max(save.glob("evaluate_trec_*.json"), key=lambda p: p.stat().st_mtime)
        worst = check_agreement(qrels, run_a, latest, Path(scratch), env)
        print(f"\n| {'process':<40} | median wall s | median CPU s | peak RSS MiB |")
        print(f"| {'-' * 40} | ------------- | ------------ | ------------ |")
        for name, (wall, cpu, rss) in medians.items():
            print(f"| {name:<40} | {wall:13.2f} | {cpu:12.2f} | {rss:12.0f} |")
        (ours_wall, ours_cpu, ours_rss), (their_wall, their_cpu, their_rss) = medians.values()
        print(f"speed-up {their_wall / ours_wall:.2f}x wall, {their_cpu / ours_cpu:.2f}x CPU (target >= 3)")
        print(f"memory {ours_rss / their_rss:.0%} of pytrec_eval's peak (target <= 60%)")
        verdict = "OK" if worst <= 1e-9 else "FAIL"
        print(f"largest per-query difference from pytrec_eval: {worst:.2e} (must be <= 1e-9): {verdict}")
        if not args.skip_significance:
            tests_only, whole = time_significance(qrels, run_a, run_b)
            print(
                f"significance (16 measures x 5,000 queries x 10,000 resamples): tests {tests_only:.2f} s (target <= 2)"
            )
            print(f"compare_runs end to end in one process (read + evaluate both runs + tests): {whole:.2f} s")


if __name__ == "__main__":
    main()
