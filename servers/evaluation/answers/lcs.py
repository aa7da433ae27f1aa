"""Length of the longest common subsequence of two token sequences, bit-parallel over Python ints.

The classic dynamic programme fills an m x n table in Python, one cell at a time. The
bit-parallel form (Allison & Dix 1986; Crochemore et al. 2001; Hyyro 2004) keeps one table row
as the bits of an integer and advances a whole row with four big-integer operations, so the cost
is m steps of O(n / 64) machine words each, all inside CPython's integer code.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def match_masks(tokens: Sequence[Hashable]) -> dict[Hashable, int]:
    """For each distinct token, an int whose bit j is set where ``tokens[j]`` is that token."""
    positions: dict[Hashable, list[int]] = {}
    for index, token in enumerate(tokens):
        positions.setdefault(token, []).append(index)
    masks: dict[Hashable, int] = {}
    for token, where in positions.items():
        mask = 0
        for index in where:
            mask |= 1 << index
        masks[token] = mask
    return masks


def lcs_length_masks(rows: Sequence[Hashable], masks: dict[Hashable, int], columns: int) -> int:
    """LCS length of ``rows`` against a sequence of ``columns`` tokens given by its ``match_masks``.

    Bit j of ``row`` is 1 while column j has not yet been matched; each step adds the matches of the
    next row token (Crochemore et al.: ``V = (V + U) | (V - U)`` with ``U = V & M``). The LCS length
    is the number of zero bits among the low ``columns`` bits at the end.
    """
    full = (1 << columns) - 1
    row = full
    get = masks.get
    for token in rows:
        match = get(token)
        if match:
            common = row & match
            row = ((row + common) | (row - common)) & full
    return columns - row.bit_count()


def lcs_length(first: Sequence[Hashable], second: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two sequences of hashable tokens."""
    if not first or not second:
        return 0
    # Loop over the shorter sequence: the step count is what costs in Python.
    if len(first) > len(second):
        first, second = second, first
    return lcs_length_masks(first, match_masks(second), len(second))
