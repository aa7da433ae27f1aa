"""``LineBytes``: over the blocks of a file read in binary, a line of more than MAX_LINE_CHARS bytes (its line end
included, as ``bounded_lines`` counts it) is seen at the first block that shows it, wherever it lies."""

from __future__ import annotations

import pytest

from ultra_base.line_limits import MAX_LINE_CHARS, LineBytes

MIB = 1 << 20


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
