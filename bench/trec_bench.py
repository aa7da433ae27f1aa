"""Benchmark ``evaluate_trec`` against pytrec_eval on large generated fixtures (whole processes).

    python bench/trec_bench.py                 # generate the fixture in a temp dir, 3 alternating rounds
    python bench/trec_bench.py --via ultra     # time `ultra call evaluation.evaluate_trec` (in-process call)
    python bench/trec_bench.py --via stdio     # time `ultra call --stdio ...` (server subprocess + MCP)
    python bench/trec_bench.py --via trec_eval # time `ultra trec_eval -m ...` (trec_eval's command line)
    python bench/trec_bench.py --keep DIR      # keep (and reuse) the fixtures under DIR
    python bench/trec_bench.py --suite all_trec    # all_trec against pytrec_eval asked for all its measures
    python bench/trec_bench.py --matrix        # every variant below; reports each ratio and the worst
    python bench/trec_bench.py --pvalue        # evaluate_trec_pvalue on two runs vs one evaluate_trec
    python bench/trec_bench.py --queries 1000  # a smaller size (1M lines per run) on a loaded machine

The fixtures (``bench/trec_fixture.py``) are deterministic: by default 5,000 queries with 10-50
graded judgments each (grades 0-3), two runs of 1,000 documents per query (5M lines each) written
in rank order, scores rounded to two decimals so ties are common, with most judged documents
retrieved. ``--matrix`` varies docid length (6-24 characters), score precision (2-8 decimals), tie
density and line order (see ``VARIANTS``). Timed, alternating:
(a) our tool on run A with 16 measures, as a process: ``python -m ultra_client.evaluate_trec_cli``
    (``--via cli``, the tool's code without the client), ``python ultra.py call
    evaluation.evaluate_trec`` (``--via ultra``: the client runs the tool in-process, the
    default of ``ultra call``) or ``ultra call --stdio`` (``--via stdio``: the client starts the
    server as a subprocess and calls it over MCP) or ``python ultra.py trec_eval -m ...`` (``--via
    trec_eval``: trec_eval's own command line, printing its summary; agreement is then checked on its
    ``-q`` lines, to trec_eval's 4 printed decimals);
(b) pytrec_eval: parse both files with its parsers, evaluate, mean per measure.
The project is byte-compiled first (as an installed package is), and before each timed process
the input files are read once, untimed, so both start from the page cache. It prints medians,
peak RSS (ru_maxrss of the process tree's largest process; the fixture is generated in a
subprocess because a child's ru_maxrss starts from its parent's size at fork) and the ratio,
checks per-query agreement within 1e-9, and times the significance test (16 measures, 5,000
queries, 10,000 resamples) in-process on the per-query values of both runs. Suites: ``default``
(the 16 measures; target >= 3x) and ``all_trec`` (every trec_eval measure against pytrec_eval asked
for every measure it supports; targets >= 2x and <= 60% of its peak memory). ``--pvalue`` times
``ultra call evaluation.evaluate_trec_pvalue`` on runs A and B against ``evaluate_trec`` on A
(target: at most two evaluations + 2 s).
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "scripts"))
from bytecode import byte_compile_project  # noqa: E402
from trec_fixture import Variant, generate  # noqa: E402

KS = (5, 10, 15, 20, 30, 100)
VARIANTS = {
    "base (8-char docids, 2 decimals)": {},
    "D14102383_3 docids, 4 decimals": {"docid_chars": 11, "decimals": 4},
    "6-char docids": {"docid_chars": 6},
    "24-char docids, 4 decimals": {"docid_chars": 24, "decimals": 4},
    "8 decimals": {"decimals": 8},
    "dense ties (half the scores on a 0.25 grid)": {"ties": 0.5},
    "shuffled line order": {"order": "shuffled"},
}
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
measures = sorted(pytrec_eval.supported_measures) if measures == ["all"] else measures
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f:
    run = pytrec_eval.parse_run(f)
per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
names = next(iter(per_query.values())).keys()
mean = {m: statistics.fmean(v[m] for v in per_query.values()) for m in names if m not in ("runid", "relstring")}
print(json.dumps(mean))
if dump != "-":
    with open(dump, "w") as f:
        json.dump(per_query, f)
"""


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


def ours_command(via: str, qrels: Path, run: Path, save: Path, measures: list[str]) -> list[str]:
    if via == "trec_eval":
        options = ["all_trec"] if measures == ["all_trec"] else sorted(PYTREC_MEASURES)
        return [sys.executable, str(ROOT / "ultra.py"), "trec_eval", *(f"-m{m}" for m in options), str(qrels), str(run)]
    if via in ("ultra", "stdio"):
        return [
            sys.executable,
            str(ROOT / "ultra.py"),
            "call",
            *(["--stdio"] if via == "stdio" else []),
            "evaluation.evaluate_trec",
            f"run_path={run}",
            f"qrels_path={qrels}",
            f"ir_metrics={json.dumps(measures)}",
            "ks=[]",
            f"save_path={save}",
        ]
    return [sys.executable, "-m", "ultra_client.evaluate_trec_cli", str(qrels), str(run), "-m", *measures, "-k",
            "--save-path", str(save)]  # fmt: skip


def pvalue_command(qrels: Path, run_a: Path, run_b: Path, save: Path) -> list[str]:
    return [
        sys.executable,
        str(ROOT / "ultra.py"),
        "call",
        "evaluation.evaluate_trec_pvalue",
        f"run_new_path={run_a}",
        f"run_old_path={run_b}",
        f"qrels_path={qrels}",
        f"ir_metrics={json.dumps(OUR_MEASURES)}",
        "ks=[]",
        f"save_path={save}",
    ]


def check_agreement(qrels: Path, run: Path, our_file: Path, folder: Path, env: dict[str, str], suite: str) -> float:
    """Largest per-query difference between our saved per_query values and pytrec_eval's.

    With ``all_trec``, iprec_at_recall and 11pt_avg are left out: pytrec_eval bundles trec_eval 9,
    which rounds recall levels differently from trec_eval 10.0 (see docs/metrics.md "Exactness").
    """
    sys.path.insert(0, str(ROOT))
    from ultra_trec.measures import parse_measure

    dump = folder / "pytrec_per_query.json"
    asked = ["all"] if suite == "all_trec" else sorted(PYTREC_MEASURES)
    subprocess.run(
        [sys.executable, "-c", PYTREC_SCRIPT, str(qrels), str(run), json.dumps(asked), str(dump)],
        check=True,
        env=env,
        capture_output=True,
    )
    theirs = json.loads(dump.read_text())
    ours = json.loads(our_file.read_text())["per_query"] if our_file.suffix == ".json" else trec_eval_lines(our_file)
    if set(theirs) != set(ours):
        raise SystemExit(f"query sets differ: {len(theirs)} vs {len(ours)}")
    skipped = ("runid", "relstring", "iprec_at_recall", "11pt_avg")
    keys = {name: parse_measure(name).name for name in next(iter(theirs.values())) if not name.startswith(skipped)}
    worst = 0.0
    for qid, values in theirs.items():
        for name, key in keys.items():
            if key in ours[qid]:  # trec_eval prints num_q, gm_map, gm_bpref only in its summary
                worst = max(worst, abs(ours[qid][key] - values[name]))
    return worst


def trec_eval_lines(path: Path) -> dict[str, dict[str, float]]:
    """``{qid: {our measure name: value}}`` from the ``-q`` lines ``ultra trec_eval`` printed into ``path``."""
    from ultra_trec.measures import parse_measure

    per_query: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split("\t")
        if qid != "all" and not value.startswith("'"):
            per_query.setdefault(qid, {})[parse_measure(name.strip()).name] = float(value)
    return per_query


def time_significance(qrels: Path, run_a: Path, run_b: Path) -> tuple[float, float]:
    """(seconds of the paired tests alone, seconds of compare_runs end to end) in this process."""
    sys.path.insert(0, str(ROOT))
    from ultra_kit.settings import defaults
    from ultra_trec.comparison import compare_runs
    from ultra_trec.engine import evaluate_tables
    from ultra_trec.measures import parse_measures
    from ultra_trec.reading.io import read_qrels, read_run
    from ultra_trec.significance import holm, paired_tests

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


def alternate(commands: dict[str, list[str]], rounds: int, warm: tuple[Path, ...], env: dict[str, str]) -> dict:
    """Run the commands in turn, ``rounds`` times; {name: [median wall, median CPU, median peak RSS]}."""
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for round_number in range(rounds):
        for name, command in commands.items():
            warm_page_cache(*warm)
            samples[name].append(timed(command, env))
        print(
            f"  round {round_number + 1}: " + ", ".join(f"{n.split()[0]} {s[-1][0]:.2f} s" for n, s in samples.items())
        )
    return {name: [statistics.median(column) for column in zip(*rows, strict=True)] for name, rows in samples.items()}


def compare_suite(suite: str, files: tuple[Path, Path, Path], args, scratch: Path, env: dict[str, str]) -> dict:
    """Time ours against pytrec_eval on one fixture; print the table; return the ratios."""
    qrels, run_a, _ = files
    save = scratch / f"out-{suite}"
    ours = ["all_trec"] if suite == "all_trec" else OUR_MEASURES
    asked = ["all"] if suite == "all_trec" else sorted(PYTREC_MEASURES)
    commands = {
        f"ours ({args.via}, {suite})": ours_command(args.via, qrels, run_a, save, ours),
        "pytrec_eval (parse + evaluate + mean)": [sys.executable, "-c", PYTREC_SCRIPT, str(qrels), str(run_a),
                                                  json.dumps(asked), "-"],
    }  # fmt: skip
    medians = alternate(commands, args.rounds, (qrels, run_a), env)
    if args.via == "trec_eval":  # its report printed with -q (untimed), read back to 4 decimals
        latest = scratch / f"trec_eval-{suite}.txt"
        command = commands[f"ours ({args.via}, {suite})"]
        latest.write_bytes(
            subprocess.run([*command[:3], "-q", *command[3:]], env=env, check=True, capture_output=True).stdout
        )
    else:
        latest = max(save.glob("evaluate_trec_*.json"), key=lambda p: p.stat().st_mtime)
    worst = check_agreement(qrels, run_a, latest, scratch, env, suite)
    limit = 5.0001e-5 if args.via == "trec_eval" else 1e-9
    print(f"| {'process':<40} | median wall s | median CPU s | peak RSS MiB |")
    print(f"| {'-' * 40} | ------------- | ------------ | ------------ |")
    for name, (wall, cpu, rss) in medians.items():
        print(f"| {name:<40} | {wall:13.2f} | {cpu:12.2f} | {rss:12.0f} |")
    (ours_wall, ours_cpu, ours_rss), (their_wall, their_cpu, their_rss) = medians.values()
    target = 2 if suite == "all_trec" else 3
    print(f"speed-up {their_wall / ours_wall:.2f}x wall, {their_cpu / ours_cpu:.2f}x CPU (target >= {target})")
    print(f"memory {ours_rss / their_rss:.0%} of pytrec_eval's peak (target <= 60%)")
    verdict = "OK" if worst <= limit else "FAIL"
    print(f"largest per-query difference from pytrec_eval: {worst:.2e} (must be <= {limit:g}): {verdict}")
    return {"wall": their_wall / ours_wall, "cpu": their_cpu / ours_cpu, "memory": ours_rss / their_rss}


def time_pvalue(files: tuple[Path, Path, Path], args, scratch: Path, env: dict[str, str]) -> None:
    qrels, run_a, run_b = files
    commands = {
        "evaluate_trec (run A)": ours_command("ultra", qrels, run_a, scratch / "out-one", OUR_MEASURES),
        "evaluate_trec_pvalue (A vs B)": pvalue_command(qrels, run_a, run_b, scratch / "out-pvalue"),
    }
    medians = alternate(commands, args.rounds, (qrels, run_a, run_b), env)
    one, both = medians["evaluate_trec (run A)"][0], medians["evaluate_trec_pvalue (A vs B)"][0]
    verdict = "OK" if both <= 2 * one + 2 else "OVER"
    print(f"evaluate_trec_pvalue {both:.2f} s vs 2 x {one:.2f} s + 2 s = {2 * one + 2:.2f} s: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--via", choices=["cli", "ultra", "stdio", "trec_eval"], default="ultra")
    parser.add_argument("--generate-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--variant", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=5_000, help="queries per fixture (1,000 documents each)")
    parser.add_argument("--keep", type=Path, help="folder to keep (and reuse) the fixtures in (default: a temp dir)")
    parser.add_argument("--suite", choices=["default", "all_trec", "both"], default="default")
    parser.add_argument("--matrix", action="store_true", help="run every variant of VARIANTS, report the worst")
    parser.add_argument("--only", default="", help="with --matrix: variants whose label contains this text")
    parser.add_argument("--pvalue", action="store_true", help="time evaluate_trec_pvalue against evaluate_trec")
    parser.add_argument("--skip-significance", action="store_true")
    args = parser.parse_args()
    if args.generate_only:
        generate(args.generate_only, Variant(**json.loads(args.variant)))
        return
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1",
        # the fixtures are read from the temp dir or the --keep folder; results go to a temp dir
        "ULTRA_READ_ROOTS": os.pathsep.join(
            [tempfile.gettempdir(), *([str(args.keep.resolve())] if args.keep else [])]
        ),
    }
    byte_compile_project()
    suites = ["default", "all_trec"] if args.suite == "both" else [args.suite]
    chosen = VARIANTS if args.matrix else dict(list(VARIANTS.items())[:1])
    chosen = {label: fields for label, fields in chosen.items() if args.only in label}
    results: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory(prefix="trec_bench_") as scratch_dir:
        scratch = Path(scratch_dir)
        for label, fields in chosen.items():
            variant = Variant(queries=args.queries, **fields)
            folder = (args.keep or scratch) / variant.name
            start = time.perf_counter()
            # generated in a subprocess: a child's ru_maxrss starts from its parent's size at fork
            subprocess.run([sys.executable, __file__, "--generate-only", str(folder), "--variant",
                            json.dumps({"queries": args.queries, **fields})], check=True)  # fmt: skip
            files = (folder / "qrels.txt", folder / "run_a.txt", folder / "run_b.txt")
            size = files[1].stat().st_size / 2**20
            print(f"\n## {label}: {folder} ({time.perf_counter() - start:.1f} s), {size:.0f} MiB per run")
            for suite in suites:
                results[(label, suite)] = compare_suite(suite, files, args, scratch, env)
            if args.pvalue and label == next(iter(chosen)):
                time_pvalue(files, args, scratch, env)
            if not args.skip_significance and not args.matrix:
                tests_only, whole = time_significance(files[0], files[1], files[2])
                print(f"significance (16 measures x {args.queries:,} queries x 10,000 resamples): tests "
                      f"{tests_only:.2f} s; compare_runs end to end in one process: {whole:.2f} s")  # fmt: skip
    if len(results) > 1:
        print("\n| variant | suite | speed-up (wall) | memory vs pytrec_eval |\n|---|---|---|---|")
        for (label, suite), ratio in results.items():
            print(f"| {label} | {suite} | {ratio['wall']:.2f}x | {ratio['memory']:.0%} |")
        for suite in suites:
            label, ratio = min(((k[0], v) for k, v in results.items() if k[1] == suite), key=lambda x: x[1]["wall"])
            print(f"worst case ({suite}): {label}: {ratio['wall']:.2f}x")


if __name__ == "__main__":
    main()
