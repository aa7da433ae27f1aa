"""Extracting the final answer from the last ``\\boxed{...}`` of a model's output, braces matched."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

BOXED = "\\boxed{"
_TEXT_WRAPPER = re.compile(r"^\\text\{(.*)\}$", re.DOTALL)

Found = Literal["boxed", "unclosed", "none"]


@dataclass(frozen=True)
class Extracted:
    """The extracted answer and how it was found."""

    answer: str
    found: Found


def extract_boxed(text: str) -> Extracted:
    """The content of the last ``\\boxed{...}`` in ``text`` with nested braces matched.

    ``found`` is "boxed" for a closed box; "unclosed" when the output ends inside the box (a
    truncated generation: the rest of the text is taken); "none" when there is no box (the whole
    text, stripped, is the answer). Surrounding ``$`` and a ``\\text{...}`` wrapper are removed.
    """
    start = text.rfind(BOXED)
    if start < 0:
        return Extracted(text.strip(), "none")
    position = start + len(BOXED)
    depth = 1
    cursor = position
    while cursor < len(text):
        char = text[cursor]
        if char == "\\" and cursor + 1 < len(text):
            cursor += 2  # an escaped character, e.g. \{ or \}, does not open or close
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return Extracted(_clean(text[position:cursor]), "boxed")
        cursor += 1
    return Extracted(_clean(text[position:]), "unclosed")


def _clean(content: str) -> str:
    content = content.strip().strip("$").strip()
    match = _TEXT_WRAPPER.match(content)
    return match.group(1).strip() if match else content
