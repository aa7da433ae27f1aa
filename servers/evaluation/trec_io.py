"""Read TREC run and qrels files into columns, fast and strict (in-memory mappings: trec_sources).

A run line is ``qid Q0 docid rank score tag``, a qrels line ``qid iter docid rel``: fields are
separated by any number of spaces or tabs, fields after the sixth (fourth) are ignored, blank lines
and lines starting with ``#`` are skipped. Scores are float64, grades integers.

Two readers give the same columns. Files with one delimiter character between fields (what
Anserini, Pyserini, ranx and most tools write) are parsed by pyarrow's multi-threaded CSV reader;
anything else (padded columns, comments, junk after the last field, a malformed line) goes through
a line-by-line reader that names the file and line of the first problem. Duplicates (a docid twice
in one query of a run, a (qid, docid) pair twice in qrels) are refused naming both lines: they are
found by sorting 64-bit fingerprints of (qid, docid), and only then are the lines located.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from servers.core.errors import InputError
from servers.core.readers import existing_file
from servers.evaluation.fingerprint import mix64, string_fingerprints

if TYPE_CHECKING:
    import pyarrow as pa

Kind = Literal["run", "qrels"]

_LAYOUT: dict[str, tuple[int, str, str]] = {
    # kind: (fields, what the line looks like, name of the value column)
    "run": (6, "qid Q0 docid rank score tag", "score"),
    "qrels": (4, "qid iter docid rel", "rel"),
}
_SNIFF_BYTES = 1 << 16


@dataclass(eq=False)
class TrecTable:
    """Rows of a run or qrels as columns; ``qid_codes`` index ``qids``.

    ``values`` holds float64 scores (run) or int64 grades (qrels). ``lines`` gives each row's line
    number in ``source`` when known; ``None`` means row i is the i-th non-blank line (fast reader).
    """

    kind: Kind
    source: str
    qids: list[str]
    qid_codes: np.ndarray
    docids: pa.ChunkedArray
    values: np.ndarray
    lines: np.ndarray | None = None
    path: Path | None = None
    _keys: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.values)

    @property
    def keys(self) -> np.ndarray:
        """64-bit keys of (qid code, docid) per row: equal pairs, equal keys (see ``pair_keys``)."""
        if self._keys is None:
            self._keys = pair_keys(string_fingerprints(self.docids), self.qid_codes)
        return self._keys

    def line_of(self, row: int) -> int | None:
        """The line number of ``row`` in the source file (None for in-memory data)."""
        if self.lines is not None:
            return int(self.lines[row])
        if self.path is None:
            return None
        return _nth_data_line(self.path, row)

    def where(self, row: int) -> str:
        """``line N`` or the mapping entry of ``row``, for messages."""
        line = self.line_of(row)
        if line is not None:
            return f"line {line}"
        return f"{self.source}[{self.qids[int(self.qid_codes[row])]!r}][{self.docids[row].as_py()!r}]"


# --------------------------------------------------------------------------- public readers


def read_run(path: str | os.PathLike[str]) -> TrecTable:
    """Read a TREC run file; raises InputError naming file and line for any malformed line."""
    return _read(path, "run")


def read_qrels(path: str | os.PathLike[str]) -> TrecTable:
    """Read a TREC qrels file; raises InputError naming file and line for any malformed line."""
    return _read(path, "qrels")


# --------------------------------------------------------------------------- duplicates


def pair_keys(fingerprints: np.ndarray, query: np.ndarray) -> np.ndarray:
    """64-bit keys of (query index, docid) per row: ``fingerprint ^ mix64(query + 1)``.

    Equal pairs have equal keys; distinct pairs rarely do, so a key match is checked on the bytes.
    """
    keys = mix64(query.astype(np.uint64) + np.uint64(1))
    keys ^= fingerprints
    return keys


def rekey(keys: np.ndarray, old_query: np.ndarray, new_query: np.ndarray) -> np.ndarray:
    """The keys of the same rows with query indices renumbered from ``old_query`` to ``new_query``."""
    return keys ^ mix64(old_query.astype(np.uint64) + np.uint64(1)) ^ mix64(new_query.astype(np.uint64) + np.uint64(1))


def check_duplicates(table: TrecTable) -> None:
    """Raise InputError naming both lines if a (qid, docid) pair occurs twice."""
    ordered = np.sort(table.keys)
    if not np.any(ordered[1:] == ordered[:-1]):
        return
    del ordered
    keys = table.keys
    # A key collision or a real duplicate: compare the actual strings of the candidate rows.
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    same = np.flatnonzero(keys[1:] == keys[:-1])
    seen: dict[tuple[int, bytes], int] = {}
    for row in np.unique(np.concatenate([order[same], order[same + 1]])):
        pair = (int(table.qid_codes[row]), table.docids[int(row)].as_py())
        if pair in seen:
            first, second = sorted((seen[pair], int(row)))
            qid, docid = table.qids[pair[0]], _text(pair[1])
            what = "docid" if table.kind == "run" else "judgment of docid"
            raise InputError(
                f"duplicate {what} {docid!r} for query {qid!r} at {table.where(first)} and {table.where(second)}; "
                "trec_eval refuses duplicates: keep one line per (qid, docid)",
                path=str(table.path) if table.path else table.source,
            )
        seen[pair] = int(row)


# --------------------------------------------------------------------------- file reading


def _read(path: str | os.PathLike[str], kind: Kind) -> TrecTable:
    file = existing_file(path, what=f"{kind} file")
    source = str(path)
    head = _read_head(file)
    if not head.strip():
        raise InputError(f"empty {kind} file; expected lines '{_LAYOUT[kind][1]}'", path=source)
    table = _read_fast(file, kind, source, head)
    if table is None:
        table = _read_slow(file, kind, source)
    check_duplicates(table)
    return table


def _read_head(file: Path) -> bytes:
    with open(file, "rb") as handle:
        return handle.read(_SNIFF_BYTES)


def _simple_delimiter(head: bytes, kind: Kind) -> bytes | None:
    """The single delimiter byte if the sample has exactly one between fields and nothing else odd."""
    lines = head.split(b"\n")
    if len(head) == _SNIFF_BYTES:
        lines = lines[:-1]  # the last line of the sample may be cut
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    lines = [line for line in lines if line]
    if not lines:
        return None
    delimiter = b"\t" if b"\t" in lines[0] else b" "
    width = _LAYOUT[kind][0]
    for line in lines:
        fields = line.split(delimiter)
        if len(fields) != width or line.startswith(b"#") or b"".join(line.split()) != b"".join(fields):
            return None
        if any(not f for f in fields):
            return None
    return delimiter


def _read_fast(file: Path, kind: Kind, source: str, head: bytes) -> TrecTable | None:
    """pyarrow's streaming CSV reader for single-delimiter files; None when the careful reader is needed.

    Batches are checked and reduced to (qid code, docid, fingerprint, value) as they arrive, so the
    ignored columns never pile up in memory.
    """
    delimiter = _simple_delimiter(head, kind)
    if delimiter is None:
        return None
    import pyarrow as pa
    import pyarrow.csv as pacsv

    width = _LAYOUT[kind][0]
    names = [f"f{i}" for i in range(width)]
    value_index = 4 if kind == "run" else 3
    value_type = pa.float64() if kind == "run" else pa.int64()
    other = b" " if delimiter == b"\t" else b"\t"
    qid_index: dict[bytes, int] = {}
    docids: list[pa.Array] = []
    columns = _Columns(_estimate_rows(file, head), np.float64 if kind == "run" else np.int64)
    try:
        reader = pacsv.open_csv(
            file,
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 20),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter.decode(),
                quote_char=False,
                double_quote=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=True,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.binary() for name in names} | {names[value_index]: value_type},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
        for batch in reader:
            if batch.num_rows == 0:
                continue
            column = batch.column(value_index)
            if column.null_count:
                return None  # "nan", "" or "null": the careful reader names the line
            if any(_has_empty_or_byte(batch.column(i), other) for i in range(width) if i != value_index):
                return None
            qid_codes = _global_codes(batch.column(0), qid_index)
            if qid_codes is None:
                return None
            docids.append(batch.column(2))
            columns.append(qid_codes, pair_keys(string_fingerprints(batch.column(2)), qid_codes), column.to_numpy())
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeError):
        return None
    if columns.size == 0:
        return None
    codes, keys, values = columns.arrays()
    if kind == "run" and np.isnan(values).any():
        return None
    return TrecTable(
        kind=kind,
        source=source,
        qids=[qid.decode("utf-8", "surrogateescape") for qid in qid_index],
        qid_codes=codes,
        docids=pa.chunked_array(docids, type=pa.binary()),
        values=values,
        path=file,
        _keys=keys,
    )


class _Columns:
    """Growable qid-code, key and value columns, filled batch by batch without a final concatenation."""

    def __init__(self, capacity: int, value_dtype: type) -> None:
        self.size = 0
        self.codes = np.empty(capacity, dtype=np.int32)
        self.keys = np.empty(capacity, dtype=np.uint64)
        self.values = np.empty(capacity, dtype=value_dtype)

    def append(self, codes: np.ndarray, keys: np.ndarray, values: np.ndarray) -> None:
        end = self.size + codes.size
        if end > self.codes.size:
            capacity = max(end, int(self.codes.size * 1.5))
            self.codes = _grown(self.codes, capacity)
            self.keys = _grown(self.keys, capacity)
            self.values = _grown(self.values, capacity)
        self.codes[self.size : end] = codes
        self.keys[self.size : end] = keys
        self.values[self.size : end] = values
        self.size = end

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.size
        if n < 0.9 * self.codes.size:  # a poor estimate: give the spare memory back
            return self.codes[:n].copy(), self.keys[:n].copy(), self.values[:n].copy()
        return self.codes[:n], self.keys[:n], self.values[:n]


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    bigger = np.empty(capacity, dtype=array.dtype)
    bigger[: array.size] = array
    return bigger


def _estimate_rows(file: Path, head: bytes) -> int:
    """Lines in ``file`` estimated from the sample's mean line length (a little over, rarely under)."""
    lines = max(head.count(b"\n"), 1)
    return int(file.stat().st_size / (len(head) / lines) * 1.05) + 1024


def _global_codes(column: pa.Array, qid_index: dict[bytes, int]) -> np.ndarray | None:
    """Codes of a batch's qids in the file-wide ``qid_index`` (grown as new qids appear).

    Runs list a query's lines together, so the batch is cut where the qid changes (an exact byte
    comparison of neighbours) and only the first qid of each stretch is looked up.
    """
    import pyarrow.compute as pc

    n = len(column)
    changed = pc.not_equal(column.slice(1), column.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    starts = np.concatenate(([0], np.flatnonzero(changed) + 1))
    if starts.size > n // 4 + 1:
        encoded = pc.dictionary_encode(column)
        local, indices = encoded.dictionary.to_pylist(), encoded.indices.to_numpy()
    else:
        local, indices = column.take(starts).to_pylist(), None
    if any(qid.startswith(b"#") for qid in local):
        return None  # comment lines: the careful reader skips them
    codes = np.fromiter((qid_index.setdefault(qid, len(qid_index)) for qid in local), dtype=np.int32, count=len(local))
    if indices is not None:
        return codes[indices]
    return np.repeat(codes, np.diff(np.append(starts, n)))


def _has_empty_or_byte(column: pa.Array, byte: bytes) -> bool:
    """True if a value is empty or contains ``byte`` (the other whitespace delimiter)."""
    if len(column) == 0:
        return False
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[column.offset : column.offset + len(column) + 1]
    if np.any(offsets[1:] == offsets[:-1]):
        return True
    data = np.frombuffer(column.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    return bool(data.size) and bytes(byte) in data.tobytes()


def _read_slow(file: Path, kind: Kind, source: str) -> TrecTable:
    """Line-by-line reader: exact trec_eval field rules and an error naming the first bad line."""
    import pyarrow as pa

    width, layout, value_name = _LAYOUT[kind]
    qid_index: dict[bytes, int] = {}
    codes: list[int] = []
    docids: list[bytes] = []
    values: list[float | int] = []
    lines: list[int] = []
    with open(file, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
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
        try:
            return int(text)
        except ValueError:
            raise InputError(f"relevance {text!r} is not an integer", path=source, line=line) from None
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"score {text!r} is not a number", path=source, line=line) from None
    if value != value:
        raise InputError("score is NaN; scores must be numbers", path=source, line=line)
    return value


def _nth_data_line(path: Path, row: int) -> int | None:
    """The line number of the ``row``-th (0-based) non-blank line of ``path``."""
    seen = -1
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                seen += 1
                if seen == row:
                    return number
    return None


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value
