"""What ``generate`` does (the tool face is ``tools/generate.py``): answer each prompt with the configured
model (concurrently, retried, cached), write the answers as JSON Lines and count what failed."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from servers.generation.llm import generate_all, llm_settings, shared_client
from ultra_base.errors import InputError
from ultra_kit.files import atomic_write_jsonl, result_path
from ultra_kit.limits.caps import capped

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


TOKEN_KEYS = ("max_tokens", "max_completion_tokens")  # an answer's token budget (OpenAI's old and new name)
CHOICE_KEYS = ("n", "best_of")  # completions made per request (best_of: vLLM and the legacy completions API)


def within_caps(sampling: dict[str, Any]) -> dict[str, Any]:
    """``sampling`` (sent as is to the endpoint), unless a key that multiplies what each request costs is over its
    cap: the tokens of an answer, the completions of a request (generate keeps the first; each is paid for)."""
    for key in TOKEN_KEYS:
        if sampling.get(key) is not None:
            capped(sampling[key], f"sampling_params.{key}", server="generation", name="max_tokens", minimum=1)
    for key in CHOICE_KEYS:
        if sampling.get(key) is not None:
            capped(sampling[key], f"sampling_params.{key}", server="generation", name="completions", minimum=1)
    return sampling


async def run_generate(
    prompt_ls: list[str],
    *,
    generation_llm: dict[str, Any],
    sampling_params: dict[str, Any],
    system_prompt: str,
    generation_cache: str,
    save_path: str,
    ctx: Context | None,
) -> dict[str, Any]:
    """``generate``'s result (its settings as the tool received them)."""
    started = time.perf_counter()
    settings = llm_settings(generation_llm=generation_llm)
    sampling = within_caps(dict(sampling_params))
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
    info: dict[str, Any] = {
        "backend": settings.backend,
        "model_id": settings.model_id,
        "answers": len(results) - len(errors),
        "errors": len(errors),
        "usage": usage,
        "seconds": round(time.perf_counter() - started, 3),
    }
    return {"ans_ls": [r.answer for r in results], "generate_info": info, "result_path": str(path)}
