"""Readers name the file and line of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from ultra_base.errors import InputError
from ultra_kit.readers import read_csv, read_json, read_jsonl, read_parquet


def test_jsonl_reads_objects_and_skips_blank_lines(tmp_path: Path) -> None:
    file = tmp_path / "d.jsonl"
    file.write_text('{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    assert read_jsonl(file) == [{"a": 1}, {"a": 2}]


def test_jsonl_malformed_line_is_named(tmp_path: Path) -> None:
    file = tmp_path / "d.jsonl"
    file.write_text('{"a": 1}\n{"a": 2}\n{"a": \n', encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.jsonl:3: invalid JSON"):
        read_jsonl(file)


def test_jsonl_non_object_line_is_named(tmp_path: Path) -> None:
    file = tmp_path / "d.jsonl"
    file.write_text('{"a": 1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.jsonl:2: expected a JSON object, found list"):
        read_jsonl(file)


def test_missing_file_says_not_found(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.jsonl: input file not found"):
        read_jsonl(tmp_path / "nope.jsonl")


def test_invalid_utf8_is_an_input_error(tmp_path: Path) -> None:
    file = tmp_path / "d.jsonl"
    file.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(InputError, match="not valid UTF-8"):
        read_jsonl(file)


def test_json_syntax_error_names_line(tmp_path: Path) -> None:
    file = tmp_path / "d.json"
    file.write_text('[\n {"a": 1},\n {"a": }\n]', encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.json:3: invalid JSON"):
        read_json(file)


def test_json_reads_the_whole_document_as_it_is(tmp_path: Path) -> None:
    file = tmp_path / "d.json"
    file.write_text('[{"a": 1}, 3, "x"]', encoding="utf-8")
    assert read_json(file) == [{"a": 1}, 3, "x"]


def test_csv_reads_rows_and_names_ragged_line(tmp_path: Path) -> None:
    file = tmp_path / "d.csv"
    file.write_text('q,a\n"x, y",1\nz,2,3\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.csv:3: expected 2 fields as in the header, found 3"):
        read_csv(file)
    file.write_text('q,a\n"x, y",1\n', encoding="utf-8")
    assert read_csv(file) == [{"q": "x, y", "a": "1"}]


def test_tsv_by_extension(tmp_path: Path) -> None:
    file = tmp_path / "d.tsv"
    file.write_text("q\ta\nx,y\t1\n", encoding="utf-8")
    assert read_csv(file) == [{"q": "x,y", "a": "1"}]


def test_parquet_round_trip_and_garbage(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    file = tmp_path / "d.parquet"
    pq.write_table(pa.table({"q": ["a", "b"], "gt": [["x"], ["y", "z"]]}), file)
    assert read_parquet(file) == [{"q": "a", "gt": ["x"]}, {"q": "b", "gt": ["y", "z"]}]
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(InputError, match=r"bad\.parquet: not a readable Parquet file"):
        read_parquet(bad)
