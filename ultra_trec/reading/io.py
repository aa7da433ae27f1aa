"""Read TREC run and qrels files into columns, fast and strict (in-memory mappings: trec_sources).

A run line is ``qid Q0 docid rank score tag``, a qrels line ``qid iter docid rel``: fields are
separated by any number of spaces or tabs, fields after the sixth (fourth) are ignored, blank lines
and lines starting with ``#`` are skipped. Scores are float64, grades integers.

Two readers give the same columns. Files with one delimiter character between fields (what
Anserini, Pyserini, ranx and most tools write) are parsed by pyarrow's CSV reader, in parallel
parts (``trec_csv``); anything else (padded columns, comments, junk after the last field, a
malformed line) goes through a line-by-line reader that names the file and line of the first
problem. Duplicates are refused naming both lines (``trec_table.check_duplicates``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ultra_base.errors import InputError, existing_file
from ultra_base.line_limits import bounded_lines
from ultra_trec.reading.fast_reader import MAX_LINE_BYTES, SNIFF_BYTES, read_fast
from ultra_trec.table import LAYOUT, Kind, TrecTable, check_duplicates


def read_run(path: str | os.PathLike[str]) -> TrecTable:
    """Read a TREC run file; raises InputError naming file and line for any malformed line."""
    return _read(path, "run")


def read_qrels(path: str | os.PathLike[str]) -> TrecTable:
    """Read a TREC qrels file; raises InputError naming file and line for any malformed line."""
    return _read(path, "qrels")


def _read(path: str | os.PathLike[str], kind: Kind) -> TrecTable:
    file = existing_file(path, what=f"{kind} file")
    source = str(path)
    with open(file, "rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if not head.strip():
        raise InputError(f"empty {kind} file; expected lines '{LAYOUT[kind][1]}'", path=source)
    table = read_fast(file, kind, source, head)
    if table is None:
        table = _read_slow(file, kind, source)
    check_duplicates(table)
    return table


def _read_slow(file: Path, kind: Kind, source: str) -> TrecTable:
    """Line-by-line reader: exact trec_eval field rules and an error naming the first bad line."""
    import pyarrow as pa

    width, layout, value_name = LAYOUT[kind]
    qid_index: dict[bytes, int] = {}
    codes: list[int] = []
    docids: list[bytes] = []
    values: list[float | int] = []
    lines: list[int] = []
    long_line = f": not a {kind} file (lines '{layout}')"
    with open(file, "rb") as handle:
        for number, raw in enumerate(bounded_lines(handle, source, limit=MAX_LINE_BYTES, why=long_line), start=1):
            fields = raw.split()
            if not fields or fields[0].startswith(b"#"):
                continue
            if len(fields) < width:
                raise InputError(
                    f"expected {width} whitespace-separated fields '{layout}', found {len(fields)}",
                    path=source,
                    line=number,
                )
            value = _parse_value(fields[width - 1 if kind == "qrels" else 4], kind, value_name, source, number)
            codes.append(qid_index.setdefault(fields[0], len(qid_index)))
            docids.append(fields[2])
            values.append(value)
            lines.append(number)
    if not values:
        raise InputError(f"no {kind} lines found (only blank or comment lines); expected '{layout}'", path=source)
    return TrecTable(
        kind=kind,
        source=source,
        qids=[qid.decode("utf-8", "surrogateescape") for qid in qid_index],
        qid_codes=np.asarray(codes, dtype=np.int32),
        docids=pa.chunked_array([pa.array(docids, type=pa.binary())]),
        values=np.asarray(values, dtype=np.float64 if kind == "run" else np.int64),
        lines=np.asarray(lines, dtype=np.int64),
        path=file,
    )


def _parse_value(raw: bytes, kind: Kind, value_name: str, source: str, line: int) -> float | int:
    text = raw.decode("ascii", "replace")
    if kind == "qrels":
        grade = _number(int, text)
        if grade is None:
            raise InputError("the relevance (4th field) is not an integer", path=source, line=line)
        return grade
    value = _number(float, text)
    if value is None:
        raise InputError("the score (5th field) is not a number", path=source, line=line)
    if value != value:
        raise InputError("score is NaN; scores must be numbers", path=source, line=line)
    return value


def _number(kind: type, text: str) -> float | int | None:
    """``text`` read as ``kind`` (int or float), or None. Python's own spelling with ``_`` between digits is not a
    number here: Python reads ``1_5`` as 15, where trec_eval's ``atof`` and ``atol`` stop at the ``_`` (1)."""
    if "_" in text:
        return None
    try:
        return kind(text)
    except ValueError:
        return None
