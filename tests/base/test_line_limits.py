"""``bounded_lines``, the one reader of lines within a limit, of a text or a binary file; ``LineBytes``: over the
blocks of a file read in binary, a line of more than MAX_LINE_CHARS bytes (its line end included, as
``bounded_lines`` counts it) is seen at the first block that shows it, wherever it lies."""

from __future__ import annotations

from pathlib import Path

import pytest

from ultra_base.errors import InputError
from ultra_base.line_limits import MAX_LINE_CHARS, LineBytes, bounded_lines

MIB = 1 << 20
LINES = "one\nnaïve two\r\nthree"  # 'ï': two bytes, one character


def test_a_text_file_and_its_bytes_give_the_same_lines(tmp_path: Path) -> None:
    path = tmp_path / "lines.txt"
    path.write_bytes(LINES.encode())
    with path.open(encoding="utf-8", newline="") as text, path.open("rb") as raw:
        assert list(bounded_lines(text, path, limit=11)) == ["one\n", "naïve two\r\n", "three"]
        assert list(bounded_lines(raw, path, limit=12)) == [b"one\n", "naïve two\r\n".encode(), b"three"]


@pytest.mark.parametrize(("binary", "limit", "unit"), [(False, 10, "characters"), (True, 11, "bytes")])
def test_a_longer_line_names_the_file_the_line_the_limit_and_why(
    tmp_path: Path, binary: bool, limit: int, unit: str
) -> None:
    path = tmp_path / "lines.txt"
    path.write_bytes(LINES.encode())
    handle = path.open("rb") if binary else path.open(encoding="utf-8", newline="")
    with handle, pytest.raises(InputError) as caught:
        list(bounded_lines(handle, path, limit=limit, why=": not a list"))
    assert str(caught.value) == f"{path}:2: a line longer than {limit:,} {unit}: not a list"


def test_unnumbered_lines_name_the_file_only(tmp_path: Path) -> None:
    """A handle read from an offset (the estimate's ledger) knows no line numbers."""
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(b"ab\nabcdef\n")
    with path.open("rb") as handle, pytest.raises(InputError) as caught:
        list(bounded_lines(handle, path, limit=4, numbered=False))
    assert str(caught.value).startswith(f"{path}: a line longer than 4 bytes; each line is one record: check that")


@pytest.mark.parametrize("mode", ["r", "rb"])
def test_skipped_long_lines_are_read_in_pieces_and_the_others_kept(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text("a\n" + "x" * 25 + "\nb\n" + "y" * 5 + "\n" + "z" * 9)
    with path.open(mode) as handle:
        kept = list(bounded_lines(handle, path, limit=4, skip_long=True))
    assert [line if mode == "r" else line.decode() for line in kept] == ["a\n", "b\n"]  # the cut last line: long


def passes(*blocks: bytes) -> bool:
    """Whether LineBytes sees a line over the limit in ``blocks`` (asserting it is at the last block)."""
    line = LineBytes()
    seen = [line.passes_limit(block) for block in blocks]
    assert not any(seen[:-1]), seen
    return seen[-1]


def test_a_line_of_the_limit_in_bytes_line_end_included_is_within_it() -> None:
    head = b"x" * (MAX_LINE_CHARS - 1 - MIB)
    assert not passes(b"{}\n", head, b"y" * MIB + b"\n{}")
    assert passes(b"{}\n", head, b"y" * (MIB + 1) + b"\n{}")  # one byte more


def test_a_line_with_no_line_end_passes_at_the_block_that_takes_it_over() -> None:
    blocks = [b"\0" * MIB] * 64
    assert not passes(*blocks)
    assert passes(*blocks, b"\0")


def test_a_line_in_the_middle_of_a_block_longer_than_the_limit() -> None:
    """A block may hold whole lines longer than the limit: each is measured, not only its first and last."""
    short = b"a" * 10 + b"\n"
    assert passes(short * 3 + b"b" * MAX_LINE_CHARS + b"\n" + short)
    assert not passes(short * 3 + b"b" * (MAX_LINE_CHARS - 1) + b"\n" + short + b"c" * MAX_LINE_CHARS)


@pytest.mark.parametrize("cut", [0, 1, 5])
def test_short_lines_cut_anywhere_never_pass(cut: int) -> None:
    data = b"".join(b"%d\n" % n * (n % 7) for n in range(2000))
    blocks = [data[i : i + 97 + cut] for i in range(0, len(data), 97 + cut)]
    line = LineBytes()
    assert not any(line.passes_limit(block) for block in blocks)
    assert line.count == len(data) - data.rfind(b"\n") - 1
