"""examples/rag_full.yaml end to end through `ultra run` (real stdio servers).

The fast variant points generation at the local OpenAI-compatible stub, which answers each question
with its golden answer inside \\boxed{}: every step's wiring is then checked by exact scores. The
slow variant runs the shipped offline defaults (BM25 + SmolLM2 on CPU).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, in_background
from tests.support.openai_stub import OpenAIStub, content_of

PIPELINE = ROOT / "examples/rag_full.yaml"
PARAMS = ROOT / "examples/parameters/rag_full_parameter.yaml"


def golden_by_question() -> dict[str, str]:
    rows = [json.loads(line) for line in (ROOT / "data/rag/questions.jsonl").read_text().splitlines()]
    return {row["question"]: row["golden_answers"][0] for row in rows}


def params_in(tmp_path: Path, limit: int, **generation) -> Path:
    params = yaml.safe_load(PARAMS.read_text())
    params["benchmark"]["benchmark"]["limit"] = limit
    params["retriever"].update(index_path=str(tmp_path / "index"), save_path=str(tmp_path / "retriever"))
    params["generation"].update(save_path=str(tmp_path / "generation"), generation_cache="", **generation)
    params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def run_folder(tmp_path: Path) -> Path:
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return folder


def check_retrieval(memory: dict, folder: Path) -> None:
    """The retrieval scores follow from the returned ids and the shipped qrels."""
    qrels: dict[str, set[str]] = {}
    for line in (ROOT / "data/rag/qrels.trec").read_text().splitlines():
        qid, _, docid, grade = line.split()
        if int(grade) >= 1:
            qrels.setdefault(qid, set()).add(docid)
    judged = [(qid, ids) for qid, ids in zip(memory["id_ls"], memory["ret_ids"], strict=True) if qid in qrels]
    p1 = sum(bool(ids) and ids[0] in qrels[qid] for qid, ids in judged) / len(judged)
    assert memory["retrieval_scores"]["P@1"] == pytest.approx(p1)
    assert memory["counts"]["num_q"] == len(judged)
    run_lines = (folder / memory["run_path"]).read_text().splitlines()  # relative to the run folder
    assert len(run_lines) == sum(len(ids) for ids in memory["ret_ids"])


def test_rag_full_fast_with_the_stub_llm(tmp_path: Path) -> None:
    golden = golden_by_question()

    def answer(request: dict) -> str:
        question = content_of(request).rsplit("Question: ", 1)[1].strip()
        return f"Let me think. \\boxed{{{golden[question]}}}"

    with OpenAIStub(answer) as stub:
        llm = {"backend": "openai", "base_url": stub.base_url, "model_id": "stub", "api_key": "", "reasoning": False}
        params = params_in(tmp_path, 4, generation_llm=llm)
        result = run_ultra(
            "run", str(PIPELINE), "--param", str(params), "--output-dir", str(tmp_path / "runs"), cwd=ROOT, timeout=240
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert len(stub.chat_requests()) == 4
    folder = run_folder(tmp_path)
    memory = json.loads((folder / "memory.json").read_text())
    assert memory["pred_ls"] == [golden[q].strip() for q in memory["q_ls"]]
    assert memory["answer_scores"]["avg_em"] == 1.0 and memory["answer_scores"]["avg_f1"] == 1.0
    assert memory["extract_info"] == {"boxed": 4, "unclosed": 0, "none": 0}
    check_retrieval(memory, folder)
    steps = [name for name, _ in json.loads((folder / "timings.json").read_text())["steps"]]
    assert steps[0] == "benchmark.get_data" and steps[-1] == "evaluation.evaluate_trec" and len(steps) == 11


def local_run(folder: Path) -> Command:
    params = params_in(folder, 1, sampling_params={"temperature": 0, "max_tokens": 16})
    return Command(("run", str(PIPELINE), "--param", str(params), "--output-dir", str(folder / "runs")), timeout=900)


@pytest.mark.slow
@in_background(local_run)
def test_rag_full_offline_with_the_local_model(background_run: Finished) -> None:
    result = background_run.done
    assert result.returncode == 0, result.stderr[-3000:]
    folder = run_folder(background_run.folder)
    memory = json.loads((folder / "memory.json").read_text())
    assert memory["generate_info"]["backend"] == "local" and memory["generate_info"]["errors"] == 0
    assert len(memory["pred_ls"]) == 1 and memory["generate_info"]["usage"]["completion_tokens"] > 0
    check_retrieval(memory, folder)
