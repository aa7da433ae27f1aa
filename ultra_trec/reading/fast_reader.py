"""The fast reader of TREC files: pyarrow's CSV parser on single-delimiter files, in parallel parts.

A file whose fields are separated by exactly one space (or one tab) is cut at line boundaries into
one part per core; each part is parsed by its own pyarrow streaming reader in a thread (pyarrow
and numpy release the GIL) and reduced batch by batch to (qid code, docid, fingerprint, value), so
the ignored columns never pile up in memory. The parts are then joined in file order, so row i is
still the i-th non-blank line. Anything unusual (padding, comments, an empty field, a NaN score, a
line that does not parse) makes ``read_fast`` return None and the careful line reader take over.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ultra_base.line_limits import LineBytes
from ultra_trec.reading.fingerprint import string_fingerprints
from ultra_trec.table import LAYOUT, Kind, TrecTable, pair_keys

if TYPE_CHECKING:
    import pyarrow as pa

SNIFF_BYTES = 1 << 16
PART_MIN_BYTES = 16 << 20  # smaller files are read in one part
MAX_LINE_BYTES = 1024 * 1024  # a run or qrels line (qid, docid, tag: a few hundred bytes at most in practice)


def read_fast(file: Path, kind: Kind, source: str, head: bytes) -> TrecTable | None:
    """The table of a single-delimiter file, or None when the careful line reader is needed."""
    delimiter = simple_delimiter(head, kind)
    if delimiter is None:
        return None
    use_jemalloc()
    size = file.stat().st_size
    try:
        ranges = _split(file, size, max(1, min(os.cpu_count() or 1, size // PART_MIN_BYTES, 4)))
    except _LongLine:
        return None
    rows_per_byte = max(head.count(b"\n"), 1) / len(head)
    # The first part's columns are sized for the whole file, so the others are appended to them
    # without a second copy of everything; pages that are never written cost no memory.
    capacities = [_estimate(size, rows_per_byte)] + [_estimate(length, rows_per_byte) for _, length in ranges[1:]]
    jobs = [(start, length, capacity) for (start, length), capacity in zip(ranges, capacities, strict=True)]
    if len(jobs) == 1:
        parts = [_parse_part(file, *jobs[0], kind, delimiter)]
    else:
        with ThreadPoolExecutor(len(jobs)) as pool:
            parts = list(pool.map(lambda job: _parse_part(file, *job, kind, delimiter), jobs))
    if any(part is None for part in parts) or sum(part.size for part in parts) == 0:
        return None
    return _join(parts, kind, source, file)


def simple_delimiter(head: bytes, kind: Kind) -> bytes | None:
    """The single delimiter byte if the sample has exactly one between fields and nothing else odd."""
    lines = head.split(b"\n")
    if len(head) == SNIFF_BYTES:
        lines = lines[:-1]  # the last line of the sample may be cut
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    lines = [line for line in lines if line]
    if not lines:
        return None
    delimiter = b"\t" if b"\t" in lines[0] else b" "
    width = LAYOUT[kind][0]
    for line in lines:
        fields = line.split(delimiter)
        if len(fields) != width or line.startswith(b"#") or b"".join(line.split()) != b"".join(fields):
            return None
        if any(not f for f in fields):
            return None
    return delimiter


@dataclass
class _Part:
    """One part's rows: its qids with their codes (first-seen order), docid chunks, and columns of codes,
    fingerprints and values."""

    qids: dict[bytes, int]
    docids: list[pa.Array]
    columns: _Columns

    @property
    def size(self) -> int:
        return self.columns.size


@functools.cache
def use_jemalloc() -> None:
    """Make jemalloc pyarrow's default memory pool, where pyarrow has it (once per process).

    It hands the parser's short-lived blocks back to the system sooner than mimalloc (pyarrow's
    usual default): on a 5M-line run, 50-80 MB less peak memory at the same speed.
    """
    import pyarrow as pa

    with contextlib.suppress(NotImplementedError):  # a pyarrow built without jemalloc keeps its default
        pa.set_memory_pool(pa.jemalloc_memory_pool())


def _estimate(length: int, rows_per_byte: float) -> int:
    return int(length * rows_per_byte * 1.05) + 1024


def _split(file: Path, size: int, count: int) -> list[tuple[int, int]]:
    """``count`` (offset, length) byte ranges of ``file`` that start at line starts."""
    cuts = [0]
    with open(file, "rb") as handle:
        for i in range(1, count):
            handle.seek(max(size * i // count, cuts[-1]))
            if len(handle.readline(MAX_LINE_BYTES + 1)) > MAX_LINE_BYTES:  # read within the limit, never whole
                raise _LongLine
            cuts.append(min(handle.tell(), size))
    cuts.append(size)
    return [(start, end - start) for start, end in zip(cuts, cuts[1:], strict=False) if end > start]


class _LongLine(Exception):
    """A line over ``MAX_LINE_BYTES``: the careful reader names it (pyarrow would read the whole line first)."""


class _FileRange(io.RawIOBase):
    """A read-only stream over ``length`` bytes of a file from ``offset``, that stops at a line over the limit:
    pyarrow's parser grows its block until a line ends, so a 3 GB file without line ends was read whole."""

    def __init__(self, file: Path, offset: int, length: int) -> None:
        super().__init__()
        self._handle = open(file, "rb")  # noqa: SIM115 - closed with the stream
        self._handle.seek(offset)
        self._left = length
        self._line = LineBytes(MAX_LINE_BYTES)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:  # what pyarrow calls: the bytes, read once
        wanted = self._left if size is None or size < 0 else min(size, self._left)
        data = self._handle.read(wanted) if wanted > 0 else b""
        self._left -= len(data)
        if self._line.passes_limit(data):
            raise _LongLine
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:
        data = self.read(len(buffer))
        memoryview(buffer)[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._handle.close()
        super().close()


def _parse_part(file: Path, offset: int, length: int, capacity: int, kind: Kind, delimiter: bytes) -> _Part | None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    width = LAYOUT[kind][0]
    names = [f"f{i}" for i in range(width)]
    value_index = 4 if kind == "run" else 3
    value_type = pa.float64() if kind == "run" else pa.int64()
    other = b" " if delimiter == b"\t" else b"\t"
    qids = _QidCodes()
    docids: list[pa.Array] = []
    columns = _Columns(capacity, np.float64 if kind == "run" else np.int64)
    with _FileRange(file, offset, length) as stream:
        try:
            reader = pacsv.open_csv(
                stream,
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
                qid_codes = qids.batch(batch.column(0))
                if qid_codes is None:
                    return None
                docids.append(batch.column(2))
                columns.append(qid_codes, string_fingerprints(batch.column(2)), column.to_numpy())
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeError, _LongLine):
            return None
    if kind == "run" and np.isnan(columns.arrays()[2]).any():
        return None
    return _Part(qids.index, docids, columns)


def _join(parts: list[_Part], kind: Kind, source: str, file: Path) -> TrecTable:
    """One table from the parts in file order; qid codes follow first appearance in the whole file.

    The first part's codes are already in that order; each later part is renumbered and appended to
    the first part's columns, then freed.
    """
    import pyarrow as pa

    first = parts[0]
    qid_index = first.qids  # grown by the later parts' new qids
    for part in parts[1:]:
        renumber = np.fromiter((qid_index.setdefault(q, len(qid_index)) for q in part.qids), np.int32, len(part.qids))
        codes, fingerprints, values = part.columns.arrays()
        first.columns.append(renumber[codes], fingerprints, values)
        part.columns = None  # free as we go
    codes, fingerprints, values = first.columns.arrays()
    return TrecTable(
        kind=kind,
        source=source,
        qids=[qid.decode("utf-8", "surrogateescape") for qid in qid_index],
        qid_codes=codes,
        docids=pa.chunked_array([chunk for part in parts for chunk in part.docids], type=pa.binary()),
        values=values,
        path=file,
        _keys=pair_keys(fingerprints, codes),
    )


class _Columns:
    """Growable qid-code, fingerprint and value columns, filled batch by batch without a final concatenation."""

    def __init__(self, capacity: int, value_dtype: type) -> None:
        self.size = 0
        self.codes = np.empty(capacity, dtype=np.int32)
        self.fingerprints = np.empty(capacity, dtype=np.uint64)
        self.values = np.empty(capacity, dtype=value_dtype)

    def append(self, codes: np.ndarray, fingerprints: np.ndarray, values: np.ndarray) -> None:
        end = self.size + codes.size
        if end > self.codes.size:
            capacity = max(end, int(self.codes.size * 1.5))
            self.codes = _grown(self.codes, capacity)
            self.fingerprints = _grown(self.fingerprints, capacity)
            self.values = _grown(self.values, capacity)
        self.codes[self.size : end] = codes
        self.fingerprints[self.size : end] = fingerprints
        self.values[self.size : end] = values
        self.size = end

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.size
        return self.codes[:n], self.fingerprints[:n], self.values[:n]


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    bigger = np.empty(capacity, dtype=array.dtype)
    bigger[: array.size] = array
    return bigger


class _QidCodes:
    """Codes of one part's qids in first-seen order. A few qids per batch (a ranked run) are looked
    up in a dict; many (queries interleaved) in C with pyarrow's ``index_in``, so no file costs
    Python work per line."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}
        self._known: pa.Array | None = None  # the first len(_known) qids of ``index``, for index_in

    def batch(self, column: pa.Array) -> np.ndarray | None:
        """Codes of a batch's qids, or None when a qid starts with '#' (a comment line).

        Runs list a query's lines together, so the batch is cut where the qid changes (an exact
        byte comparison of neighbours) and only the first qid of each stretch is looked up.
        """
        import pyarrow.compute as pc

        n = len(column)
        changed = pc.not_equal(column.slice(1), column.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        starts = np.concatenate(([0], np.flatnonzero(changed) + 1))
        if starts.size > n // 4 + 1:
            encoded = pc.dictionary_encode(column)
            codes = self._many(encoded.dictionary)
            return None if codes is None else codes[encoded.indices.to_numpy()]
        codes = self._few(column.take(starts).to_pylist())
        return None if codes is None else np.repeat(codes, np.diff(np.append(starts, n)))

    def _few(self, qids: list[bytes]) -> np.ndarray | None:
        index = self.index
        if any(qid.startswith(b"#") for qid in qids if qid not in index):
            return None  # comment lines: the careful reader skips them
        return np.fromiter((index.setdefault(qid, len(index)) for qid in qids), dtype=np.int32, count=len(qids))

    def _many(self, qids: pa.Array) -> np.ndarray | None:
        import pyarrow as pa
        import pyarrow.compute as pc

        if self._known is None or len(self._known) < len(self.index):
            self._known = pa.array(list(self.index), type=pa.binary())
        codes = pc.fill_null(pc.index_in(qids, value_set=self._known), -1).to_numpy().astype(np.int32)
        new = np.flatnonzero(codes < 0)
        if new.size:
            fresh = self._few(qids.take(new).to_pylist())  # distinct: qids is a dictionary
            if fresh is None:
                return None
            codes[new] = fresh
        return codes


def _has_empty_or_byte(column: pa.Array, byte: bytes) -> bool:
    """True if a value is empty or contains ``byte`` (the other whitespace delimiter)."""
    if len(column) == 0:
        return False
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)[column.offset : column.offset + len(column) + 1]
    if np.any(offsets[1:] == offsets[:-1]):
        return True
    data = np.frombuffer(column.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    return bool(data.size) and bytes(byte) in data.tobytes()
