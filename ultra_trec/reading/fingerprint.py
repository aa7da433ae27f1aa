"""64-bit fingerprints of Arrow string columns, computed with numpy straight from the buffers.

Hashing millions of docids through a hash table (``dictionary_encode``) costs seconds; reading
three 8-byte words of each string (head, middle, tail) plus its length and mixing them in place costs
a few numpy passes. Equal strings always get equal fingerprints. Distinct strings of up to 7 bytes never
collide; longer ones collide when they agree on length and first, middle and last 8 bytes (ids that
differ only elsewhere, e.g. in byte 9 of 30), or by 64-bit chance. So every user of a fingerprint match
checks the actual strings before acting on it, and tries every string that shares the fingerprint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
# Lengths 0-8 times this odd constant differ above byte 7 of the shorter length's bytes, so strings of
# up to 7 bytes never collide, and a length change never cancels a one-byte change (as length << 56 did).
_LENGTH_SPREAD = np.uint64(0x9E3779B97F4A7C15)
_LOW_BYTES = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def mix64(values: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser: a bijection of uint64 that spreads every input bit."""
    x = values.astype(np.uint64, copy=True)
    _stir(x, np.empty_like(x))
    return x


def string_fingerprints(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """One uint64 per value of a string or binary column (32-bit offsets)."""
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = [_chunk_fingerprints(chunk) for chunk in chunks if len(chunk)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def _chunk_fingerprints(chunk: pa.Array) -> np.ndarray:
    import pyarrow as pa

    if pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type):
        chunk = chunk.cast(pa.binary())
    buffers = chunk.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32)[chunk.offset : chunk.offset + len(chunk) + 1]
    first, last = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    # 8 zero bytes either side, so every 8-byte read below stays inside the buffer.
    padded = np.zeros(last - first + 16, dtype=np.uint8)
    padded[8 : 8 + last - first] = data[first:last]
    words = np.ndarray(shape=(padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    starts = offsets[:-1].astype(np.int64) - first + 8
    lengths = np.diff(offsets).astype(np.int64)
    fingerprint = words[starts]
    if lengths.min(initial=8) < 8:
        fingerprint &= _LOW_BYTES[np.minimum(lengths, 8)]
    fingerprint ^= lengths.astype(np.uint64) * _LENGTH_SPREAD
    scratch = np.empty_like(fingerprint)
    # Longer strings fold in their last and middle 8 bytes, each after a stir of what came before;
    # up to 8 bytes, the final stir alone spreads (bytes, length).
    longer = slice(None) if lengths.min(initial=9) > 8 else np.flatnonzero(lengths > 8)
    start, length = starts[longer], lengths[longer]
    if length.size:
        part = fingerprint[longer]
        _stir(part, scratch[: part.size])
        part ^= words[start + length - 8]
        _stir(part, scratch[: part.size])
        part ^= words[start + (length >> 1) - 4]
        fingerprint[longer] = part
    _stir(fingerprint, scratch)
    return fingerprint


def _stir(x: np.ndarray, scratch: np.ndarray) -> None:
    """splitmix64's finaliser applied in place (``scratch``: a same-size buffer), no temporaries."""
    for shift, multiplier in ((30, _M1), (27, _M2)):
        np.right_shift(x, np.uint64(shift), out=scratch)
        x ^= scratch
        x *= multiplier
    np.right_shift(x, np.uint64(31), out=scratch)
    x ^= scratch
