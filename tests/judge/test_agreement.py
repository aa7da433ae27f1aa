"""judge_agreement: Cohen's kappa, the confusion matrix, and system-ranking correlation."""

from __future__ import annotations

import itertools
import random

import pytest

from servers.judge.relevance.agreement import cohen_kappa, label_agreement, ranking_agreement, read_qrels
from servers.judge.relevance.run import run_agreement
from tests.judge.conftest import SAMPLE, call_job
from ultra_base.errors import InputError
from ultra_trec.engine import evaluate

RUNS = [str(SAMPLE / f"run.{name}.trec") for name in ("bm25", "tfidf", "title")]


def test_kappa_textbook_example() -> None:
    # Wikipedia's worked example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> kappa 0.4.
    pairs = [(1, 1)] * 20 + [(1, 0)] * 5 + [(0, 1)] * 10 + [(0, 0)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([(2, 2), (0, 0)]) == 1.0
    assert cohen_kappa([(1, 1), (1, 1)]) is None  # chance agreement 1: undefined, not 1 or 0
    assert cohen_kappa([]) is None


def test_kappa_matches_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(7)
    pairs = [(rng.randint(0, 3), rng.randint(0, 3)) for _ in range(300)]
    pairs += [(g, g) for g in (rng.randint(0, 3) for _ in range(200))]
    human, llm = zip(*pairs, strict=True)
    assert cohen_kappa(pairs) == pytest.approx(metrics.cohen_kappa_score(human, llm), abs=1e-12)


def test_label_agreement_counts() -> None:
    llm = {"1": {"a": 3, "b": 0, "c": 2, "x": 1}, "2": {"a": 1}}
    human = {"1": {"a": 2, "b": 0, "c": 2, "y": 0}, "2": {"a": 1}}
    report = label_agreement(llm, human, relevant_grade=2)
    assert (report["num_pairs"], report["only_llm"], report["only_human"]) == (4, 1, 1)
    assert report["confusion"]["labels"] == [0, 1, 2, 3]
    assert report["confusion"]["matrix"] == [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0]]
    assert report["per_grade"]["2"] == {"human_count": 2, "llm_count": 1, "agreement": 0.5}
    assert report["exact_agreement"] == 0.75 and report["binary_agreement"] == 1.0
    assert report["kappa_binary"] == 1.0
    with pytest.raises(InputError, match="no \\(query, document\\) pair in common"):
        label_agreement({"1": {"z": 1}}, human, relevant_grade=2)


def test_ranking_correlation_against_trec_and_pair_counts(tmp_path) -> None:
    human = read_qrels(SAMPLE / "qrels.human.txt")
    # A noisy "LLM": the human grade, but every third pair graded 1 off.
    llm = {
        q: {d: (g + 1 if i % 3 == 0 else g) for i, (d, g) in enumerate(sorted(docs.items()))}
        for q, docs in human.items()
    }
    report = ranking_agreement(llm, SAMPLE / "qrels.human.txt", RUNS, measure="ndcg@10")
    for run in report["runs"]:
        assert run["human"] == pytest.approx(
            evaluate(SAMPLE / "qrels.human.txt", run["run"], ["ndcg@10"]).aggregate["ndcg@10"]
        )
        assert run["llm"] == pytest.approx(evaluate(llm, run["run"], ["ndcg@10"]).aggregate["ndcg@10"])
    # Kendall's tau by counting concordant and discordant pairs of runs (no ties here).
    runs = report["runs"]
    signs = [(a["human"] - b["human"]) * (a["llm"] - b["llm"]) for a, b in itertools.combinations(runs, 2)]
    expected = (sum(s > 0 for s in signs) - sum(s < 0 for s in signs)) / len(signs)
    assert report["kendall_tau"] == pytest.approx(expected)
    assert report["measure"] == "ndcg@10"
    assert sorted(r["human_rank"] for r in runs) == [1, 2, 3]


def test_single_run_has_no_correlation() -> None:
    report = ranking_agreement(SAMPLE / "qrels.human.txt", SAMPLE / "qrels.human.txt", RUNS[:1], measure="ndcg@10")
    assert report["kendall_tau"] is None and "at least two runs" in report["note"]


def test_identical_qrels_agree_perfectly(tmp_path) -> None:
    qrels = str(SAMPLE / "qrels.human.txt")
    result = call_job(
        run_agreement, llm_qrels_path=qrels, human_qrels_path=qrels, run_paths=RUNS, save_path=str(tmp_path)
    )
    assert result["kappa_graded"] == 1.0 and result["kappa_binary"] == 1.0
    assert result["ranking"]["kendall_tau"] == pytest.approx(1.0)
    assert result["ranking"]["spearman_rho"] == pytest.approx(1.0)
    assert result["num_pairs"] == sum(len(d) for d in read_qrels(qrels).values())


def test_bad_qrels_line_is_named(tmp_path) -> None:
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 a 2\n1 0 b\n")
    with pytest.raises(InputError, match=r"bad\.qrels.*2"):
        read_qrels(bad)
