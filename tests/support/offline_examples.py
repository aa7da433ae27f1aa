"""The LLM examples on the local SmolLM2, cut to 2 queries: their parameter files and data subsets.

``offline_example_params(name, tmp_path)`` writes ``examples/parameters/<name>_parameter.yaml`` passed
through ``ultra_client.offline_params`` (every LLM on SmolLM2), with its data cut to the first 2 queries of
``data/umbrela`` (queries, run lines, answers), UMBRELA depth 2 and every output under ``tmp_path``.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import ROOT
from ultra_client.offline_params import offline

QUERIES = 2
DEPTH = 2


def _subset_jsonl(source: Path, target: Path, qids: set[str]) -> str:
    lines = [line for line in source.read_text(encoding="utf-8").splitlines() if json.loads(line)["qid"] in qids]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(target)


def two_queries(tmp_path: Path) -> tuple[dict[str, str], set[str]]:
    """The data files cut to the first 2 queries, under ``tmp_path / "data"``: {setting: path}, the qids."""
    folder = tmp_path / "data"
    folder.mkdir(parents=True, exist_ok=True)
    queries = (ROOT / "data/umbrela/queries.jsonl").read_text(encoding="utf-8").splitlines()[:QUERIES]
    qids = {json.loads(line)["qid"] for line in queries}
    paths = {"queries_path": _subset_jsonl(ROOT / "data/umbrela/queries.jsonl", folder / "queries.jsonl", qids)}
    runs = []
    for name in ("bm25", "tfidf", "title"):
        run = ROOT / f"data/umbrela/run.{name}.trec"
        target = folder / run.name
        target.write_text(
            "".join(line + "\n" for line in run.read_text().splitlines() if line.split()[0] in qids), encoding="utf-8"
        )
        runs.append(str(target))
    paths["run_path"], paths["run_paths"] = runs[0], runs
    paths["nuggets_answers"] = _subset_jsonl(ROOT / "data/nuggets/answers.jsonl", folder / "nuggets.jsonl", qids)
    paths["trec_rag_answers"] = _subset_jsonl(ROOT / "data/trec_rag/answers.jsonl", folder / "trec_rag.jsonl", qids)
    return paths, qids


def offline_example_params(name: str, tmp_path: Path) -> Path:
    """The offline parameter file of ``examples/<name>.yaml`` on 2 queries (see the module)."""
    raw = yaml.safe_load((ROOT / "examples/parameters" / f"{name}_parameter.yaml").read_text(encoding="utf-8"))
    params = offline(raw)
    paths, _ = two_queries(tmp_path)
    judge = params["judge"]
    judge.update(queries_path=paths["queries_path"], run_path=paths["run_path"], depth=DEPTH)
    judge.update(judge_cache="", save_path=str(tmp_path / "output/judge"))
    if "run_paths" in judge:
        judge["run_paths"] = paths["run_paths"]
    if "answers_path" in judge:
        judge["answers_path"] = paths["trec_rag_answers" if name == "trec_rag" else "nuggets_answers"]
    if "benchmark" in params:
        params["benchmark"]["benchmark"]["path"] = paths["trec_rag_answers"]
    if "evaluation" in params and "save_path" in params["evaluation"]:
        params["evaluation"]["save_path"] = str(tmp_path / "output/evaluation")
    target = tmp_path / f"{name}_offline.yaml"
    target.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return target
