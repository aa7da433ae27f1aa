"""The size of one line of a file read line by line (JSON Lines, TSV, CSV, batch results): ``MAX_LINE_CHARS``.

A corpus or a batch results file may legitimately be many GB, so such a file has no size limit; each of its lines
has. A file with no line end (a 3 GB sparse file, a binary) was one line, read whole into memory to a MemoryError;
``bounded_lines`` reads at most the limit and refuses the line, naming the file and the line. In the base, so that
the libraries (``ultra_llm``'s batch results) read within the same limit as the kit's readers. A pass over a file's
bytes (a checksum) that must not read gigabytes past such a line watches its lines with ``LineBytes``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ultra_base.errors import InputError

MAX_LINE_CHARS = 64 * 1024 * 1024  # one line of a JSONL or CSV file: a record (the longest measured: a few MB)
LONG_LINE_ADVICE = "check that it is the file meant (a file with no line ends is read as one line), or split the record"


def bounded_lines(handle: Any, file: str | os.PathLike[str]) -> Iterator[str]:
    """The lines of a text ``handle``, each read with at most MAX_LINE_CHARS characters: a longer one is an
    InputError naming ``file`` and its line (a 3 GB file with no line end was one line, read whole to a MemoryError)."""
    for number, line in enumerate(iter(lambda: handle.readline(MAX_LINE_CHARS + 1), ""), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise InputError(
                f"a line longer than {MAX_LINE_CHARS:,} characters; each line is one record: {LONG_LINE_ADVICE}",
                path=str(file),
                line=number,
            )
        yield line


class LineBytes:
    """The bytes of the line being read, over the blocks of a file read in binary (a checksum's pass, which decodes
    nothing). A line has at most as many characters as bytes, so only a line of more than MAX_LINE_CHARS bytes can be
    over the limit: ``passes_limit`` says so at the first block that shows one, and the pass can hand the file to the
    text reader (``bounded_lines``), which refuses the line or finds it within the limit (multi-byte characters)."""

    def __init__(self) -> None:
        self.count = 0  # bytes of the unfinished line, from its start to the end of the last block

    def passes_limit(self, block: bytes) -> bool:
        """True when a line that ``block`` (the file's next bytes) continues, holds or starts has over MAX_LINE_CHARS
        bytes (its line end included, as ``bounded_lines`` counts it)."""
        start = 0
        while (end := block.find(b"\n", start)) >= 0:
            if self.count + end + 1 - start > MAX_LINE_CHARS:
                return True
            self.count = 0
            # The lines after this one lie in the block's rest: a rest within the limit holds none over it, so the
            # search goes on from its last line (unfinished), and a 1 MiB block costs three searches.
            start = end + 1 if len(block) - end - 1 > MAX_LINE_CHARS else block.rfind(b"\n") + 1
        self.count += len(block) - start
        return self.count > MAX_LINE_CHARS
