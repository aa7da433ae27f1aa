"""``generation_init`` checks the model settings, ``generate`` answers prompts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.generation.llm import llm_settings
from ultra_kit.factory import tool_hints
from ultra_kit.llm_mapping import llm_mapping_description

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

LLMParam = Annotated[dict[str, Any], Field(description=llm_mapping_description())]


class GenerationInfo(TypedDict):
    backend: str
    model_id: str
    base_url: str
    model_path: str
    note: str


class InitResult(TypedDict):
    generation_info: GenerationInfo


class GenerateInfo(TypedDict):
    backend: str
    model_id: str
    answers: int
    errors: int
    usage: dict[str, int]
    seconds: float


class GenerateResult(TypedDict):
    ans_ls: list[str]
    generate_info: GenerateInfo
    result_path: str


SMOKE_TEST_NOTE = "SmolLM2-135M is an offline smoke-test model: its answers show the pipeline works, not answer quality"


@tool_hints(read_only=True, idempotent=True)
def generation_init(*, generation_llm: LLMParam) -> InitResult:
    """Check the generation settings: the backend, the model (a local model must be installed) and the endpoint.

    Loads nothing; the model is loaded by the first generate call. No request is sent.
    """
    settings = llm_settings(generation_llm=generation_llm)
    model_path, note = "", ""
    if settings.backend == "local":
        from ultra_llm.local.models import resolve_chat_model

        folder, gguf = resolve_chat_model(settings.model_id)
        model_path = str(folder / gguf) if gguf else str(folder)
        if settings.model_id in ("", "smollm2"):
            note = SMOKE_TEST_NOTE
    info: GenerationInfo = {
        "backend": settings.backend,
        "model_id": settings.model_id,
        "base_url": settings.base_url,
        "model_path": model_path,
        "note": note,
    }
    return {"generation_info": info}


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def generate(
    prompt_ls: Annotated[list[str], Field(description="one prompt per item (the user message)")],
    *,
    generation_llm: LLMParam,
    sampling_params: Annotated[
        dict[str, Any],
        Field(description="temperature, max_tokens (at most caps.max_tokens), top_p, seed ... sent to the endpoint"),
    ],
    system_prompt: Annotated[str, Field(description="optional system message")],
    generation_cache: Annotated[str, Field(description="SQLite answer cache; '' = off")],
    save_path: Annotated[str, Field(description="folder (generate_<timestamp>.jsonl) or file name")],
    ctx: Context | None = None,
) -> GenerateResult:
    """Answer each prompt with the configured model; ans_ls is aligned with prompt_ls.

    Requests run concurrently (generation_llm.max_workers), transient failures are retried, repeated
    requests are answered from the cache, and tokens are counted. A prompt whose request failed
    gets "" and is counted in errors (the saved JSONL names the error); if every request fails the
    tool fails with the first error.
    """
    from servers.generation.answering import run_generate

    return await run_generate(  # type: ignore[return-value]
        prompt_ls,
        generation_llm=generation_llm,
        sampling_params=sampling_params,
        system_prompt=system_prompt,
        generation_cache=generation_cache,
        save_path=save_path,
        ctx=ctx,
    )


TOOLS = [generation_init, generate]
