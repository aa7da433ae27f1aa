"""Lines of a JSON Lines (or TSV) file read one at a time, each within the size of one record (``MAX_RECORD_BYTES``).

A corpus or a batch results file may legitimately be many GB, so the file has no size limit; each of its lines
has. A file with no line end (a 3 GB sparse file, a binary, a pretty-printed giant) was one line, read whole
into memory to a MemoryError; here it is refused at the first line longer than the limit, after reading at most
the limit, with an InputError naming the file, the line and what to do.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from ultra_base.errors import InputError
from ultra_base.file_limits import MAX_RECORD_BYTES

LONG_LINE_ADVICE = (
    "Each line holds one record (a JSON Lines or TSV file): check that it is the file meant (a file with no line "
    "ends is read as one line), or split the record"
)


def limited_lines(path: str | os.PathLike[str], *, shown: str | None = None) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of ``path`` (UTF-8, a BOM accepted), each at most MAX_RECORD_BYTES.

    A longer line, or one that is not UTF-8, is an InputError naming the file (``shown``: as the caller names
    it; default ``path``) and the line.
    """
    name = str(path) if shown is None else shown
    with open(Path(path), "rb") as handle:
        for number, raw in enumerate(iter(partial(handle.readline, MAX_RECORD_BYTES + 1), b""), start=1):
            if len(raw) > MAX_RECORD_BYTES:
                raise InputError(
                    f"a line longer than {MAX_RECORD_BYTES:,} bytes, the most one record may have; it was not read. "
                    + LONG_LINE_ADVICE,
                    path=name,
                    line=number,
                )
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 text ({exc.reason})", path=name, line=number) from None
            yield number, text
