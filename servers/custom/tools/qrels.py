"""``select_qrels``: the qrels of the questions asked, from a TREC qrels file."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.factory import tool_hints


class QrelsInfo(TypedDict):
    qrels_path: str
    queries_asked: int
    queries_judged: int
    queries_without_judgments: list[str]
    judgments: int


class QrelsResult(TypedDict):
    qrels: dict[str, dict[str, int]]
    qrels_info: QrelsInfo


def qrels_subset(query_ids: list[str], *, qrels_path: str) -> dict[str, dict[str, int]]:
    """The judgments of ``query_ids`` from a TREC qrels file, as {qid: {docid: grade}}."""
    from ultra_trec.reading.io import read_qrels

    wanted = {str(q) for q in query_ids}
    table = read_qrels(qrels_path)
    selected: dict[str, dict[str, int]] = {}
    docids = table.docids.to_pylist()
    for row, code in enumerate(table.qid_codes):
        qid = table.qids[int(code)]
        if qid in wanted:
            docid = docids[row]
            docid = docid.decode("utf-8") if isinstance(docid, bytes) else str(docid)
            selected.setdefault(qid, {})[docid] = int(table.values[row])
    return selected


@tool_hints(read_only=True, idempotent=True)
def select_qrels(
    id_ls: Annotated[list[str], Field(description="the ids of the questions asked (the run's query ids)")],
    *,
    qrels_path: Annotated[str, Field(description="TREC qrels file: qid iter docid grade")],
) -> QrelsResult:
    """The qrels of the questions asked, so evaluate_trec scores a run over exactly those questions.

    evaluate_trec counts a judged query missing from the run as 0 (trec_eval -c); after get_data
    with a limit, pass this tool's qrels instead of the whole file.
    """
    if not id_ls:
        raise InputError("id_ls is empty; map id_ls in get_data's key_map")
    selected = qrels_subset(id_ls, qrels_path=qrels_path)
    info: QrelsInfo = {
        "qrels_path": qrels_path,
        "queries_asked": len(id_ls),
        "queries_judged": len(selected),
        "queries_without_judgments": [str(q) for q in id_ls if str(q) not in selected],
        "judgments": sum(len(docs) for docs in selected.values()),
    }
    return {"qrels": selected, "qrels_info": info}


TOOLS = [select_qrels]
