"""The size of one line of a file read line by line (JSON Lines, TSV, CSV, batch results): ``MAX_LINE_CHARS``.

A corpus or a batch results file may legitimately be many GB, so such a file has no size limit; each of its lines
has. A file with no line end (a 3 GB sparse file, a binary) was one line, read whole into memory to a MemoryError;
``bounded_lines`` reads at most the limit and refuses the line, naming the file and the line. It is the one reader of
lines within a limit, text or bytes: the kit's readers, the batch results, the estimate's ledger, a run's journal and
the TREC reader (whose lines have a smaller limit). In the base, so that the libraries read within the same limit as
the kit. A pass over a file's bytes (a checksum) that must not read gigabytes past such a line watches its lines
with ``LineBytes``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO, AnyStr

from ultra_base.errors import InputError

MAX_LINE_CHARS = 64 * 1024 * 1024  # one line of a JSONL or CSV file: a record (the longest measured: a few MB)
ONE_RECORD = (
    "; each line is one record: check that it is the file meant (a file with no line ends is read as one line), "
    "or split the record"
)


def bounded_lines(
    handle: IO[AnyStr],
    file: str | os.PathLike[str],
    *,
    limit: int = MAX_LINE_CHARS,
    why: str = ONE_RECORD,
    numbered: bool = True,
    skip_long: bool = False,
) -> Iterator[AnyStr]:
    """The lines of a text or binary ``handle``, each read with at most ``limit`` characters (bytes, of a binary
    one): a longer line is an InputError naming ``file``, the line (unless not ``numbered``: a handle read from an
    offset), the limit and ``why`` (what a line is, what to do). With ``skip_long`` it is passed over instead, read in
    pieces of the limit, never held whole (damage that a reader of the files ultra writes tolerates).

    A 3 GB file with no line end was one line, read whole to a MemoryError."""
    end = handle.read(0)  # "" or b"": what readline returns at the end of the file
    unit, line_end = ("bytes", b"\n") if isinstance(end, bytes) else ("characters", "\n")
    for number, line in enumerate(iter(lambda: handle.readline(limit + 1), end), start=1):
        if len(line) <= limit:
            yield line
        elif skip_long:
            while line and not line.endswith(line_end):  # the rest of the long line
                line = handle.readline(limit + 1)
        else:
            raise InputError(
                f"a line longer than {limit:,} {unit}{why}", path=str(file), line=number if numbered else None
            )


class LineBytes:
    """The bytes of the line being read, over the blocks of a file read in binary (a checksum's pass, which decodes
    nothing; the TREC reader's parser, which would hold a line whole). A line has at most as many characters as
    bytes, so only a line of more than ``limit`` bytes can be over the limit: ``passes_limit`` says so at the first
    block that shows one, and the pass can hand the file to the line reader (``bounded_lines``), which refuses the
    line or finds it within the limit (multi-byte characters)."""

    def __init__(self, limit: int = MAX_LINE_CHARS) -> None:
        self.limit = limit  # bytes a line may have (the TREC reader's are fewer)
        self.count = 0  # bytes of the unfinished line, from its start to the end of the last block

    def passes_limit(self, block: bytes) -> bool:
        """True when a line that ``block`` (the file's next bytes) continues, holds or starts has over ``limit``
        bytes (its line end included, as ``bounded_lines`` counts it)."""
        start = 0
        while (end := block.find(b"\n", start)) >= 0:
            if self.count + end + 1 - start > self.limit:
                return True
            self.count = 0
            # The lines after this one lie in the block's rest: a rest within the limit holds none over it, so the
            # search goes on from its last line (unfinished), and a 1 MiB block costs three searches.
            start = end + 1 if len(block) - end - 1 > self.limit else block.rfind(b"\n") + 1
        self.count += len(block) - start
        return self.count > self.limit
