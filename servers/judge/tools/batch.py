"""Offline batch files: ``export_requests`` writes a judge tool's requests as batch-input JSONL, and
``import_results`` reads the output files of vLLM ``run-batch`` or the OpenAI Batch API into the cache.

Between the two, the files can travel to a machine with a GPU and no network path to this one. Run
the same tool with the same settings afterwards: it answers from the cache and sends nothing. A tool
that asks again after an unreadable reply (a repair) needs a second export/import round for those.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.judge.common.llm_settings import judge_settings
from servers.judge.common.parameters import CachePath, LLMSpec, SavePath
from ultra_base.errors import InputError, readable_path
from ultra_kit.factory import tool_hints
from ultra_kit.files import result_path, unique_path
from ultra_llm.batch_mode.files import ExportTarget, exporting, read_outcomes
from ultra_llm.batch_mode.passes import can_run_in_passes
from ultra_llm.cache import CachedAnswer, open_cache
from ultra_llm.logprobs import keep_logprobs

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


def exporting_tools() -> list[str]:
    """The judge tools declared ``runs_in_passes`` (their LLM calls run in passes), so they can export."""
    from servers.judge.server import SPEC

    return [tool.__name__ for tool in SPEC.load_tools() if can_run_in_passes(tool)]


MAX_LISTED_FAILURES = 50
_CACHE_KEY = re.compile(r"^[0-9a-f]{64}$")


class ExportResult(TypedDict):
    requests_paths: list[str]
    requests: int
    cached: int
    tool: str


class ImportResult(TypedDict):
    imported: int
    failed: int
    skipped: int
    failures: list[dict[str, str]]
    judge_cache: str


@tool_hints(read_only=False, idempotent=False)
async def export_requests(
    *,
    ctx: Context | None = None,
    tool: Annotated[str, Field(description="the judge tool whose requests are written, e.g. umbrela_judge")],
    arguments: Annotated[
        dict[str, Any], Field(description="that tool's arguments, as for calling it (its settings default as usual)")
    ],
    judge_llm: LLMSpec,
    judge_cache: CachePath,
    save_path: SavePath,
) -> ExportResult:
    """Write the requests a judge tool would send as batch-input JSONL (OpenAI Batch API, vLLM run-batch).

    Runs `tool` with `arguments` up to its LLM calls: requests the cache answers are left out, the
    others are written (split at judge_llm.batch_max_requests / batch_max_bytes), nothing is sent and
    the tool writes no result. Run the files (`vllm run-batch -i FILE -o OUT --model M`), bring the
    output back with import_results, then call the tool again: it completes from the cache.
    `custom_id` is the cache key; the files hold no API key.
    """
    from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools

    if tool not in exporting_tools():
        raise InputError(f"export_requests cannot run {tool!r}; tools that can: {exporting_tools()}")
    limits = judge_settings({**judge_llm, "mode": "batch"}).batch
    assert limits is not None  # mode batch always has limits
    reserved = result_path(save_path, "requests", ".jsonl")
    target = ExportTarget(reserved.parent, reserved.stem, limits.max_requests, limits.max_bytes, unique_path)
    arguments = {**arguments, "judge_llm": {**judge_llm, **arguments.get("judge_llm", {})}}
    arguments.setdefault("judge_cache", judge_cache)
    token = exporting.set(target)
    try:
        from servers.judge.server import SPEC

        await call_local_tool(local_tools(SPEC)[tool], arguments)
    except ToolFailure as exc:
        if target.exported is None:
            raise InputError(str(exc)) from None
    finally:
        exporting.reset(token)
    if target.exported is None:  # everything was in the cache: the tool ran to its end
        _drop_if_empty(reserved)
        return ExportResult(requests_paths=[], requests=0, cached=0, tool=tool)
    paths, requests, cached = target.exported
    if str(reserved) not in paths:
        _drop_if_empty(reserved)
    return ExportResult(requests_paths=paths, requests=requests, cached=cached, tool=tool)


@tool_hints(read_only=False, idempotent=True)
def import_results(
    *,
    results_paths: Annotated[
        list[str], Field(description="output (and error) JSONL files of vLLM run-batch or the OpenAI Batch API")
    ],
    judge_cache: CachePath,
) -> ImportResult:
    """Read batch output files into the judge cache, so the exporting tool then completes with no request.

    Lines with a 200 response become cached answers under their custom_id (the cache key that
    export_requests wrote); failed lines are counted and listed, never cached, so the tool sends
    them again (or export_requests writes them again). Lines whose custom_id is not a cache key
    are skipped.
    """
    if not judge_cache:
        raise InputError("import_results needs judge_cache: the answers go into that cache")
    for path in results_paths:
        if not readable_path(path, setting="results_paths").is_file():
            raise InputError("no such results file; give the output files of the batch run", path=str(path))
    imported = failed = skipped = 0
    failures: list[dict[str, str]] = []
    cache = open_cache(judge_cache)
    try:
        for path in results_paths:
            for outcome in read_outcomes(path):
                if not _CACHE_KEY.match(outcome.custom_id):
                    skipped += 1
                elif outcome.reply is None:
                    failed += 1
                    if len(failures) < MAX_LISTED_FAILURES:
                        failures.append({"custom_id": outcome.custom_id, "error": outcome.error or ""})
                else:
                    reply = outcome.reply
                    answer = CachedAnswer(reply.text, reply.reasoning, reply.prompt_tokens, reply.completion_tokens)
                    request = {"custom_id": outcome.custom_id, "via": Path(path).name}
                    cache.put(outcome.custom_id, model_id="", prompt="", request=request, answer=answer)
                    keep_logprobs(cache, outcome.custom_id, reply, "")
                    imported += 1
    finally:
        cache.close()
    return ImportResult(imported=imported, failed=failed, skipped=skipped, failures=failures, judge_cache=judge_cache)


def _drop_if_empty(path: Path) -> None:
    if path.is_file() and path.stat().st_size == 0:
        path.unlink()


TOOLS = [export_requests, import_results]
