"""Every step that can take more than 10 s shows its own progress in ``ultra run``'s bar: a real ``ultra run``
subprocess, its stderr on a terminal, runs a pipeline of the long steps against the local OpenAI-compatible stub
(and a tiny cross-encoder for HHEM), and each step's bar counts its units up to the total (``(k/N)`` ... ``(N/N)``).

"Long" is every tool that talks to a model, an LLM endpoint or the system under test (MCP's ``open_world`` hint):
with a real model each takes seconds per item. ``long_tools`` below names where each one's bar is checked; a new
open-world tool fails the first test until it is added. Local steps that grow with the data report too: the
pipeline checks retriever_index (BM25) and evaluate_trec; retriever_embed and evaluate_mtrag (BERTScore) report
the same way (ultra_kit.progress)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.support.openai_stub import OpenAIStub, hashed_grade
from tests.support.terminal import on_a_terminal
from tests.synth.conftest import scripted, small_corpus

SERVERS = ("synth", "judge", "evaluation", "generation", "target", "benchmark", "retriever")
RUN = ["synth.generate_queries", "judge.faithfulness", "judge.hallucination_judge", "judge.umbrela_judge",
       "judge.fill_qrels", "evaluation.semantic_similarity", "generation.generate", "target.ask"]  # fmt: skip
LOCAL = ["retriever.retriever_index", "evaluation.evaluate_trec"]  # no model: their work grows with the data
ELSEWHERE = {"judge.nuggetize": "tests/judge/test_progress.py", "judge.rubric_judge": "tests/judge/test_progress.py"}
SAME_CODE = "judge.faithfulness's code (servers/judge/answers/run.py), the offline toxicity classifier's too"


def long_tools() -> dict[str, str]:
    """Each long tool: this file's pipeline (RUN), or the test that checks its progress the same way."""
    from servers.judge.answers.registry import JUDGES

    answer_judges = {f"judge.{judge.name}" for judge in JUDGES} - {"judge.faithfulness"}
    return {**dict.fromkeys(RUN, "RUN"), **dict.fromkeys(answer_judges, SAME_CODE), **ELSEWHERE}


BAR = re.compile(r"^  (\w+\.\w+) \[[#.]+\]\s+\d+% \((\d+)/(\d+)\)")

PIPELINE = """servers:
  synth: servers/synth
  benchmark: servers/benchmark
  evaluation: servers/evaluation
  judge: servers/judge
  generation: servers/generation
  target: servers/target
  retriever: servers/retriever
pipeline:
  - synth.generate_queries
  - benchmark.get_data
  - evaluation.mtrag_judge_inputs
  - judge.faithfulness: {input: {q_ls: inquiry_ls, ret_psg: passage_ls}}
  - judge.hallucination_judge: {input: {q_ls: inquiry_ls, ret_psg: passage_ls}}
  - judge.umbrela_judge
  - judge.fill_qrels
  - evaluation.semantic_similarity
  - generation.generate: {input: {prompt_ls: q_ls}}
  - target.ask
  - retriever.retriever_init
  - retriever.retriever_index
  - evaluation.evaluate_trec
"""


def open_world_tools() -> set[str]:
    from ultra_kit.factory import ServerSpec

    found = set()
    for server in SERVERS:
        module = __import__(f"servers.{server}.server", fromlist=["SPEC"])
        spec: ServerSpec = module.SPEC
        for fn in spec.load_tools():
            if (getattr(fn, "__tool_hints__", None) or {}).get("open_world"):
                found.add(f"{server}.{fn.__name__}")
    return found


def test_every_open_world_tool_has_its_progress_checked() -> None:
    assert open_world_tools() == set(long_tools())


def answer_anything(request: dict) -> str:
    """synth's prompts, the RAGAS judges', then UMBRELA's grade; generation gets a plain answer."""
    from tests.judge.test_answer_judges_ragas import responder as ragas

    for respond in (scripted(), ragas):
        try:
            reply = respond(request)
        except (AttributeError, IndexError, KeyError):  # not this responder's prompt
            continue
        if reply and reply != "unexpected prompt":
            return reply
    return hashed_grade(request)


@pytest.mark.slow
def test_each_long_step_of_ultra_run_shows_its_bar_counting_to_the_total(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from tests.judge.test_hallucination import build_model

    model = build_model(tmp_path / "hhem", {0: "hallucinated", 1: "consistent"})
    corpus = small_corpus(tmp_path / "corpus.jsonl")
    pipeline = tmp_path / "long.yaml"
    pipeline.write_text(PIPELINE)
    with OpenAIStub(responder=answer_anything) as stub:
        llm = {"backend": "openai", "base_url": stub.base_url, "model_id": "stub", "api_key": "", "max_retries": 1}
        params = {
            "synth": {"synth_llm": llm, "synth_cache": "", "corpus_path": str(corpus),
                      "dataset_dir": str(tmp_path / "risk"),
                      "n_per_kind": {"grounded": 2, "off_topic": 1, "jailbreak": 1}},
            "benchmark": {"benchmark": {"path": "data/sample_qa.jsonl", "limit": 6, "key_map": {
                "q_ls": "question", "gt_ls": "golden_answers", "pred_ls": "pred_answer", "ctx_ls": "contexts",
                "id_ls": "id"}}},
            "evaluation": {"similarity_embeddings": {**llm, "model_id": "stub-embed"},
                           "save_path": str(tmp_path / "ev")},
            "judge": {"judge_llm": llm, "judge_cache": "", "save_path": str(tmp_path / "judge"), "depth": 2,
                      "hhem_model": str(model), "hhem_batch_size": 2, "hhem_device": "cpu", "fill_budget": 6,
                      "max_failed_fraction": 1.0},
            "generation": {"generation_llm": llm, "generation_cache": "", "save_path": str(tmp_path / "gen")},
            "target": {"target": {"kind": "python", "function": "examples/targets/rag.py:answer"},
                       "save_path": str(tmp_path / "target")},
            "retriever": {"index_path": str(tmp_path / "index"), "overwrite": True},
        }  # fmt: skip
        (tmp_path / "long_parameter.yaml").write_text(yaml.safe_dump(params))
        args = ["run", str(pipeline), "--param", str(tmp_path / "long_parameter.yaml"), "--output-dir",
                str(tmp_path / "runs")]  # fmt: skip
        status, _, screen = on_a_terminal(args, ROOT)  # a terminal: every update redrawn, none throttled
    assert status == 0, screen[-4000:]
    counts: dict[str, list[tuple[int, int]]] = {}
    for line in re.split(r"[\r\n]+", screen.replace("\x1b[K", "")):
        match = BAR.match(line)
        if match:
            counts.setdefault(match.group(1), []).append((int(match.group(2)), int(match.group(3))))
    run_steps = set(RUN)
    for step in run_steps:
        seen = counts.get(step)
        assert seen, f"{step} drew no bar with a count: {screen[-3000:]}"
        done_units, total = seen[-1]
        assert total >= 6 and done_units == total, (step, seen)  # it counted its units (6 items at least) to the end
        if step != "evaluation.semantic_similarity":  # it counts batches of 64 texts: here one
            assert any(0 < d < t for d, t in seen), (step, seen)  # a count on the way, not only the end
    for step in LOCAL:
        seen = counts.get(step)
        assert seen and seen[-1][0] == seen[-1][1] >= 1, (step, seen, screen[-3000:])
    timings = json.loads(next((tmp_path / "runs").glob("long_*/timings.json")).read_text())
    assert {name for name, _ in timings["steps"]} >= run_steps
