"""The saved index: BM25 scores against the formula, reuse and rebuild, the run file against the results."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from servers.retriever.bm25 import bm25_options
from servers.retriever.index import ensure_index, open_index
from servers.retriever.tokenize import stopword_set, tokenize
from servers.retriever.tools import search
from tests.retriever.conftest import TINY, write_corpus
from ultra_base.errors import InputError
from ultra_kit.factory import tool_settings
from ultra_kit.settings import defaults

pytestmark = pytest.mark.anyio
OPTIONS = bm25_options({})


async def retriever_search(q_ls: list[str], **given):
    """The tool called in Python with the settings not given taken from parameter.yaml."""
    settings = tool_settings(search.retriever_search, defaults("retriever"))
    return await search.retriever_search(q_ls, **{**settings, **given})


async def build(corpus: Path, index_path: str, options: dict = OPTIONS, overwrite: bool = False) -> dict:
    return await ensure_index(
        backend="bm25", corpus_path=str(corpus), index_path=index_path, options=options, overwrite=overwrite
    )


def lucene_bm25(query: str, docs: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """BM25 as Lucene computes it (idf = ln(1 + (N - df + .5) / (df + .5)), no (k1 + 1) factor), by hand."""
    stop = stopword_set("en")
    tokens = [tokenize(d, stop) for d in docs]
    avgdl = sum(map(len, tokens)) / len(tokens)
    scores = []
    for doc in tokens:
        tf = Counter(doc)
        score = 0.0
        for term in set(tokenize(query, stop)):
            df = sum(term in d for d in tokens)
            if df == 0 or tf[term] == 0:
                continue
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            score += idf * tf[term] / (tf[term] + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(score)
    return scores


def texts() -> list[str]:
    return [f"{row['title']}\n{row['text']}" for row in TINY]


def read_run(path: str) -> dict[str, list[tuple[int, str, float]]]:
    run: dict[str, list[tuple[int, str, float]]] = defaultdict(list)
    for line in Path(path).read_text().splitlines():
        qid, q0, docid, rank, score, tag = line.split()
        assert (q0, tag) == ("Q0", "ultra")
        run[qid].append((int(rank), docid, float(score)))
    return run


async def test_bm25_scores_follow_the_lucene_formula(tiny_corpus: Path, tmp_path: Path) -> None:
    await build(tiny_corpus, str(tmp_path / "idx"))
    queries = ["cat milk", "dog walks", "parrots speech cat"]
    result = await retriever_search(queries, index_path=str(tmp_path / "idx"), top_k=4, save_path=str(tmp_path))
    for query, ids, scores in zip(queries, result["ret_ids"], result["ret_scores"], strict=True):
        expected = {row["id"]: s for row, s in zip(TINY, lucene_bm25(query, texts()), strict=True) if s > 0}
        assert dict(zip(ids, scores, strict=True)) == pytest.approx(expected, rel=1e-5)
        assert scores == sorted(scores, reverse=True)


async def test_no_padding_when_fewer_passages_match(tiny_corpus: Path, tmp_path: Path) -> None:
    await build(tiny_corpus, str(tmp_path / "idx"))
    result = await retriever_search(
        ["parrots", "unknownword", "the"], index_path=str(tmp_path / "idx"), top_k=10, save_path=str(tmp_path)
    )
    assert result["ret_ids"] == [["d4"], [], []]
    assert result["ret_psg"][0] == ["Birds\nParrots can imitate human speech."]
    assert result["search_info"]["queries_without_results"] == 2
    assert read_run(result["run_path"]) == {"q1": [(1, "d4", result["ret_scores"][0][0])]}


async def test_run_file_agrees_with_returned_passages_and_evaluate_trec(tiny_corpus: Path, tmp_path: Path) -> None:
    from ultra_trec.engine import evaluate

    await build(tiny_corpus, str(tmp_path / "idx"))
    queries = ["cat", "dog", "pets cats dogs", "mat milk"]
    result = await retriever_search(
        queries, id_ls=["A", "B", "C", "D"], index_path=str(tmp_path / "idx"), top_k=3, save_path=str(tmp_path / "r")
    )
    run = read_run(result["run_path"])
    for qid, ids, scores in zip("ABCD", result["ret_ids"], result["ret_scores"], strict=True):
        # trec_eval orders by score, then doc id descending: the same order as returned
        ordered = sorted(run[qid], key=lambda row: (-row[2], [-ord(c) for c in row[1]]))
        assert [docid for _, docid, _ in ordered] == ids
        assert [rank for rank, _, _ in run[qid]] == list(range(1, len(ids) + 1))
        assert [score for _, _, score in run[qid]] == scores
    qrels = {"A": {"d1": 1}, "B": {"d2": 1}, "C": {"d3": 1}, "D": {"d4": 1}}
    scored = evaluate(qrels, result["run_path"], ["P@1", "recall@3"]).to_dict()["per_query"]
    for qid, ids in zip("ABCD", result["ret_ids"], strict=True):
        relevant = set(qrels[qid])
        assert scored[qid]["P@1"] == float(bool(ids) and ids[0] in relevant)
        assert scored[qid]["recall@3"] == len(relevant & set(ids[:3])) / len(relevant)


async def test_index_round_trip_reuse_and_rebuild(tiny_corpus: Path, tmp_path: Path) -> None:
    index_path = str(tmp_path / "idx")
    first = await build(tiny_corpus, index_path)
    assert (first["status"], first["passages"]) == ("built", 4)
    meta = json.loads((tmp_path / "idx/bm25/meta.json").read_text())
    assert meta["settings"] == OPTIONS and meta["passages"] == 4
    loaded = open_index(index_path=index_path, backend="bm25")
    assert loaded.doc_ids == ["d1", "d2", "d3", "d4"]
    assert (await build(tiny_corpus, index_path))["status"] == "reused"
    again = await build(tiny_corpus, index_path, bm25_options({"k1": 1.2}))
    assert (again["status"], again["reason"]) == ("built", "settings changed")
    write_corpus(tiny_corpus.parent, [*TINY, {"id": "d5", "text": "a new parrot passage"}])
    rebuilt = await build(tiny_corpus, index_path, bm25_options({"k1": 1.2}))
    assert (rebuilt["status"], rebuilt["reason"], rebuilt["passages"]) == ("built", "the corpus changed", 5)
    reloaded = open_index(index_path=index_path, backend="bm25")
    assert reloaded.doc_ids[-1] == "d5"  # the in-memory copy follows the rebuild
    forced = await build(tiny_corpus, index_path, bm25_options({"k1": 1.2}), overwrite=True)
    assert forced["status"] == "built"
    assert not list((tmp_path / "idx").glob(".*building*"))


async def test_search_without_index_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="retriever_index"):
        await retriever_search(["x"], index_path=str(tmp_path / "none"), save_path=str(tmp_path))


def test_bm25_options_are_checked() -> None:
    with pytest.raises(InputError, match="unknown keys"):
        bm25_options({"k2": 1})
    with pytest.raises(InputError, match="method"):
        bm25_options({"method": "tfidf"})
