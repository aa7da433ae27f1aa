"""The fast reader (pyarrow, parallel parts) against the careful line reader, and the duplicate check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ultra_base.errors import InputError
from ultra_trec import table as table_module
from ultra_trec.reading import fast_reader as trec_csv
from ultra_trec.reading.io import _read_slow, read_qrels, read_run
from ultra_trec.table import has_repeated_keys


@pytest.fixture
def small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut even small files into parts, so the part boundaries and the join are exercised."""
    monkeypatch.setattr(trec_csv, "PART_MIN_BYTES", 256)
    monkeypatch.setattr(trec_csv.os, "cpu_count", lambda: 4)


def write_random_run(path: Path, seed: int, *, grouped: bool = True) -> None:
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(int(rng.integers(3, 30))):
        docs = rng.choice(400, size=int(rng.integers(1, 60)), replace=False)
        scores = np.round(rng.normal(0, 1, docs.size), 1)
        lines += [f"q{q * 7 % 11}x{q} Q0 d{d} {r} {s} tag" for r, (d, s) in enumerate(zip(docs, scores, strict=True))]
    if not grouped:
        rng.shuffle(lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("grouped", [True, False])
def test_parts_join_to_what_the_line_reader_reads(tmp_path: Path, small_parts: None, seed: int, grouped: bool) -> None:
    path = tmp_path / "run.txt"
    write_random_run(path, seed, grouped=grouped)
    fast, slow = read_run(path), _read_slow(path, "run", str(path))
    assert fast.lines is None, "the fast reader was expected to take this file"
    assert fast.qids == slow.qids
    assert np.array_equal(fast.qid_codes, slow.qid_codes)
    assert np.array_equal(fast.values, slow.values)
    assert fast.docids.to_pylist() == slow.docids.to_pylist()
    assert np.array_equal(fast.keys, slow.keys)


def test_duplicate_across_a_part_boundary_names_both_lines(tmp_path: Path, small_parts: None) -> None:
    lines = [f"q1 Q0 d{i} {i} {100 - i} t" for i in range(80)] + ["q1 Q0 d3 81 0.5 t"]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"duplicate docid 'd3' for query 'q1' at line 4 and line 81"):
        read_run(path)


def test_comment_at_the_start_of_a_later_part_takes_the_line_reader(tmp_path: Path, small_parts: None) -> None:
    lines = [f"q{i // 10} 0 d{i} {i % 4}" for i in range(60)]
    lines.insert(40, "# a comment in the middle")
    path = tmp_path / "qrels.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = read_qrels(path)
    assert table.lines is not None and len(table) == 60
    assert table.line_of(40) == 42  # the row after the comment


def test_bad_value_in_a_later_part_is_named_by_line(tmp_path: Path, small_parts: None) -> None:
    lines = [f"q1 Q0 d{i} {i} {100 - i} t" for i in range(80)]
    lines[70] = "q1 Q0 d70 70 high t"
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"run.txt:71: the score \(5th field\) is not a number"):
        read_run(path)


@pytest.mark.parametrize("slice_keys", [1 << 19, 16])
def test_repeated_keys_found_within_queries_in_every_layout(slice_keys: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small slices (16 keys) cut every layout into many slices, sorted by several threads."""
    monkeypatch.setattr(table_module, "SORT_SLICE_KEYS", slice_keys)
    rng = np.random.default_rng(7)
    for _ in range(2000):
        lengths = rng.integers(1, int(rng.choice([3, 40])), int(rng.integers(1, 40)))
        query = np.repeat(np.arange(lengths.size), lengths)
        if rng.random() < 0.2:
            rng.shuffle(query)
        keys = rng.integers(0, 50 if rng.random() < 0.5 else 2**62, query.size).astype(np.uint64)
        if rng.random() < 0.3:
            keys[rng.integers(0, keys.size)] = np.iinfo(np.uint64).max  # the padding value, as a real key
        pairs = list(zip(keys.tolist(), query.tolist(), strict=True))
        expected = len(set(pairs)) < len(pairs)
        found = has_repeated_keys(keys, query)
        # a global sort may also report equal keys of different queries (the caller checks the strings)
        assert found == expected or (found and np.unique(keys).size < keys.size)


def test_a_qrels_error_is_reported_before_a_run_error(tmp_path: Path) -> None:
    from ultra_trec.engine import evaluate

    good_qrels = tmp_path / "good.qrels"
    good_qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")
    bad_qrels = tmp_path / "bad.qrels"
    bad_qrels.write_text("q1 0 d1 1\nq1 0 d2 high\n", encoding="utf-8")
    good_run = tmp_path / "good.run"
    good_run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n", encoding="utf-8")
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.qrels:2: "):
        evaluate(bad_qrels, bad_run, ["map"])
    with pytest.raises(InputError, match=r"bad.qrels:2: "):
        evaluate(bad_qrels, tmp_path / "missing.run", ["map"])
    with pytest.raises(InputError, match=r"duplicate docid 'd1' for query 'q1' at line 1 and line 2"):
        evaluate(good_qrels, bad_run, ["map"])
    assert evaluate(good_qrels, good_run, ["map"]).aggregate == {"map": 1.0}


@pytest.mark.parametrize("parts", ["whole", "parts"])
@pytest.mark.parametrize(
    ("kind", "line", "message"),
    [
        ("run", "q1 Q0 d70 70 1_5 t", r"run.txt:71: the score \(5th field\) is not a number"),
        ("run", "q1 Q0 d70 70 3_0.5 t", r"run.txt:71: the score \(5th field\) is not a number"),
        ("qrels", "q1 0 d70 1_0", r"qrels.txt:71: the relevance \(4th field\) is not an integer"),
    ],
)
def test_a_number_written_with_an_underscore_is_refused_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts: str, kind: str, line: str, message: str
) -> None:
    """Python reads ``1_5`` as 15 and ``1_0`` as 10; trec_eval's atof and atol stop at the ``_`` and read 1. Neither
    is a number in a TREC file: refused by file and line, in one part or in a later one of several."""
    if parts == "parts":
        monkeypatch.setattr(trec_csv, "PART_MIN_BYTES", 256)
        monkeypatch.setattr(trec_csv.os, "cpu_count", lambda: 4)
    lines = [f"q1 Q0 d{i} {i} {100 - i} t" if kind == "run" else f"q1 0 d{i} {i % 3}" for i in range(80)]
    lines[70] = line
    path = tmp_path / f"{kind}.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message):
        (read_run if kind == "run" else read_qrels)(path)
