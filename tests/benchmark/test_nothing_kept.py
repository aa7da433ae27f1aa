"""A dataset that leaves no record fails, saying how many records were read and every drop reason with its count;
an empty file says it is empty. Never empty lists with exit status 0."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from servers.benchmark import formats
from tests.benchmark.test_formats import BEIR_KEYS, load_dataset, make_beir
from ultra_base.errors import InputError


def refusal(path: Path, key_map: dict[str, str], **given) -> str:
    with pytest.raises(InputError) as caught:
        load_dataset(str(path), key_map, **given)
    return str(caught.value)


def test_every_record_dropped_names_the_count_and_the_reasons(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"q": NaN, "a": 1}\n{"q": null, "a": 2}\n{"q": "x"}\n{"a": 3}\n{"q": NaN, "a": 4}\n')
    message = refusal(path, {"q_ls": "q", "gt_ls": "a"})
    assert message == (
        f"{path}: no record kept: read 5 records and dropped every one (NaN in field 'q': 2, missing or null "
        "field 'q': 2, missing or null field 'a': 1); fix those fields in the data, or map other fields in "
        "benchmark.key_map"
    )


def test_one_kept_record_is_enough_and_limit_or_shuffle_never_empty_it(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"q": NaN}\n{"q": "kept"}\n')
    loaded = load_dataset(str(path), {"q_ls": "q"}, limit=1, shuffle=True)
    assert loaded.columns == {"q_ls": ["kept"]} and dict(loaded.dropped) == {"NaN in field 'q'": 1}


def test_beir_whose_every_judged_query_is_absent_names_the_reader_s_reason(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "beir")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq7\td1\t1\nq8\td2\t1\n")
    message = refusal(folder, BEIR_KEYS)
    assert "no record kept: read 2 records and dropped every one (qrels query not in queries.jsonl (test.tsv): 2)" in (
        message
    )


@pytest.mark.parametrize("name", ["e.jsonl", "e.json", "e.csv", "e.parquet"])
def test_an_empty_file_says_it_is_empty(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("")
    assert (
        refusal(tmp_path / name, {"q_ls": "q"})
        == f"{tmp_path / name}: the file is empty (0 bytes): it holds no records"
    )


@pytest.mark.parametrize(("name", "text"), [("h.csv", "q,a\n"), ("l.json", "[]"), ("b.jsonl", "\n \n")])
def test_a_file_without_records_says_none_was_read(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    assert "the dataset holds no records (read 0); give a file with at least one record" in refusal(
        tmp_path / name, {"q_ls": "q"}
    )


def test_a_nan_cell_in_csv_or_tsv_is_nan(tmp_path: Path) -> None:
    (tmp_path / "d.tsv").write_text("q\ta\tb\nNaN\tx\tnan\nkept\tNAN\t\n")
    rows = formats.read_records(str(tmp_path / "d.tsv"))
    assert math.isnan(rows[0]["q"]) and math.isnan(rows[0]["b"]) and math.isnan(rows[1]["a"])
    assert rows[1]["q"] == "kept" and rows[1]["b"] == ""  # an empty cell is an empty text, kept
    loaded = load_dataset(str(tmp_path / "d.tsv"), {"q_ls": "q", "b_ls": "b"})
    assert loaded.columns == {"q_ls": ["kept"], "b_ls": [""]} and dict(loaded.dropped) == {"NaN in field 'q'": 1}
