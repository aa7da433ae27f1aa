"""How far an LLM's relevance grades agree with human ones, and whether they rank systems alike.

Over the (query, document) pairs both qrels grade: Cohen's kappa on the grades and on binary
relevance (grade >= ``relevant_grade``), the confusion matrix (rows human, columns LLM) and the
agreement per human grade. Given runs: each run is scored under ``measure`` with either qrels
(trec_eval semantics, ``ultra_trec.engine``), and the two system rankings are compared
with Kendall's tau-b and Spearman's rho.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_kit.reliability import cohen_kappa, confusion_matrix

__all__ = ["cohen_kappa", "confusion_matrix", "label_agreement", "ranking_agreement", "read_human", "read_qrels"]

Qrels = dict[str, dict[str, int]]


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """``{qid: {docid: grade}}`` from a qrels file (errors name file and line)."""
    from ultra_trec.reading.io import read_qrels as read_table
    from ultra_trec.table import check_duplicates

    table = read_table(path)
    check_duplicates(table)
    qrels: Qrels = {}
    for qid_code, docid, grade in zip(
        table.qid_codes.tolist(), table.docids.to_pylist(), table.values.tolist(), strict=True
    ):
        if isinstance(docid, bytes):
            docid = docid.decode("utf-8", "surrogateescape")
        qrels.setdefault(table.qids[qid_code], {})[docid] = int(grade)
    return qrels


def read_human(path: str | os.PathLike[str]) -> Qrels:
    """The human grades: a qrels file, or the label store ``ultra annotate`` wrote (``.sqlite``: an UMBRELA
    labelling's items are (query, passage) pairs, the system the query id, the item id the passage's; an item
    labelled by several people gets their mean, rounded, as ``--export`` writes it)."""
    from ultra_kit.labels.store import is_label_store, labels_by_system

    if not is_label_store(path):
        return read_qrels(path)
    return {system or "q": {item: int(round(value)) for item, value in items.items()}
            for system, items in labels_by_system(path).items()}  # fmt: skip


def label_agreement(
    llm: Mapping[str, Mapping[str, int]], human: Mapping[str, Mapping[str, int]], *, relevant_grade: int
) -> dict[str, Any]:
    """Kappa (graded and binary), confusion matrix and per-grade agreement over the shared pairs."""
    shared: list[tuple[int, int]] = []
    only_llm = only_human = 0
    for qid in set(llm) | set(human):
        llm_q, human_q = llm.get(qid, {}), human.get(qid, {})
        for docid in set(llm_q) | set(human_q):
            if docid in llm_q and docid in human_q:
                shared.append((human_q[docid], llm_q[docid]))
            elif docid in llm_q:
                only_llm += 1
            else:
                only_human += 1
    if not shared:
        raise InputError(
            "the LLM qrels and the human qrels grade no (query, document) pair in common; "
            "check that both use the same query and document ids"
        )
    labels = sorted({label for pair in shared for label in pair})
    binary = [(int(h >= relevant_grade), int(m >= relevant_grade)) for h, m in shared]
    matrix = confusion_matrix(shared, labels)
    per_grade = {}
    for i, label in enumerate(labels):
        human_count = sum(matrix[i])
        llm_count = sum(row[i] for row in matrix)
        per_grade[str(label)] = {
            "human_count": human_count,
            "llm_count": llm_count,
            "agreement": matrix[i][i] / human_count
            if human_count
            else None,  # share of this human grade the LLM matched
        }
    return {
        "num_pairs": len(shared),
        "only_llm": only_llm,
        "only_human": only_human,
        "exact_agreement": sum(h == m for h, m in shared) / len(shared),
        "kappa_graded": cohen_kappa(shared),
        "kappa_binary": cohen_kappa(binary),
        "binary_agreement": sum(h == m for h, m in binary) / len(binary),
        "confusion": {"labels": labels, "rows": "human", "columns": "llm", "matrix": matrix},
        "per_grade": per_grade,
        "relevant_grade": relevant_grade,
    }


def ranking_agreement(
    llm_qrels: Mapping[str, Mapping[str, int]] | str | os.PathLike[str],
    human_qrels: Mapping[str, Mapping[str, int]] | str | os.PathLike[str],
    run_paths: Sequence[str | os.PathLike[str]],
    *,
    measure: str,
    relevance_level: int = 1,
) -> dict[str, Any]:
    """Score each run under ``measure`` with both qrels; Kendall's tau-b and Spearman's rho of the two."""
    from ultra_trec.engine import evaluate_tables
    from ultra_trec.measures import parse_measures
    from ultra_trec.reading.sources import load_qrels, load_run

    measures = parse_measures([measure], None)
    if len(measures) != 1:
        raise InputError(f"measure must name one measure such as 'ndcg@10', got {measure!r}")
    name = measures[0].name
    llm_table, human_table = load_qrels(llm_qrels, name="llm_qrels"), load_qrels(human_qrels, name="human_qrels")
    runs = []
    for path in run_paths:
        run = load_run(path)
        llm_score = evaluate_tables(llm_table, run, measures, relevance_level=relevance_level).aggregate[name]
        human_score = evaluate_tables(human_table, run, measures, relevance_level=relevance_level).aggregate[name]
        runs.append({"run": str(path), "name": Path(path).name, "llm": llm_score, "human": human_score})
    _add_ranks(runs, "llm")
    _add_ranks(runs, "human")
    result: dict[str, Any] = {"measure": name, "runs": runs, "kendall_tau": None, "spearman_rho": None, "note": None}
    if len(runs) < 2:
        result["note"] = "rank correlation needs at least two runs"
        return result
    llm_scores, human_scores = [r["llm"] for r in runs], [r["human"] for r in runs]
    if len(set(llm_scores)) == 1 or len(set(human_scores)) == 1:
        result["note"] = "all runs score the same under one of the qrels: rank correlation is undefined"
        return result
    from scipy import stats

    result["kendall_tau"] = float(stats.kendalltau(human_scores, llm_scores).statistic)
    result["spearman_rho"] = float(stats.spearmanr(human_scores, llm_scores).statistic)
    return result


def _add_ranks(runs: list[dict[str, Any]], key: str) -> None:
    """Rank 1 = best; ties share the best rank."""
    for run in runs:
        run[f"{key}_rank"] = 1 + sum(other[key] > run[key] for other in runs)
