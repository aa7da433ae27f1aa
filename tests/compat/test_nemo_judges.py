"""A NeMo ragas job's judge metrics against the local OpenAI-compatible stub, values computed by hand.

The job holds a literal api_key: it reaches the stub, and no file of the compilation or of the run holds it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from servers.judge.answers.judges.ragas import cosine
from tests.compat.nemo_support import copy_examples, edited_job, run_job
from tests.judge.test_answer_judges_ragas import responder
from tests.support.openai_stub import OpenAIStub, content_of, embed_text

KEY = "sk-nemo-literal-0123456789"
ITEMS = [
    # question, contexts, answer, reference
    ("What is A?", ["useful alpha", "noise"], "a yes; b no; 2 1 1", "It is found here. It is missing."),
    ("Why B?", ["noise", "useful beta"], "c yes; 1 0 1", "It was found. Also found again."),
]
METRICS = (
    "faithfulness", "answer_relevancy", "answer_correctness", "answer_similarity", "context_precision", "context_recall"
)  # fmt: skip


def expected_scores() -> dict[str, float]:
    """Each metric's mean over the items, by hand from the stub's scripted verdicts (see ``responder``)."""
    relevancy = [
        sum(cosine(embed_text(q), embed_text(f"{a} {i}?")) for i in range(3)) / 3 for q, _, a, _ in ITEMS
    ]  # fmt: skip
    similarity = [cosine(embed_text(a), embed_text(r)) for _, _, a, r in ITEMS]
    per_item = {
        "faithfulness": [1 / 3, 1 / 2],  # statements split at ';', supported when they say "yes"
        "answer_relevancy": relevancy,
        "answer_correctness": [0.75 * 2 / 3 + 0.25 * s for s in similarity],  # TP FP FN = 2 1 1 and 1 0 1: F1 2/3
        "answer_similarity": similarity,
        "context_precision": [1.0, 0.5],  # useful at rank 1; useful at rank 2
        "context_recall": [0.5, 1.0],  # reference sentences with "found"
    }
    return {name: sum(values) / len(values) for name, values in per_item.items()}


def write_job(tmp_path: Path, base_url: str) -> Path:
    data = tmp_path / "job" / "answers.json"
    data.parent.mkdir(parents=True)
    columns = {"question": [i[0] for i in ITEMS], "contexts": [i[1] for i in ITEMS], "answer": [i[2] for i in ITEMS]}
    data.write_text(json.dumps({**columns, "ground_truths": [[i[3]] for i in ITEMS]}))
    endpoint = {"url": f"{base_url}/chat/completions", "model_id": "judge-model", "api_key": KEY}
    embeddings = {"url": f"{base_url}/embeddings", "model_id": "embedder", "api_key": KEY}
    job = {
        "type": "rag", "name": "stub-judged", "namespace": "tests",
        "tasks": {"judged": {
            "type": "ragas", "dataset": {"files_url": "file://answers.json"},
            "params": {"judge_llm": {"api_endpoint": endpoint}, "judge_embeddings": {"api_endpoint": embeddings},
                       "judge_timeout": 30, "judge_max_retries": 1, "judge_max_workers": 2},
            "metrics": {name: {"type": name} for name in METRICS},
        }},
    }  # fmt: skip
    path = tmp_path / "job" / "judged.json"
    path.write_text(json.dumps(job, indent=1))
    return path


def test_judge_metrics_from_the_stub(tmp_path: Path) -> None:
    with OpenAIStub(responder=responder) as stub:
        job = write_job(tmp_path, stub.base_url)
        run = run_job(job, tmp_path, {"judge": {"judge_llm": {"max_workers": 1}}})
        served = list(stub.served)
    assert served and {s.authorization for s in served} == {f"Bearer {KEY}"}
    assert stub.max_in_flight == 1  # the overlay's judge_llm.max_workers, merged into the job's judge_llm
    results = json.loads((run / "results.json").read_text())
    scores = results["groups"]["evaluation"]["metrics"]["evaluation"]["scores"]
    assert list(scores) == list(METRICS)
    for name, value in expected_scores().items():
        assert scores[name]["value"] == pytest.approx(value, abs=1e-9), name
    assert results["tasks"]["judged"] == results["groups"]["evaluation"]
    params = yaml.safe_load((run / "parameters.yaml").read_text())
    assert params["judge"]["judge_llm"]["api_key"] == "${NEMO_JUDGE_LLM_API_KEY}"
    assert params["judge"]["judge_llm"]["base_url"] == stub.base_url and params["judge"]["judge_llm"]["timeout"] == 30
    written = [p for base in (run, tmp_path / "job" / "compiled", tmp_path / "judge") for p in base.rglob("*")]
    assert [p for p in written if p.is_file() and KEY in p.read_text(errors="replace")] == []


JUDGE_MARKERS = ('{"statements"', "Statements (", "useful for arriving", "Reference sentences (", '"noncommittal"')


def answering_responder(request) -> str:
    """Judge prompts get the scripted verdicts; a generation prompt gets two statements, one supported."""
    text = content_of(request)
    if any(marker in text for marker in JUDGE_MARKERS):
        return responder(request)
    return "Here it is. \\boxed{it holds yes; it fails no}"


def test_beir_job_retrieves_generates_and_judges(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path)
    with OpenAIStub(responder=answering_responder) as stub:

        def to_stub(_, task):
            task["params"]["judge_llm"]["api_endpoint"].update(url=f"{stub.base_url}/chat/completions", api_key="")
            task["params"]["judge_embeddings"]["api_endpoint"].update(url=f"{stub.base_url}/embeddings", api_key="")
            task["metrics"] = {name: {"type": name} for name in ("recall_5", "faithfulness", "answer_relevancy")}

        job = edited_job(folder, "beir_standard", "stubbed", to_stub)
        llm = {"backend": "openai", "base_url": stub.base_url, "model_id": "generator", "api_key": ""}
        run = run_job(job, tmp_path, {"generation": {"generation_llm": llm}})
        generated = [body for body in stub.chat_requests() if body["model"] == "generator"]
    memory = json.loads((run / "memory.json").read_text())
    assert len(generated) == len(memory["q_ls"]) == 8
    assert memory["pred_ls"] == ["it holds yes; it fails no"] * 8  # the boxed answer, extracted
    scores = json.loads((run / "results.json").read_text())["groups"]["evaluation"]["metrics"]["evaluation"]["scores"]
    assert list(scores) == ["recall_5", "faithfulness", "answer_relevancy"]
    assert scores["faithfulness"]["value"] == pytest.approx(0.5)  # one of the two statements says "yes"
    answer = memory["pred_ls"][0]
    relevancy = [sum(cosine(embed_text(q), embed_text(f"{answer} {i}?")) for i in range(3)) / 3 for q in memory["q_ls"]]
    assert scores["answer_relevancy"]["value"] == pytest.approx(sum(relevancy) / len(relevancy))
    assert scores["recall_5"]["value"] == pytest.approx(memory["retrieval_scores"]["recall_5"])
    assert 0 < scores["recall_5"]["value"] <= 1
