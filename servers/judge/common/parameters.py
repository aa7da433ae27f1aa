"""Parameter types shared by the judge tools; the defaults of the settings live in parameter.yaml only."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

LLMSpec = Annotated[
    dict[str, Any],
    Field(
        description="the judge LLM {backend, base_url, model_id, api_key, reasoning, structured_output (always on "
        "for local), "
        "embedding_model, timeout (seconds per request), max_retries (per request and per unreadable reply), "
        "max_workers (requests in flight), endpoints (a pool: [{base_url, model_id, api_key, max_concurrency, "
        "weight}]), drain_after, cool_down, mode (online | batch), batch_max_requests, batch_max_bytes, "
        "batch_poll_interval, batch_completion_window}; keys left out take parameter.yaml's values, except that"
        " naming another base_url, endpoints (or backend local) without api_key sends no key"
    ),
]
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
    "pred_ls": Annotated[list[str], Field(description="the answers to judge, one per question")],
    "gt_ls": Annotated[list[Any], Field(description="reference answers, a text (or a list, first used) per question")],
    "ret_psg": Annotated[list[list[str]], Field(description="the passages shown with each question, in rank order")],
}
Ids = Annotated[list[str] | None, Field(description="item ids (default: positions)")]
