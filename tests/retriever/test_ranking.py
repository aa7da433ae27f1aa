"""Rankings and TREC run lines: no padding, trec_eval's tie order, aligned ids."""

from __future__ import annotations

import pytest

from servers.retriever.ranking import Hit, query_ids, rank, run_lines
from servers.retriever.tokenize import tokenize
from ultra_base.errors import InputError

IDS = ["a", "b", "c", "d"]


def test_rank_drops_padding_and_zero_scores() -> None:
    # -1 is how ANN libraries mark an unfilled slot; Python would read it as the last document.
    hits = rank([(2, 3.0), (-1, 0.0), (0, 0.0), (1, 1.5)], IDS, top_k=5, keep_zero=False)
    assert [h.doc_id for h in hits] == ["c", "b"]


def test_rank_keeps_zero_for_dense_but_never_invalid_or_repeated() -> None:
    hits = rank([(0, 0.0), (0, 0.0), (7, 1.0), (3, float("nan")), (1, -0.2)], IDS, top_k=5, keep_zero=True)
    assert [(h.doc_id, h.score) for h in hits] == [("a", 0.0), ("b", -0.2)]


def test_rank_breaks_ties_by_doc_id_descending_like_trec_eval() -> None:
    hits = rank([(0, 1.0), (2, 1.0), (1, 2.0), (3, 1.0)], IDS, top_k=3, keep_zero=False)
    assert [h.doc_id for h in hits] == ["b", "d", "c"]


def test_query_ids_default_and_checks() -> None:
    assert query_ids(None, 3) == ["q1", "q2", "q3"]
    assert query_ids([1, 2], 2) == ["1", "2"]
    with pytest.raises(InputError, match="aligned"):
        query_ids(["x"], 2)
    with pytest.raises(InputError, match="repeated"):
        query_ids(["x", "x"], 2)
    with pytest.raises(InputError, match="white space"):
        query_ids(["a b"], 1)


def test_run_lines_are_trec_and_keep_scores_exact() -> None:
    score = 0.1 + 0.2  # 0.30000000000000004: a short format would merge it with 0.3
    lines = run_lines(["q1", "q2"], [[Hit(0, "a", score), Hit(1, "b", 0.3)], []], "tag")
    assert lines == ["q1 Q0 a 1 0.30000000000000004 tag", "q1 Q0 b 2 0.3 tag"]
    with pytest.raises(InputError, match="run_tag"):
        run_lines(["q1"], [[]], "two words")


def test_tokenize_lowercases_and_drops_stopwords() -> None:
    assert tokenize("The Cat's mat, 2024!", frozenset({"the", "s"})) == ["cat", "mat", "2024"]
