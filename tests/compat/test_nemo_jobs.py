"""NeMo Evaluator RAG jobs under `ultra build` / `ultra run`: the four example configs build, retrieval-only
jobs equal trec_eval on the same data, judge metrics come from the local OpenAI-compatible stub, and
results.json has NeMo's layout key by key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.compat.nemo_support import CONFIGS, EXAMPLES, copy_examples, edited_job, run_job, ultra
from ultra_trec import evaluate

RETRIEVAL = ("recall_5", "ndcg_cut_5", "recall_10", "ndcg_cut_10")


@pytest.mark.parametrize("name", CONFIGS)
def test_each_example_config_builds(name: str, tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)
    result = ultra("build", str(folder / f"{name}.json"), tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    job = json.loads((folder / f"{name}.json").read_text())
    (task,) = job["tasks"].values()
    pipeline = yaml.safe_load((folder / "compiled" / f"{name}.yaml").read_text())
    params = yaml.safe_load((folder / "compiled" / "parameters" / f"{name}_parameter.yaml").read_text())
    tools = [step if isinstance(step, str) else next(iter(step)) for step in pipeline["pipeline"]]
    assert tools[0] == "benchmark.get_data"
    assert ("retriever.retriever_search" in tools) == (task["type"] != "ragas")
    assert ("generation.generate" in tools) == (task["type"] != "ragas")  # every config asks an answer metric
    judge = params["judge"]["judge_llm"]
    endpoint = task["params"]["judge_llm"]["api_endpoint"]
    assert judge["base_url"] == endpoint["url"].removesuffix("/chat/completions")
    assert (judge["model_id"], judge["api_key"]) == (endpoint["model_id"], endpoint["api_key"])
    limits = task["params"]
    assert (judge["timeout"], judge["max_retries"], judge["max_workers"]) == (
        limits["judge_timeout"], limits["judge_max_retries"], limits["judge_max_workers"],
    )  # fmt: skip
    assert judge["embedding_model"] == task["params"]["judge_embeddings"]["api_endpoint"]["model_id"]
    for metric in task["metrics"].values():
        if metric["type"] in RETRIEVAL:
            assert metric["type"] in params["evaluation"]["ir_metrics"]
        elif metric["type"] == "answer_similarity":
            assert "evaluation.semantic_similarity" in tools
            assert params["evaluation"]["similarity_embeddings"]["model_id"] == "nvidia/nv-embedqa-e5-v5"
        else:
            assert f"judge.{metric['type']}" in tools
    assert params["benchmark"]["benchmark"]["path"].startswith(str(folder))


def beir_qrels(folder: Path) -> dict[str, dict[str, int]]:
    """The BEIR qrels TSV read here, apart from the translation: header row, then query-id, corpus-id, score."""
    header, *rows = (folder / "qrels/test.tsv").read_text().splitlines()
    assert header.split("\t") == ["query-id", "corpus-id", "score"]
    qrels: dict[str, dict[str, int]] = {}
    for row in rows:
        qid, docid, score = row.split("\t")
        qrels.setdefault(qid, {})[docid] = int(score)
    return qrels


def squad_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Each SQuAD question judged relevant to its own paragraph (the paragraph's id is the translation's)."""
    data = json.loads(path.read_text())["data"]
    return {
        qa["id"]: {f"p{a}_{p}": 1}
        for a, article in enumerate(data)
        for p, paragraph in enumerate(article["paragraphs"])
        for qa in paragraph["qas"]
    }


def check_layout(results: dict, task: str, expected: dict[str, float]) -> None:
    """NeMo's result layout, key by key, each value equal to ``expected``."""
    assert list(results) == ["tasks", "groups"]
    assert list(results["tasks"]) == [task]
    assert list(results["groups"]) == ["evaluation"]
    for block in (results["tasks"][task], results["groups"]["evaluation"]):
        assert list(block) == ["metrics"]
        assert list(block["metrics"]) == ["evaluation"]
        assert list(block["metrics"]["evaluation"]) == ["scores"]
        scores = block["metrics"]["evaluation"]["scores"]
        assert list(scores) == list(expected)
        for label, value in expected.items():
            assert list(scores[label]) == ["value"]
            assert scores[label]["value"] == pytest.approx(value, abs=1e-12), label


@pytest.mark.parametrize(
    ("name", "qrels_of", "limit"),
    [("beir_standard", "beir", None), ("custom_data", "squad", None), ("beir_standard", "beir", 5)],
)
def test_retrieval_only_job_equals_evaluate_trec(name: str, qrels_of: str, limit: int | None, tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)

    def retrieval_only(job: dict, task: dict) -> None:
        task["metrics"] = {
            "r5": {"type": "recall_5"}, "n5": {"type": "ndcg_cut_5"}, "r1": {"type": "recall_1"},
            "n10": {"type": "ndcg_cut_10"},
        }  # fmt: skip

    job = edited_job(folder, name, f"{name}_retrieval", retrieval_only)
    run = run_job(job, tmp_path, {"benchmark": {"benchmark": {"limit": limit or -1}}})  # only their judgments count
    memory = json.loads((run / "memory.json").read_text())
    qrels = beir_qrels(folder / "data/beir") if qrels_of == "beir" else squad_qrels(folder / "data/squad.json")
    assert len(memory["id_ls"]) == (limit or len(qrels))
    qrels = {qid: qrels[qid] for qid in memory["id_ls"]}
    reference = evaluate(qrels, str(run / memory["run_path"]), ["recall@5", "ndcg@5", "recall@1", "ndcg@10"])
    mean = reference.aggregate
    expected = {"r5": mean["recall@5"], "n5": mean["ndcg@5"], "r1": mean["recall@1"], "n10": mean["ndcg@10"]}
    assert 0 < expected["r1"] < 1  # a run that is neither empty nor perfect
    (task_name,) = json.loads(job.read_text())["tasks"]
    check_layout(json.loads((run / "results.json").read_text()), task_name, expected)
    assert memory["counts"]["num_q"] == len(qrels)
    steps = [step for step, _ in json.loads((run / "timings.json").read_text())["steps"]]
    assert "generation.generate" not in steps  # no metric needs answers: nothing is generated
    assert yaml.safe_load((run / "pipeline.yaml").read_text())["pipeline"][0] == "benchmark.get_data"
    assert yaml.safe_load((run / "parameters.yaml").read_text())["evaluation"]["names"] == "trec_eval"


def test_the_docs_metric_table_is_the_translation_table() -> None:
    from ultra_client.compat.nemo.metrics import METRICS

    text = (EXAMPLES.parents[2] / "docs/compat-nemo.md").read_text()
    table = text.split("<!-- metric table: checked against ultra_client/compat/nemo/translation.yaml -->\n")[1]
    rows = [line for line in table.split("\n\n")[0].splitlines()[2:]]
    expected = [
        f"| `{name.replace('{k}', '<k>')}` | `{spec.step}` | {', '.join(spec.needs)} | `{spec.setting}` | "
        f"`{spec.score.replace('{k}', '<k>')}` |"
        for name, spec in METRICS.items()
    ]
    assert rows == expected
