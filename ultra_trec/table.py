"""Rows of a TREC run or qrels file as columns, and the duplicate check trec_eval's rules require.

Duplicates (a docid twice in one query of a run, a (qid, docid) pair twice in qrels) are refused
naming both lines: they are found by sorting 64-bit fingerprints of (qid, docid), and only then
are the lines located and the actual strings compared.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from ultra_base.errors import InputError
from ultra_trec.reading.fingerprint import mix64, string_fingerprints

if TYPE_CHECKING:
    import pyarrow as pa

Kind = Literal["run", "qrels"]
SORT_SLICE_KEYS = 1 << 19  # keys per slice of the duplicate check (4 MB), sorted in parallel

LAYOUT: dict[str, tuple[int, str, str]] = {
    # kind: (fields, what the line looks like, name of the value column)
    "run": (6, "qid Q0 docid rank score tag", "score"),
    "qrels": (4, "qid iter docid rel", "rel"),
}


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

    def docids_at(self, rows: np.ndarray) -> pa.Array:
        """The docids of ``rows``, in that order.

        Taken chunk by chunk: Arrow's take on a chunked array first joins every chunk into one
        array, a copy of all the docids for each call.
        """
        import pyarrow as pa

        chunks = self.docids.chunks
        if len(chunks) == 1:
            return chunks[0].take(rows)
        if rows.size == 0:
            return pa.array([], type=self.docids.type)
        starts = np.cumsum([0] + [len(chunk) for chunk in chunks])
        chunk = np.searchsorted(starts, rows, side="right") - 1
        by_chunk = np.argsort(chunk, kind="stable")
        bounds = np.searchsorted(chunk[by_chunk], np.arange(len(chunks) + 1))
        pieces = [
            chunks[k].take(rows[by_chunk[bounds[k] : bounds[k + 1]]] - starts[k])
            for k in np.flatnonzero(bounds[1:] > bounds[:-1]).tolist()
        ]
        back = np.empty_like(by_chunk)
        back[by_chunk] = np.arange(by_chunk.size)
        return pa.concat_arrays(pieces).take(back)

    def line_of(self, row: int) -> int | None:
        """The line number of ``row`` in the source file (None for in-memory data)."""
        if self.lines is not None:
            return int(self.lines[row])
        if self.path is None:
            return None
        return nth_data_line(self.path, row)

    def where(self, row: int) -> str:
        """``line N`` or the mapping entry of ``row``, for messages."""
        line = self.line_of(row)
        if line is not None:
            return f"line {line}"
        return f"{self.source}[{self.qids[int(self.qid_codes[row])]!r}][{self.docids[row].as_py()!r}]"


def pair_keys(fingerprints: np.ndarray, query: np.ndarray) -> np.ndarray:
    """64-bit keys of (query index, docid) per row: ``fingerprint ^ mix64(query + 1)``.

    Equal pairs have equal keys; distinct pairs rarely do, so a key match is checked on the bytes.
    ``fingerprints`` (a fresh array from the caller) is turned into the keys in place, with one
    ``mix64`` per distinct query gathered per row: less time and memory than mixing every row.
    """
    if query.size == 0:
        return fingerprints
    per_query = mix64(np.arange(1, int(query.max()) + 2, dtype=np.uint64))
    fingerprints ^= per_query[query]
    return fingerprints


def rekey(keys: np.ndarray, old_query: np.ndarray, new_query: np.ndarray) -> np.ndarray:
    """The keys of the same rows with query indices renumbered from ``old_query`` to ``new_query``."""
    return keys ^ mix64(old_query.astype(np.uint64) + np.uint64(1)) ^ mix64(new_query.astype(np.uint64) + np.uint64(1))


def check_duplicates(table: TrecTable) -> None:
    """Raise InputError naming both lines if a (qid, docid) pair occurs twice."""
    if not has_repeated_keys(table.keys, table.qid_codes):
        return
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


def block_starts(query: np.ndarray) -> np.ndarray:
    """The rows where the query changes (row 0 included): each query's first row when its rows are contiguous."""
    if query.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate(([0], np.flatnonzero(query[1:] != query[:-1]) + 1))


def has_repeated_keys(keys: np.ndarray, query: np.ndarray) -> bool:
    """True if two rows of the same query (``query`` holds non-negative codes) share a key.

    When each query's rows are contiguous (as in run files), only each query's block needs sorting:
    blocks of equal padded width are sorted together as the rows of a 2-D array, which stays in
    cache and takes a fraction of the time of one sort over all rows. Other layouts sort all keys
    at once (and may also report equal keys of different queries: a rare fingerprint collision
    that the caller's check of the actual strings dismisses).
    """
    n = keys.size
    if n < 2:
        return False
    starts = block_starts(query)
    if starts.size == 1 or starts.size != np.count_nonzero(np.bincount(query)) or starts.size * 8 > n:
        ordered = np.sort(keys)
        return bool(np.any(ordered[1:] == ordered[:-1]))
    lengths = np.diff(np.append(starts, n))
    widths = lengths
    if np.unique(lengths).size > 8:  # many block lengths: pad each block to a power of two
        widths = 1 << np.ceil(np.log2(lengths)).astype(np.int64)
    threads = min(os.cpu_count() or 1, 8)
    with ThreadPoolExecutor(threads) if threads > 1 else contextlib.nullcontext() as pool:
        for width in np.unique(widths).tolist():  # one grid at a time, so the padding never piles up
            chosen = widths == width
            own = lengths[chosen]
            block_keys = keys if own.size == lengths.size else keys[np.repeat(chosen, lengths)]
            if np.all(own == width):
                grid = block_keys.reshape(own.size, width)
            else:
                grid = np.full((own.size, width), np.iinfo(np.uint64).max, dtype=np.uint64)
                grid[np.arange(width) < own[:, None]] = block_keys  # row-major order: block by block
            step = max(1, SORT_SLICE_KEYS // width)  # a slice per thread
            pieces = [(grid[top : top + step], own[top : top + step]) for top in range(0, own.size, step)]
            found = map if pool is None or len(pieces) == 1 else pool.map  # numpy's sort releases the GIL
            if any(found(_has_repeats, *zip(*pieces, strict=True))):
                return True
    return False


def _has_repeats(grid: np.ndarray, own: np.ndarray) -> bool:
    """True if a row of ``grid`` holds a repeated key among its first ``own`` entries."""
    ordered = np.sort(grid, axis=1)
    same = ordered[:, 1:] == ordered[:, :-1]
    # padding sorts last (the largest value); only pairs inside a block's own length count
    same &= np.arange(1, grid.shape[1]) < own[:, None]
    return bool(np.any(same))


def nth_data_line(path: Path, row: int) -> int | None:
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
