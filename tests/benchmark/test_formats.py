"""Every dataset format loads into aligned columns; bad input names file, line and field."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from servers.benchmark import dataset
from ultra_base.errors import InputError
from ultra_kit.settings import defaults

ROWS = [
    {"id": "q1", "question": "Who wrote Hamlet?", "answers": ["Shakespeare"], "pred": "William Shakespeare"},
    {"id": "q2", "question": "Capital of France?", "answers": ["Paris"], "pred": "Paris"},
    {"id": "q3", "question": "2+2?", "answers": ["4", "four"], "pred": "4"},
]
KEY_MAP = {"id_ls": "id", "q_ls": "question", "gt_ls": "answers", "pred_ls": "pred"}


def load_dataset(path: str, key_map: dict[str, str], **given) -> dataset.LoadedData:
    """``dataset.load_dataset`` with the options not given taken from the benchmark setting's defaults."""
    spec = defaults("benchmark")["benchmark"]
    options = {key: spec[key] for key in ("limit", "shuffle", "seed", "split", "max_bytes")} | {"fmt": spec["format"]}
    return dataset.load_dataset(path, key_map, **(options | given))


def expected_columns(rows: list[dict]) -> dict[str, list]:
    return {variable: [row[source] for row in rows] for variable, source in KEY_MAP.items()}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_jsonl(tmp_path: Path) -> None:
    loaded = load_dataset(str(write_jsonl(tmp_path / "d.jsonl", ROWS)), KEY_MAP)
    assert loaded.columns == expected_columns(ROWS)
    assert (loaded.total_rows, loaded.kept_rows, sum(loaded.dropped.values())) == (3, 3, 0)


def test_json_list(tmp_path: Path) -> None:
    (tmp_path / "d.json").write_text(json.dumps(ROWS), encoding="utf-8")
    assert load_dataset(str(tmp_path / "d.json"), KEY_MAP).columns == expected_columns(ROWS)


def test_csv(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text('id,question,answer\nq1,"Who, what?",x\nq2,Why?,y\n', encoding="utf-8")
    loaded = load_dataset(str(tmp_path / "d.csv"), {"id_ls": "id", "q_ls": "question", "gt_ls": "answer"})
    assert loaded.columns == {"id_ls": ["q1", "q2"], "q_ls": ["Who, what?", "Why?"], "gt_ls": ["x", "y"]}


def test_parquet(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({key: [row[key] for row in ROWS] for key in ROWS[0]})
    pq.write_table(table, tmp_path / "d.parquet")
    assert load_dataset(str(tmp_path / "d.parquet"), KEY_MAP).columns == expected_columns(ROWS)


def test_squad(tmp_path: Path) -> None:
    squad = {
        "version": "v2.0",
        "data": [
            {
                "title": "Paris",
                "paragraphs": [
                    {
                        "context": "Paris is the capital of France.",
                        "qas": [
                            {
                                "id": "a1",
                                "question": "Capital of France?",
                                "answers": [{"text": "Paris", "answer_start": 0}],
                            },
                            {"id": "a2", "question": "Capital of Mars?", "answers": [], "is_impossible": True},
                        ],
                    }
                ],
            }
        ],
    }
    (tmp_path / "squad.json").write_text(json.dumps(squad), encoding="utf-8")
    loaded = load_dataset(
        str(tmp_path / "squad.json"), {"id_ls": "id", "q_ls": "question", "gt_ls": "answers", "ctx_ls": "context"}
    )
    assert loaded.columns == {
        "id_ls": ["a1", "a2"],
        "q_ls": ["Capital of France?", "Capital of Mars?"],
        "gt_ls": [["Paris"], []],
        "ctx_ls": ["Paris is the capital of France."] * 2,
    }


def test_ragas(tmp_path: Path) -> None:
    ragas = {
        "question": ["q one", "q two"],
        "contexts": [["c1", "c2"], ["c3"]],
        "answer": ["a1", "a2"],
        "ground_truths": [["g1"], ["g2", "g3"]],
    }
    (tmp_path / "ragas.json").write_text(json.dumps(ragas), encoding="utf-8")
    key_map = {"q_ls": "question", "ctx_ls": "contexts", "pred_ls": "answer", "gt_ls": "ground_truths"}
    loaded = load_dataset(str(tmp_path / "ragas.json"), key_map)
    assert loaded.columns == {
        "q_ls": ["q one", "q two"],
        "ctx_ls": [["c1", "c2"], ["c3"]],
        "pred_ls": ["a1", "a2"],
        "gt_ls": [["g1"], ["g2", "g3"]],
    }
    ragas["answer"].append("a3")
    (tmp_path / "ragas.json").write_text(json.dumps(ragas), encoding="utf-8")
    with pytest.raises(InputError, match="different lengths"):
        load_dataset(str(tmp_path / "ragas.json"), key_map)


def make_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    write_jsonl(
        folder / "corpus.jsonl",
        [
            {"_id": "d1", "title": "Paris", "text": "Paris is in France."},
            {"_id": "d2", "title": "", "text": "Berlin is in Germany."},
            {"_id": "d3", "title": "Rome", "text": "Rome is in Italy."},
        ],
    )
    write_jsonl(
        folder / "queries.jsonl",
        [
            {"_id": "q1", "text": "Where is Paris?"},
            {"_id": "q2", "text": "Where is Berlin?"},
            {"_id": "q9", "text": "Unjudged query"},
        ],
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t0\nq2\td2\t1\nq2\td1\t1\n", encoding="utf-8"
    )
    return folder


def test_beir_folder(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "beir")
    loaded = load_dataset(
        str(folder), {"id_ls": "id", "q_ls": "question", "gt_ls": "relevant_docs", "ctx_ls": "relevant_passages"}
    )
    assert loaded.columns == {
        "id_ls": ["q1", "q2"],
        "q_ls": ["Where is Paris?", "Where is Berlin?"],
        "gt_ls": [["d1"], ["d2", "d1"]],
        "ctx_ls": [["Paris Paris is in France."], ["Berlin is in Germany.", "Paris Paris is in France."]],
    }


BEIR_KEYS = {"id_ls": "id", "gt_ls": "relevant_docs", "ctx_ls": "relevant_passages"}


def test_beir_qrels_document_absent_from_corpus_is_kept_and_counted(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "beir")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td7\t2\nq1\td1\t1\nq2\td8\t0\n", encoding="utf-8"
    )
    loaded = load_dataset(str(folder), BEIR_KEYS)
    # As BEIR's loader: the judgement stays (d7 is relevant), only its passage text is unknown.
    assert loaded.columns == {
        "id_ls": ["q1", "q2"],
        "gt_ls": [["d7", "d1"], []],
        "ctx_ls": [["Paris Paris is in France."], []],
    }
    assert dict(loaded.notes) == {"qrels lines whose corpus-id is not in corpus.jsonl (test.tsv)": 2}
    assert not loaded.dropped and loaded.total_rows == 2


def test_beir_qrels_query_absent_from_queries_is_dropped_with_a_reason(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "beir")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq5\td2\t1\nq6\td2\t1\nq6\td3\t1\n", encoding="utf-8"
    )
    loaded = load_dataset(str(folder), BEIR_KEYS)
    assert loaded.columns["id_ls"] == ["q1"]
    assert dict(loaded.dropped) == {"qrels query not in queries.jsonl (test.tsv)": 2}
    assert (loaded.total_rows, loaded.kept_rows) == (3, 1)


def test_beir_duplicate_qrels_line_names_both_lines(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "beir")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td1\t1\nq1\td1\t2\n", encoding="utf-8"
    )
    message = r"test\.tsv:4: the same query-id and corpus-id are judged twice, on lines 2 and 4"
    with pytest.raises(InputError, match=message):
        load_dataset(str(folder), BEIR_KEYS)


RAGAS_V02 = {
    "user_input": ["q one", "q two"],
    "retrieved_contexts": [["c1", "c2"], ["c3"]],
    "response": ["a1", "a2"],
    "reference": ["g1", "g2"],
}
RAGAS_V02_KEYS = {"q_ls": "user_input", "ctx_ls": "retrieved_contexts", "pred_ls": "response", "gt_ls": "reference"}


@pytest.mark.parametrize("fmt", ["auto", "ragas"])
def test_ragas_02_column_names(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "ragas.json").write_text(json.dumps(RAGAS_V02), encoding="utf-8")
    loaded = load_dataset(str(tmp_path / "ragas.json"), RAGAS_V02_KEYS, fmt=fmt)
    assert loaded.columns == {
        "q_ls": ["q one", "q two"],
        "ctx_ls": [["c1", "c2"], ["c3"]],
        "pred_ls": ["a1", "a2"],
        "gt_ls": ["g1", "g2"],
    }


def test_ragas_02_rows_and_missing_question_column(tmp_path: Path) -> None:
    rows = [{name: values[i] for name, values in RAGAS_V02.items()} for i in range(2)]
    (tmp_path / "rows.json").write_text(json.dumps(rows), encoding="utf-8")
    loaded = load_dataset(str(tmp_path / "rows.json"), RAGAS_V02_KEYS, fmt="ragas")
    assert loaded.columns["ctx_ls"] == [["c1", "c2"], ["c3"]] and loaded.columns["gt_ls"] == ["g1", "g2"]
    (tmp_path / "bad.json").write_text(json.dumps({"response": ["a1"]}), encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.json: RAGAS JSON needs a 'question' or 'user_input' list"):
        load_dataset(str(tmp_path / "bad.json"), RAGAS_V02_KEYS, fmt="ragas")


def test_row_missing_a_mapped_field_is_dropped_whole(tmp_path: Path) -> None:
    rows = [dict(ROWS[0]), {k: v for k, v in ROWS[1].items() if k != "pred"}, dict(ROWS[2], answers=None)]
    loaded = load_dataset(str(write_jsonl(tmp_path / "d.jsonl", rows)), KEY_MAP)
    assert loaded.columns == expected_columns([ROWS[0]])
    assert dict(loaded.dropped) == {"missing or null field 'pred'": 1, "missing or null field 'answers'": 1}


def test_shuffle_is_seeded_and_keeps_columns_aligned(tmp_path: Path) -> None:
    rows = [{"id": str(i), "question": f"q{i}", "answers": [f"a{i}"], "pred": f"p{i}"} for i in range(50)]
    path = str(write_jsonl(tmp_path / "d.jsonl", rows))
    first = load_dataset(path, KEY_MAP, shuffle=True, seed=7, limit=10).columns
    again = load_dataset(path, KEY_MAP, shuffle=True, seed=7, limit=10).columns
    other = load_dataset(path, KEY_MAP, shuffle=True, seed=8, limit=10).columns
    assert first == again and first != other
    assert first["id_ls"] != [str(i) for i in range(10)]
    for index, qid in enumerate(first["id_ls"]):
        assert first["q_ls"][index] == f"q{qid}" and first["pred_ls"][index] == f"p{qid}"


def test_limit_takes_the_first_records(tmp_path: Path) -> None:
    loaded = load_dataset(str(write_jsonl(tmp_path / "d.jsonl", ROWS)), KEY_MAP, limit=2)
    assert loaded.columns["id_ls"] == ["q1", "q2"]


@pytest.mark.parametrize("limit", [0, -2, 1.5, True])
def test_bad_limit(tmp_path: Path, limit) -> None:
    with pytest.raises(InputError, match="limit must be -1"):
        load_dataset(str(write_jsonl(tmp_path / "d.jsonl", ROWS)), KEY_MAP, limit=limit)


def test_unknown_field_names_field_and_available_ones(tmp_path: Path) -> None:
    with pytest.raises(
        InputError,
        match=r"d\.jsonl: field 'golden' \(key_map\.gt_ls\) is in no record; "
        r"line 1 has fields \['answers', 'id', 'pred', 'question'\]",
    ):
        load_dataset(str(write_jsonl(tmp_path / "d.jsonl", ROWS)), {"q_ls": "question", "gt_ls": "golden"})


def test_any_output_variable_name_but_not_a_non_identifier_or_data_info(tmp_path: Path) -> None:
    path = str(write_jsonl(tmp_path / "d.jsonl", ROWS))
    loaded = load_dataset(path, {"answers_ls": "answers", "q_ls": "question"})
    assert loaded.columns["answers_ls"] == [row["answers"] for row in ROWS]
    for bad in ("answers ls", "data_info"):
        with pytest.raises(InputError, match=f"benchmark.key_map: '{bad}' cannot be an output variable"):
            load_dataset(path, {bad: "answers"})


def test_malformed_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.jsonl:2: invalid JSON"):
        load_dataset(str(path), KEY_MAP)


def test_nested_field_path(tmp_path: Path) -> None:
    rows = [{"meta": {"id": "x", "turns": [{"text": "hi"}, {"text": "last"}]}}]
    loaded = load_dataset(
        str(write_jsonl(tmp_path / "d.jsonl", rows)), {"id_ls": "meta.id", "q_ls": "meta.turns.-1.text"}
    )
    assert loaded.columns == {"id_ls": ["x"], "q_ls": ["last"]}


def test_unsupported_extension(tmp_path: Path) -> None:
    (tmp_path / "d.xml").write_text("<x/>")
    with pytest.raises(InputError, match="unsupported file extension '.xml'"):
        load_dataset(str(tmp_path / "d.xml"), KEY_MAP)


def test_format_messages_list_what_readers_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every message naming formats or extensions is built from READERS: a new entry shows up in each."""
    from servers.benchmark import formats

    def fake(_source: Path, _split: str | None) -> list[dict]:
        return [{"question": "q", "_line": 1}]

    entry = formats.Format(
        "demo", "Demo", fake, (".demo",), matches=lambda data: data == {"demo": True}, layout="{'demo': true}"
    )
    monkeypatch.setattr(formats, "READERS", formats.READERS.replaced(entry))
    (tmp_path / "d.xml").write_text("<x/>")
    with pytest.raises(InputError) as unsupported:
        formats.read_records(str(tmp_path / "d.xml"))
    with pytest.raises(InputError) as empty:
        formats.read_records("")
    with pytest.raises(InputError) as unknown:
        formats.read_records(str(tmp_path / "d.xml"), fmt="nope")
    for error in (unsupported, empty):
        for suffix in (".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet", ".demo"):
            assert suffix in str(error.value)
        assert "a BEIR folder" in str(error.value)
    assert "auto, jsonl, json, csv, tsv, parquet, beir, squad, ragas, otlp, langfuse, langsmith, demo" in str(
        unknown.value
    )
    (tmp_path / "d.demo").write_text("anything")
    assert formats.detect_format(tmp_path / "d.demo") == "demo"
    (tmp_path / "d.json").write_text('{"other": 1}')
    with pytest.raises(InputError) as layout:
        formats.detect_format(tmp_path / "d.json")
    for words in ("JSON list (a list of records)", "SQuAD ({'data': [...]})", "RAGAS ({'question' or 'user_input'"):
        assert words in str(layout.value)
    monkeypatch.setattr(formats, "READERS", formats.READERS.replaced(dataclasses.replace(entry, suffixes=(".json",))))
    (tmp_path / "demo.json").write_text('{"demo": true}')
    assert formats.detect_format(tmp_path / "demo.json") == "demo"
