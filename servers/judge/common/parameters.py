"""Parameter types shared by the judge tools; the defaults of the settings live in parameter.yaml only."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ultra_kit.llm_mapping import llm_mapping_description

LLMSpec = Annotated[dict[str, Any], Field(description=llm_mapping_description())]
CachePath = Annotated[str, Field(description="SQLite answer cache ('' = none)")]
SavePath = Annotated[str, Field(description="directory or file name for the result")]
FailedFraction = Annotated[
    float,
    Field(
        description="fail the tool (no result written) when more than this share of its judgments failed "
        "(error / parse_error); it always fails when none succeeded",
        ge=0,
        le=1,
    ),
]
# The lists an answer judge takes (each judge's ``inputs`` names some of them, q_ls always).
INPUT_TYPES: dict[str, Any] = {
    "q_ls": Annotated[list[str], Field(description="the questions, one per item")],
    "pred_ls": Annotated[
        list[str | None],
        Field(description="the answers to judge, one per question; None = the system failed (status unanswered)"),
    ],
    "gt_ls": Annotated[list[Any], Field(description="reference answers, a text (or a list, first used) per question")],
    "ret_psg": Annotated[list[list[str]], Field(description="the passages shown with each question, in rank order")],
}
Ids = Annotated[list[str] | None, Field(description="item ids (default: positions)")]
PromptFiles = Annotated[
    dict[str, str],
    Field(description="your own version of a built-in prompt: {prompt name: file}, e.g. {idk_v1: my_idk.txt}; "
          "its placeholders and reply fields must be the built-in's ({} = the built-in prompts)"),
]  # fmt: skip
RecordedJudgments = Annotated[
    str,
    Field(description="a file of judgments made earlier, JSONL rows {id, answer, metric: value}: read instead of "
          "asking judge_llm, nothing sent ('' = ask judge_llm)"),
]  # fmt: skip
