"""trec_rag_table: the join of UMBRELA, nuggets, citation and IDK results, by hand; misaligned input is refused."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from servers.judge.relevance.trec_rag_table import build_rows
from servers.judge.tools.relevance import trec_rag_table
from ultra_base.errors import InputError

UMBRELA = {
    "q1": {"mean_score": 2.0, "num_judged": 2, "P@1": 1.0, "MRR": 1.0},
    "q2": {"mean_score": 0.5, "num_judged": 2, "P@1": 0.0, "MRR": 0.5},
    "q3": {"mean_score": None, "num_judged": 0, "P@1": 0.0, "MRR": 0.0},  # no answer: no row
}
NUGGETS = {
    "q1": {
        "sys": {"all": 0.5, "vital": 1.0, "status": "ok", "num_nuggets": 2},
        "ref": {"all": 0.25, "vital": None, "status": "incomplete", "num_nuggets": 4},
    },
    "q2": {"sys": {"all": 1.0, "vital": 0.5, "status": "ok", "num_nuggets": 3}},
}


def citation(id_: str, precision: float | None, recall: float, f1: float, status: str = "ok") -> dict:
    return {
        "id": id_,
        "status": status,
        "citation_precision": precision,
        "citation_recall": recall,
        "citation_f1": f1,
        "num_citations": 2,
        "invalid_citations": 0,
        "sentences": [],
    }


CITATIONS = [
    citation("q1/sys", 1.0, 0.5, 2 / 3),
    citation("q1/ref", 0.5, 0.5, 0.5, status="incomplete"),  # a failed citation: no score
    citation("q2", 0.75, 1.0, 6 / 7),  # bare qid: q2 has one run
]
IDKS = [  # another order than the citations: joined by id
    {"id": "q2", "status": "ok", "idk": 0.5, "answer_attempted": 1.0},
    {"id": "q1/ref", "status": "parse_error", "raw": "?"},
    {"id": "q1/sys", "status": "ok", "idk": 0.0, "answer_attempted": 1.0},
]


def test_rows_by_hand() -> None:
    columns, rows = build_rows(UMBRELA, NUGGETS, CITATIONS, IDKS)
    assert columns == [
        "qid",
        "run",
        "umbrela_mean_score",
        "umbrela_num_judged",
        "umbrela_P@1",
        "umbrela_MRR",
        "nugget_status",
        "nugget_all",
        "nugget_vital",
        "nugget_num_nuggets",
        "citation_status",
        "citation_precision",
        "citation_recall",
        "citation_f1",
        "num_citations",
        "invalid_citations",
        "idk_status",
        "idk",
        "answer_attempted",
    ]
    assert [(r["qid"], r["run"]) for r in rows] == [("q1", "sys"), ("q1", "ref"), ("q2", "sys")]
    assert rows[0] == {
        "qid": "q1",
        "run": "sys",
        "umbrela_mean_score": 2.0,
        "umbrela_num_judged": 2,
        "umbrela_P@1": 1.0,
        "umbrela_MRR": 1.0,
        "nugget_status": "ok",
        "nugget_all": 0.5,
        "nugget_vital": 1.0,
        "nugget_num_nuggets": 2,
        "citation_status": "ok",
        "citation_precision": 1.0,
        "citation_recall": 0.5,
        "citation_f1": 2 / 3,
        "num_citations": 2,
        "invalid_citations": 0,
        "idk_status": "ok",
        "idk": 0.0,
        "answer_attempted": 1.0,
    }
    # statuses that are not ok keep their status and counts, never a score
    ref = rows[1]
    assert (ref["nugget_status"], ref["nugget_all"], ref["nugget_num_nuggets"]) == ("incomplete", None, 4)
    assert (ref["citation_status"], ref["citation_f1"], ref["num_citations"]) == ("incomplete", None, 2)
    assert (ref["idk_status"], ref["idk"], ref["answer_attempted"]) == ("parse_error", None, None)
    assert rows[2]["umbrela_mean_score"] == 0.5 and rows[2]["citation_f1"] == 6 / 7 and rows[2]["idk"] == 0.5


def test_tool_writes_csv_and_json(tmp_path: Path) -> None:
    result = trec_rag_table(UMBRELA, NUGGETS, CITATIONS, IDKS, save_path=str(tmp_path / "out"))
    assert result["num_rows"] == 3 and result["unanswered_queries"] == ["q3"]
    # run means over the rows that have a value: sys = q1 and q2, ref = q1 only (its scores are empty)
    sys = result["aggregate"]["sys"]
    assert sys["num_rows"] == 2
    assert sys["umbrela_mean_score"] == pytest.approx(1.25)
    assert sys["nugget_all"] == pytest.approx(0.75) and sys["nugget_vital"] == pytest.approx(0.75)
    assert sys["citation_f1"] == pytest.approx((2 / 3 + 6 / 7) / 2)
    assert sys["idk"] == pytest.approx(0.25) and sys["answer_attempted"] == 1.0
    ref = result["aggregate"]["ref"]
    assert ref["num_rows"] == 1 and "citation_f1" not in ref and "idk" not in ref and ref["nugget_num_nuggets"] == 4
    with open(result["table_path"], newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == result["columns"]
    assert table[1]["citation_f1"] == "" and table[1]["citation_status"] == "incomplete"
    assert float(table[2]["citation_f1"]) == 6 / 7
    rows = json.loads(Path(result["table_json_path"]).read_text())
    assert len(rows) == 3 and rows[1]["idk"] is None and rows[0]["citation_f1"] == 2 / 3
    assert Path(result["table_path"]).suffix == ".csv" and Path(result["table_json_path"]).suffix == ".json"
    again = trec_rag_table(UMBRELA, NUGGETS, CITATIONS, IDKS, save_path=str(tmp_path / "out"))
    assert again["table_path"] != result["table_path"]  # never overwrites an earlier table


@pytest.mark.parametrize(
    ("citations", "idks", "umbrela", "message"),
    [
        (CITATIONS, IDKS[:2], UMBRELA, r"idk_items has no item for 1 answer\(s\) of nugget_per_query: q1/sys"),
        (CITATIONS[1:], IDKS, UMBRELA, r"citation_items has no item for 1 answer\(s\).*q1/sys"),
        ([*CITATIONS, citation("q9/sys", 1, 1, 1)], IDKS, UMBRELA, r"citation_items\[3\] has id 'q9/sys'"),
        ([*CITATIONS, citation("q2/sys", 1, 1, 1)], IDKS, UMBRELA, r"two items for query 'q2', run 'sys'"),
        (CITATIONS, [{"status": "ok"}], UMBRELA, r"idk_items\[0\] has no 'id'"),
        ([citation("q1", 1, 1, 1)], IDKS, UMBRELA, r"id 'q1'.*names no answer"),  # q1 has two runs
        (CITATIONS, IDKS, {"q1": UMBRELA["q1"]}, r"umbrela_per_query has no entry for 1 answered query.*q2"),
        ([], IDKS, UMBRELA, r"citation_items is empty"),
    ],
)
def test_misaligned_input_is_refused(citations, idks, umbrela, message) -> None:
    with pytest.raises(InputError, match=message):
        build_rows(umbrela, NUGGETS, citations, idks)
