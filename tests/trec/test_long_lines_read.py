"""A run or qrels file with a line far over the limit (a 3 GB sparse file of zero bytes after good lines: no disk is
used) is refused naming the line, after reading a few MiB of it. The fast reader read such a line whole: where it cuts
the file into parts (a line start after each cut) and, in a part, through pyarrow's parser (whose block grows until a
line ends): 3 GB read into memory before the careful reader named the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from ultra_base.errors import InputError
from ultra_trec.reading import fast_reader
from ultra_trec.reading.io import MAX_LINE_BYTES, read_qrels, read_run

ROOT = Path(__file__).resolve().parents[2]
HEAD = 100  # good lines before the long one
pytestmark = pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts bytes read with /proc/self/io")


def bytes_read() -> int:
    """The bytes this process has read so far (``rchar`` of /proc/self/io: every read call, of every thread)."""
    for row in Path("/proc/self/io").read_text().splitlines():
        if row.startswith("rchar:"):
            return int(row.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def big(folder: Path, which: str) -> Path:
    good = (ROOT / "data" / "trec" / ("qrels.test" if which == "qrels" else "results.test")).read_text().splitlines()
    path = folder / f"big.{which}"
    path.write_text("".join(line + "\n" for line in good[:HEAD]), encoding="utf-8")
    with path.open("r+b") as handle:
        handle.truncate(3 * 1024**3)
    return path


@pytest.mark.parametrize("parts", [1, 2, 4])
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_a_3_gb_line_is_named_after_a_few_mib(tmp_path: Path, monkeypatch, which: str, parts: int) -> None:
    """One part: pyarrow's parser met the line; two or four: the cuts fell inside it."""
    monkeypatch.setattr(fast_reader.os, "cpu_count", lambda: parts)
    path = big(tmp_path, which)
    before = bytes_read()
    with pytest.raises(InputError, match=f"big.{which}:{HEAD + 1}: a line longer than 1,048,576 bytes: not a {which}"):
        (read_qrels if which == "qrels" else read_run)(path)
    read = bytes_read() - before
    assert read < 16 * MAX_LINE_BYTES, f"{read:,} bytes read"


@pytest.mark.parametrize("parts", [1, 2])
def test_a_long_line_within_the_limit_is_read_fast(tmp_path: Path, monkeypatch, parts: int) -> None:
    """A qrels line of almost 1 MiB (a long docid) among short ones is within the limit: the fast reader reads the
    file, as the careful reader does."""
    monkeypatch.setattr(fast_reader, "PART_MIN_BYTES", 1024)
    monkeypatch.setattr(fast_reader.os, "cpu_count", lambda: parts)
    docid = "d" * (MAX_LINE_BYTES - 100)
    lines = [f"q{n % 7} 0 doc{n} {n % 3}" for n in range(5000)]
    lines.insert(2500, f"q1 0 {docid} 1")
    path = tmp_path / "qrels"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    head = path.read_bytes()[: fast_reader.SNIFF_BYTES]
    table = fast_reader.read_fast(path, "qrels", str(path), head)
    assert table is not None and len(table) == 5001
    assert docid.encode() in table.docids.to_pylist()
    assert table.values.tolist() == [int(line.split()[3]) for line in lines]
