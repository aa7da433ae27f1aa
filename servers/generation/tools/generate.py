"""``generation_init`` checks the model settings, ``generate`` answers prompts."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.generation.llm import generate_all, llm_settings, shared_client
from ultra_base.errors import InputError
from ultra_kit.factory import tool_hints
from ultra_kit.files import atomic_write_jsonl, result_path
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
        dict[str, Any], Field(description="temperature, max_tokens, top_p, seed ... sent to the endpoint")
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
    started = time.perf_counter()
    settings = llm_settings(generation_llm=generation_llm)
    sampling = dict(sampling_params)
    if not prompt_ls:
        raise InputError("prompt_ls is empty; run a prompt tool (e.g. prompt.qa_rag_boxed) first")
    client, owned = shared_client(settings, generation_cache)

    async def on_done(done: int, total: int) -> None:
        if ctx is not None:
            await ctx.report_progress(done, total, f"answered {done}/{total}")

    if ctx is not None:
        loading = " (loading the local model first)" if settings.backend == "local" else ""
        await ctx.report_progress(0, len(prompt_ls), f"generating{loading}")
    try:
        results, usage = await generate_all(client, prompt_ls, sampling, system_prompt=system_prompt, on_done=on_done)
    finally:
        if owned:
            await client.aclose()
            client.cache.close()
    errors = [r for r in results if r.status != "ok"]
    if errors and len(errors) == len(results):
        raise InputError(f"every generation request failed; the first error: {errors[0].error}")
    rows = [
        {
            "index": i,
            "prompt": prompt,
            "answer": r.answer,
            "status": r.status,
            "error": r.error,
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "cached": r.cached,
        }
        for i, (prompt, r) in enumerate(zip(prompt_ls, results, strict=True))
    ]
    path = atomic_write_jsonl(result_path(save_path, "generate", ".jsonl"), rows)
    info: GenerateInfo = {
        "backend": settings.backend,
        "model_id": settings.model_id,
        "answers": len(results) - len(errors),
        "errors": len(errors),
        "usage": usage,
        "seconds": round(time.perf_counter() - started, 3),
    }
    return {"ans_ls": [r.answer for r in results], "generate_info": info, "result_path": str(path)}


TOOLS = [generation_init, generate]
