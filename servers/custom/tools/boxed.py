"""``output_extract_from_boxed``: the final answer of each model output, from its last \\boxed{...}."""

from __future__ import annotations

from collections import Counter
from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from servers.custom.boxed import extract_boxed
from ultra_kit.factory import tool_hints


class ExtractInfo(TypedDict):
    boxed: int
    unclosed: int
    none: int


class ExtractResult(TypedDict):
    pred_ls: list[str]
    extract_info: ExtractInfo


@tool_hints(read_only=True, idempotent=True)
def output_extract_from_boxed(
    ans_ls: Annotated[list[str | None], Field(description="model outputs, one per question")],
) -> ExtractResult:
    """The final answer of each output: the content of its last \\boxed{...} (nested braces matched).

    An output without a box keeps its whole text; one cut off inside the box keeps the rest of the
    text. extract_info counts the three cases. A missing output (null) becomes "".
    """
    extracted = [extract_boxed(answer or "") for answer in ans_ls]
    counts = Counter(item.found for item in extracted)
    info: ExtractInfo = {"boxed": counts["boxed"], "unclosed": counts["unclosed"], "none": counts["none"]}
    return {"pred_ls": [item.answer for item in extracted], "extract_info": info}


TOOLS = [output_extract_from_boxed]
