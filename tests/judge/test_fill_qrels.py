"""fill_qrels: only the holes are judged, within the budget, the deltas, Judged@k and tau-b by hand on a tiny
pool, a rerun from the cache sends nothing, and the whole tool on data/umbrela against the local stub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers.judge.relevance.agreement import read_qrels
from servers.judge.relevance.fill import run_fill_qrels
from tests.judge.conftest import SAMPLE, call_job, llm_settings, query_and_passage
from tests.support.openai_stub import OpenAIStub
from ultra_trec.comparison import compare_runs

pytestmark = pytest.mark.anyio

# Two queries, six passages; the human qrels judge q1: d1 2, d2 0 and q2: d5 2, d4 0. Three runs, depth 3:
RUNS = {
    "A": {"q1": ["d1", "d2", "d4"], "q2": ["d5", "d4", "d2"]},  # finds the human-relevant passages
    "B": {"q1": ["d3", "d2", "d6"], "q2": ["d3", "d6", "d4"]},  # finds only unjudged ones
    "C": {"q1": ["d1", "d3", "d4"], "q2": ["d4", "d2", "d6"]},
}
# The holes: q1 {d4, d3, d6}, q2 {d2, d3, d6}. The stub grades by passage: d3 3, d6 2, d2 0, d4 0.
GRADES = {"passage d3": 3, "passage d6": 2, "passage d2": 0, "passage d4": 0}


def tiny_pool(folder: Path) -> dict[str, object]:
    (folder / "queries.jsonl").write_text('{"qid": "q1", "query": "first"}\n{"qid": "q2", "query": "second"}\n')
    (folder / "corpus.jsonl").write_text("".join(f'{{"docid": "d{i}", "text": "passage d{i}"}}\n' for i in range(1, 7)))
    (folder / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d5 2\nq2 0 d4 0\n")
    paths = []
    for name, ranking in RUNS.items():
        lines = [f"{q} Q0 {d} {r} {10 - r} {name}\n" for q, docs in ranking.items() for r, d in enumerate(docs, 1)]
        (folder / f"{name}.trec").write_text("".join(lines))
        paths.append(str(folder / f"{name}.trec"))
    return {"human_qrels_path": str(folder / "qrels.txt"), "run_paths": paths, "fill_depth": 3,
            "queries_path": str(folder / "queries.jsonl"), "corpus_path": str(folder / "corpus.jsonl"),
            "fill_measures": ["P@3"], "relevant_grade": 2, "save_path": str(folder / "out")}  # fmt: skip


def scripted(request: dict) -> str:
    return f"##final score: {GRADES[query_and_passage(request)[1]]}"


async def test_only_holes_are_judged_and_the_changes_by_hand(stub: OpenAIStub, tmp_path: Path) -> None:
    stub.responder = scripted
    result = await call_job(run_fill_qrels, **tiny_pool(tmp_path), fill_budget=None, judge_llm=llm_settings(stub))
    asked = sorted(query_and_passage(r) for r in stub.chat_requests())
    assert asked == sorted([("first", "passage d3"), ("first", "passage d4"), ("first", "passage d6"),
                            ("second", "passage d2"), ("second", "passage d3"), ("second", "passage d6")])  # fmt: skip
    assert result["fill_counts"] == {"holes": 6, "chosen": 6, "judged": 6, "failed": 0, "holes_left": 0}
    # P@3 (relevant = grade >= 2). Before: A 1/3, B 0, C (1/3 + 0)/2; after: A 1/3, B 2/3, C (2/3 + 1/3)/2.
    p3 = {run: values["P@3"] for run, values in result["per_run"].items()}
    assert p3["A"] == pytest.approx({"before": 1 / 3, "after": 1 / 3, "delta": 0})
    assert p3["B"] == pytest.approx({"before": 0, "after": 2 / 3, "delta": 2 / 3})
    assert p3["C"] == pytest.approx({"before": 1 / 6, "after": 1 / 2, "delta": 1 / 3})
    # Judged@3 before: A 2/3 (d4 and d2 unjudged), B 1/3, C 1/3; after: every top-3 document is judged.
    judged = {run: values["Judged@3"] for run, values in result["per_run"].items()}
    for run, before in (("A", 2 / 3), ("B", 1 / 3), ("C", 1 / 3)):
        assert judged[run] == pytest.approx({"before": before, "after": 1})
    assert result["kendall_tau_b"] == {"P@3": pytest.approx(-1.0)}  # A > C > B became B > C > A
    assert result["significance_flips"] == []  # two queries: no sign-flip test can reach p < 0.05
    merged = read_qrels(result["merged_qrels_path"])
    assert merged == {
        "q1": {"d1": 2, "d2": 0, "d3": 3, "d4": 0, "d6": 2},
        "q2": {"d5": 2, "d4": 0, "d2": 0, "d3": 3, "d6": 2},
    }
    origin = Path(result["origin_path"]).read_text().splitlines()
    assert origin[0] == "qid\tdocid\tgrade\torigin" and len(origin) == 7
    assert "q1\td3\t3\tumbrela_v1:stub-judge" in origin


@pytest.mark.parametrize(("budget", "expected"), [
    (2, [("q1", "d3"), ("q2", "d3")]),  # rank 1: B's d3 for q1, then for q2
    (3, [("q1", "d3"), ("q2", "d3"), ("q2", "d6")]),  # rank 2: q1's A d2, B d2 judged, C d3 taken; q2's B d6
    (0, []),
])  # fmt: skip
async def test_the_budget_is_spread_round_robin(stub: OpenAIStub, tmp_path: Path, budget: int, expected) -> None:
    stub.responder = scripted
    result = await call_job(run_fill_qrels, **tiny_pool(tmp_path), fill_budget=budget, judge_llm=llm_settings(stub))
    assert stub.request_count == len(expected)
    assert result["fill_counts"]["chosen"] == len(expected) and result["fill_counts"]["holes_left"] == 6 - len(expected)
    saved = json.loads(Path(result["result_path"]).read_text())
    assert [(g["qid"], g["docid"]) for g in saved["llm_grades"]] == expected


async def test_a_rerun_sends_no_request(stub: OpenAIStub, tmp_path: Path) -> None:
    stub.responder = scripted
    pool = {**tiny_pool(tmp_path), "fill_budget": None, "judge_llm": llm_settings(stub)}
    cache = str(tmp_path / "cache.sqlite")
    first = await call_job(run_fill_qrels, **pool, judge_cache=cache)
    assert stub.request_count == 6
    second = await call_job(run_fill_qrels, **pool, judge_cache=cache)
    assert stub.request_count == 6 and second["usage"]["cache_hits"] == 6
    assert read_qrels(first["merged_qrels_path"]) == read_qrels(second["merged_qrels_path"])


async def test_on_the_umbrela_sample(stub: OpenAIStub, tmp_path: Path) -> None:
    """data/umbrela: the human pool is every run's top 10, so at depth 20 the holes are ranks 11-20."""
    stub.responder = lambda request: "##final score: 3"  # the stub calls every hole highly relevant
    runs = [str(SAMPLE / f"run.{n}.trec") for n in ("bm25", "tfidf", "title")]
    result = await call_job(run_fill_qrels, human_qrels_path=str(SAMPLE / "qrels.human.txt"), run_paths=runs,
                            queries_path=str(SAMPLE / "queries.jsonl"), corpus_path=str(SAMPLE / "corpus.jsonl"),
                            fill_budget=60, judge_llm=llm_settings(stub), save_path=str(tmp_path))  # fmt: skip
    assert result["fill_counts"]["chosen"] == 60 and result["fill_counts"]["holes"] > 60
    assert stub.request_count <= 60
    for run in result["per_run"].values():
        assert run["Judged@20"]["after"] > run["Judged@20"]["before"]
        assert run["P@20"]["delta"] >= 0  # only grades of 3 were added
    flips = {(f["run_a"], f["run_b"], f["measure"]) for f in result["significance_flips"]}
    # Every flip agrees with the paired tests run directly on the two qrels.
    for a, b in (("run.bm25", "run.tfidf"), ("run.bm25", "run.title"), ("run.tfidf", "run.title")):
        decisions = []
        for qrels in (str(SAMPLE / "qrels.human.txt"), result["merged_qrels_path"]):
            rows = compare_runs(
                qrels,
                [str(SAMPLE / f"{a}.trec")],
                str(SAMPLE / f"{b}.trec"),
                ["ndcg@20", "P@20", "map"],
                ks=None,
                relevance_level=2,
                n_resamples=10000,
                seed=42,
                alpha=0.05,
                correction="none",
            ).rows
            decisions.append({row["metric"]: row["significant"] for row in rows})
        for measure in ("ndcg@20", "P@20", "map"):
            assert ((a, b, measure) in flips) == (decisions[0][measure] != decisions[1][measure])


async def test_export_import_then_fill_sends_nothing(stub: OpenAIStub, tmp_path: Path, monkeypatch) -> None:
    """Batch files as for umbrela_judge: export_requests writes fill_qrels' requests (the holes only), a batch
    run answers them elsewhere, import_results caches them, and fill_qrels then sends no request."""
    from servers.judge.server import SPEC
    from tests.judge.test_batch_tools import run_batch
    from ultra_kit.inprocess import call_local_tool, local_tools

    monkeypatch.chdir(tmp_path)
    tools = local_tools(SPEC)
    arguments = {**tiny_pool(tmp_path), "fill_budget": 5}
    common = {"judge_llm": llm_settings(stub), "judge_cache": str(tmp_path / "cache.sqlite")}
    exported = await call_local_tool(
        tools["export_requests"],
        {"tool": "fill_qrels", "arguments": arguments, **common, "save_path": str(tmp_path / "batch")},
    )
    assert exported["requests"] == 5 and stub.request_count == 0
    (requests,) = map(Path, exported["requests_paths"])
    run_batch(requests, tmp_path / "results.jsonl")
    await call_local_tool(
        tools["import_results"],
        {"results_paths": [str(tmp_path / "results.jsonl")], "judge_cache": common["judge_cache"]},
    )
    result = await call_local_tool(tools["fill_qrels"], {**arguments, **common})
    assert stub.request_count == 0 and result["fill_counts"]["judged"] == 5
