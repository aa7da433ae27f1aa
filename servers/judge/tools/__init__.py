"""The judge server's MCP tools: one module per tool family, each with its ``TOOLS``.

A tool module is a thin face (the tool functions and their signatures) over the logic of one
sub-package (``relevance``, ``nuggets``, ``answers``, ``hallucination``); it imports no other tool
module. A tool that runs its LLM work in passes declares it (``ultra_llm.batch_mode.passes.runs_in_passes``),
which is how ``export_requests`` knows it can export its requests.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

FAMILIES = ("relevance", "nuggets", "answers", "rubric", "hallucination", "batch")


def tools() -> Iterator[Callable[..., Any]]:
    """Every tool, family by family; each module is imported just before its tools are yielded."""
    for family in FAMILIES:
        yield from importlib.import_module(f"{__name__}.{family}").TOOLS
