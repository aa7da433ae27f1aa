"""``ultra sweep --workers W`` timed in phases, for ``bench/sweep_bench.py --workers 1,2``.

A sitting runs 12 trials of ``examples/sweep_retrieval.yaml`` (BM25 k1 x six top_k) with ``--workers W`` on a
fresh study for each W (``--workers``' own storage: a journal file in the sweep folder), then the last W on SQLite
(``--storage sqlite:///...``) and on each database server installed, and splits each wall time by the study's own
clock:

* ``startup``: the command's start to the first trial's claim (imports, the storage, the servers; the other
  workers start meanwhile);
* ``trials``: the first claim to the last trial's end; ``trial_work`` is the trials' own wall seconds summed
  (what W workers share);
* ``finish``: the last trial's end to the command's end (the other workers' exit, the table, the tests, the plots).

``cpu`` is the user + system seconds of the command and its workers (less sensitive to other load than wall time).
``fixed_bound`` is the ratio two workers could reach if they halved the trial phase of one and nothing else changed:
(startup + trials / 2 + finish) / (startup + trials + finish), from one worker's phases. ``cpu_bound`` is the ratio
no schedule can beat: the last W's CPU seconds spread over W cores, without an idle moment, against one worker's
wall time. ``schedule_bound`` is nearer: the last W's start-up and finish as they were (one process works in each),
and the rest of its CPU seconds spread over W cores without an idle moment, against one worker's wall time (it
assumes one process works in the start-up; the report process now works beside it, so a ratio can fall below).
``parallel_efficiency`` is this machine's, measured in the same sitting: one process's time for an
allocation-heavy Python loop (dicts and lists, as a trial makes) over its time when W such processes run at once
(1.0: W cores do W times the work).

With ``--trial-load N``, a realistic heavier trial: the same pipeline over N copies of the questions, the corpus
and the judgments (N x 159 questions against N x 371 passages; each copy's ids are suffixed, so every question
keeps its own relevant passages), in a fresh index folder, so that each trial does about N^2 times the retrieval
and N times the scoring. The trials still take their settings from the example.

The project is byte-compiled first (``scripts/bytecode.py``), so every command starts as an installed package's
would, without compiling the project's modules again (where PYTHONDONTWRITEBYTECODE is set).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ["examples/sweep_retrieval.yaml", "--grid", "retriever.top_k=[1, 2, 3, 5, 10, 20]"]
PARAMETERS = ROOT / "examples" / "parameters" / "sweep_retrieval_pipeline_parameter.yaml"
TRIALS = 12


def environment() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1",
        "ULTRA_READ_ROOTS": tempfile.gettempdir(),
    }


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_sweep(args: list[str], out: Path, storage: Any = None) -> dict[str, float]:
    """Run ``ultra sweep ARGS`` (in the project folder) and time it in phases from its study."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    cpu, started = cpu_of_children(), time.time()
    done = subprocess.run([sys.executable, str(ROOT / "ultra.py"), "sweep", *args], cwd=ROOT, env=environment(),
                          capture_output=True)  # fmt: skip
    ended = time.time()
    if done.returncode != 0:
        raise SystemExit(f"ultra sweep {' '.join(args)} failed ({done.returncode}):\n{done.stderr.decode()[-3000:]}")
    rows = json.loads((out / "sweep.json").read_text(encoding="utf-8"))["rows"]
    assert len(rows) == TRIALS and all(row["status"] == "ok" for row in rows), rows
    if storage is None:  # --workers' own: a journal file in the sweep folder
        storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(out / "study.journal")))
    study = optuna.load_study(study_name="bench", storage=storage)
    trials = [t for t in study.get_trials() if t.state == optuna.trial.TrialState.COMPLETE]
    first = min(t.datetime_start.timestamp() for t in trials)
    last = max(t.datetime_complete.timestamp() for t in trials)
    return {
        "seconds": ended - started,
        "startup": first - started,
        "trials": last - first,
        "finish": ended - last,
        "trial_work": sum(t.user_attrs["ultra"]["wall_seconds"] for t in trials),
        "cpu": cpu_of_children() - cpu,
        "storage_per_trial": statistics.median(t.user_attrs["ultra"]["storage_seconds"] for t in trials),
    }


def loaded_parameters(folder: Path, load: int) -> Path:
    """The example's parameter file over ``load`` copies of its questions, corpus and judgments (in ``folder``)."""
    data = ROOT / "data" / "rag"
    copies = {"questions.jsonl": "id", "corpus.jsonl": "id"}
    for name, key in copies.items():
        rows = [json.loads(line) for line in (data / name).read_text(encoding="utf-8").splitlines() if line.strip()]
        with open(folder / name, "w", encoding="utf-8") as out:
            for copy in range(load):
                for row in rows:
                    out.write(json.dumps({**row, key: f"{row[key]}~{copy}"}) + "\n")
    lines = (data / "qrels.trec").read_text(encoding="utf-8").split("\n")
    qrels = [line.split() for line in lines if line.strip()]
    (folder / "qrels.trec").write_text(
        "".join(f"{q}~{c} {it} {d}~{c} {rel}\n" for c in range(load) for q, it, d, rel in qrels), encoding="utf-8"
    )
    params = yaml.safe_load(PARAMETERS.read_text(encoding="utf-8"))
    params["benchmark"]["benchmark"]["path"] = str(folder / "questions.jsonl")
    params["retriever"].update(corpus_path=str(folder / "corpus.jsonl"), index_path=str(folder / "index"))
    params["custom"]["qrels_path"] = params["evaluation"]["qrels_path"] = str(folder / "qrels.trec")
    path = folder / "parameters.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return path


def sitting(work: Path, workers: list[int], load: int | None) -> dict[str, dict[str, float]]:
    """One sitting: ``--workers W`` for each W (a journal file); then the last W on SQLite, and two workers on each
    database server installed."""
    extra = ["--param", str(loaded_parameters(work, load))] if load else []
    found: dict[str, dict[str, float]] = {}
    for count in workers:
        out = work / f"w{count}"
        found[f"w{count}"] = timed_sweep(
            [*EXAMPLE, *extra, "--workers", str(count), "--output-dir", str(out), "--study", "bench"], out
        )
    if load:
        return found
    out, url = work / "sqlite", f"sqlite:///{work / 'sqlite' / 'study.db'}"
    args = [*EXAMPLE, "--workers", str(workers[-1]), "--storage", url, "--study", "bench", "--output-dir", str(out)]
    found[f"sqlite_w{workers[-1]}"] = timed_sweep(args, out, url)
    sys.path.insert(0, str(ROOT))
    from tests.support import mysql, postgres

    for kind, support in (("postgresql", postgres), ("mysql", mysql)):
        if support.binaries() is None:
            continue
        password = "bench-" + os.urandom(6).hex()
        os.environ["ULTRA_BENCH_DB"] = password
        with support.server(password) as server:
            url = server.url("${ULTRA_BENCH_DB}")
            out = work / kind
            args = [*EXAMPLE, "--workers", "2", "--storage", url, "--study", "bench", "--output-dir", str(out)]
            found[f"{kind}_w2"] = timed_sweep(args, out, url.replace("${ULTRA_BENCH_DB}", password))
    return found


def _busy() -> None:
    """Allocation-heavy Python work, as a trial's (dicts, lists, strings)."""
    for _ in range(12):
        [{str(n): (n, [n]) for n in range(2000)} for _ in range(20)]


def parallel_efficiency(workers: int, repeats: int = 3) -> float:
    """One process's time for ``_busy`` over its time when ``workers`` processes run it at once (median)."""
    import multiprocessing

    def timed(count: int) -> float:
        processes = [multiprocessing.Process(target=_busy) for _ in range(count)]
        started = time.perf_counter()
        for process in processes:
            process.start()
        for process in processes:
            process.join()
        return time.perf_counter() - started

    return statistics.median(timed(1) / timed(workers) for _ in range(repeats))


def schedule_bound(run: dict[str, float], workers: int) -> float:
    """The wall time ``run`` could take at the CPU it used if no core were idle between its start-up and its finish:
    those two phases as they were (one process works in each), the rest of its CPU seconds spread over ``workers``
    cores."""
    serial = run["startup"] + run["finish"]
    return serial + max(0.0, run["cpu"] - serial) / workers


def bench(workers: list[int], repeats: int, load: int | None) -> dict:
    """Medians over ``repeats`` sittings of every phase, the ratio of the last W to the first, and the bound."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from bytecode import byte_compile_project

    byte_compile_project()
    sittings = []
    for repeat in range(repeats):
        with tempfile.TemporaryDirectory(prefix="sweep-bench-") as folder:
            sittings.append(sitting(Path(folder), workers, load))
        shown = {run: f"{v['seconds']:.2f} s" for run, v in sittings[-1].items()}
        print(f"repeat {repeat + 1}: {shown}", file=sys.stderr)
    medians = {
        run: {key: round(statistics.median(s[run][key] for s in sittings), 4) for key in sittings[0][run]}
        for run in sittings[0]
    }
    one, many = medians[f"w{workers[0]}"], medians[f"w{workers[-1]}"]
    fixed = one["startup"] + one["finish"]
    summary = {
        "ratio": round(many["seconds"] / one["seconds"], 3),
        "fixed_seconds_one_worker": round(fixed, 3),
        "fixed_bound": round((fixed + one["trials"] / workers[-1]) / (fixed + one["trials"]), 3),
        "cpu_bound": round(many["cpu"] / workers[-1] / one["seconds"], 3),
        "schedule_bound": round(schedule_bound(many, workers[-1]) / one["seconds"], 3),
        "parallel_efficiency": round(parallel_efficiency(workers[-1]), 3),
    }
    load_average = os.getloadavg()
    return {"repeats": repeats, "trials": TRIALS, "trial_load": load or 1, "load_average": load_average,
            "medians": medians, "summary": summary}  # fmt: skip
