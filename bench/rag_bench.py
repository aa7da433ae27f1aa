"""Time the RAG side: BM25 index and search throughput on data/rag/corpus.jsonl, and `ultra run rag_full`.

    python bench/rag_bench.py              # BM25 only (seconds)
    python bench/rag_bench.py --pipeline   # also the whole offline pipeline (minutes with SmolLM2 on CPU)

The pipeline run uses examples/parameters/rag_full_parameter.yaml with a fresh index folder and the
generation cache switched off, so every step does its full work; its per-step split comes from the
run folder's timings.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def bm25_numbers(repeats: int) -> dict[str, float]:
    """Index build (passages/s) and search (queries/s, top 10) on the shipped corpus and questions, through the
    retriever's tools (``retriever_index``, ``retriever_search``: the search also writes its TREC run)."""
    from bench.tools import call

    corpus = ROOT / "data/rag/corpus.jsonl"
    questions = [json.loads(line)["question"] for line in (ROOT / "data/rag/questions.jsonl").read_text().splitlines()]
    import bm25s  # noqa: F401  (import time is not index time)

    builds, searches = [], []
    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # the index goes to a temporary folder, outside output/
    os.environ["ULTRA_READ_ROOTS"] = tempfile.gettempdir()  # tools read back what they wrote
    with tempfile.TemporaryDirectory() as folder:
        where = {"backend": "bm25", "index_path": f"{folder}/index"}
        for _ in range(repeats):
            started = time.perf_counter()
            meta = call("retriever", "retriever_index", corpus_path=str(corpus), overwrite=True, **where)["index_info"]
            builds.append(time.perf_counter() - started)
            started = time.perf_counter()
            call("retriever", "retriever_search", q_ls=questions, top_k=10, save_path=f"{folder}/runs", **where)
            searches.append(time.perf_counter() - started)
    best_build, best_search = min(builds), min(searches)
    return {
        "passages": meta["passages"],
        "queries": len(questions),
        "index_seconds": round(best_build, 4),
        "index_passages_per_s": round(meta["passages"] / best_build),
        "search_seconds": round(best_search, 4),
        "search_queries_per_s": round(len(questions) / best_search),
    }


def pipeline_numbers() -> dict[str, object]:
    """Wall time of `python ultra.py run examples/rag_full.yaml` (whole process) and its per-step split."""
    import yaml

    with tempfile.TemporaryDirectory() as folder:
        params = yaml.safe_load((ROOT / "examples/parameters/rag_full_parameter.yaml").read_text())
        params["retriever"]["index_path"] = f"{folder}/index"
        params["generation"]["generation_cache"] = ""
        param_file = Path(folder) / "params.yaml"
        param_file.write_text(yaml.safe_dump(params))
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "ultra.py",
                "run",
                "examples/rag_full.yaml",
                "--param",
                str(param_file),
                "--output-dir",
                f"{folder}/runs",
            ],
            cwd=ROOT,
            check=True,
            capture_output=True,
            env={
                **os.environ,
                "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1",
                "ULTRA_READ_ROOTS": tempfile.gettempdir(),
            },  # index and runs in a temporary folder
        )
        wall = time.perf_counter() - started
        (run,) = Path(folder, "runs").iterdir()
        timings = json.loads((run / "timings.json").read_text())
    return {
        "questions": params["benchmark"]["benchmark"]["limit"],
        "wall_seconds": round(wall, 1),
        "steps_seconds": {name: round(seconds, 2) for name, seconds in timings["steps"]},
        "start_up_and_other_seconds": round(wall - sum(s for _, s in timings["steps"]), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline", action="store_true", help="also time the whole offline pipeline")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    report = {"bm25": bm25_numbers(args.repeats)}
    if args.pipeline:
        report["rag_full"] = pipeline_numbers()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
