"""The answer-judge MCP tools, one per declared judge (``answers.registry.JUDGES``), generated with real signatures.

Each tool takes the judge's input lists (required), ``id_ls`` (optional) and the settings ``judge_llm``,
``judge_cache``, ``save_path``, ``max_failed_fraction``, ``prompt_file`` (``common.overrides``), ``language`` and
``recorded_judgments`` (``answers.recorded``);
no default here: ``parameter.yaml`` supplies them, so ``with_settings`` and the MCP SDK derive its input schema as
for a hand-written function.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from servers.judge.answers.declare import AnswerJudge
from servers.judge.answers.registry import JUDGES
from servers.judge.answers.run import AnswerJudgeResult, items_for, run_answer_judge
from servers.judge.common.parameters import (
    INPUT_TYPES,
    CachePath,
    FailedFraction,
    Ids,
    LLMSpec,
    PromptFiles,
    RecordedJudgments,
    SavePath,
)
from servers.judge.common.progress import reporter
from servers.judge.common.prompting import LanguageParam
from ultra_kit.factory import expands_own_env, tool_hints
from ultra_llm.batch_mode.passes import runs_in_passes

RECORDED = "recorded_judgments"
SETTINGS: dict[str, Any] = {
    "judge_llm": LLMSpec,
    "judge_cache": CachePath,
    "save_path": SavePath,
    "max_failed_fraction": FailedFraction,
    "prompt_file": PromptFiles,
    "language": LanguageParam,
    "recorded_judgments": RecordedJudgments,
}


def answer_tool(judge: AnswerJudge) -> Callable[..., Awaitable[AnswerJudgeResult]]:
    """The async tool function of ``judge``: named, documented and annotated as the MCP listing shows it."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter(name, keyword, annotation=INPUT_TYPES[name]) for name in judge.inputs]
    parameters.append(inspect.Parameter("id_ls", keyword, default=None, annotation=Ids))
    parameters += [inspect.Parameter(name, keyword, annotation=kind) for name, kind in SETTINGS.items()]
    parameters.append(inspect.Parameter("ctx", keyword, default=None, annotation="Context | None"))  # MCP progress
    signature = inspect.Signature(parameters, return_annotation=AnswerJudgeResult)

    async def tool(**arguments: Any) -> AnswerJudgeResult:
        bound = signature.bind(**arguments)  # a missing or unknown argument is a TypeError, as for any function
        bound.apply_defaults()
        values = bound.arguments
        items = items_for(judge, {name: values[name] for name in judge.inputs}, values["id_ls"])
        settings = {name: values[name] for name in SETTINGS if name != RECORDED}
        progress = reporter(values["ctx"], "answers")
        return await run_answer_judge(judge, items, progress=progress, replay=values[RECORDED], **settings)

    tool.__name__ = tool.__qualname__ = judge.name
    tool.__doc__ = judge.description + FAILING
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": AnswerJudgeResult}
    tool = expands_own_env("judge_llm")(tool)  # expanded when a request is sent: offline and recorded need no key
    return runs_in_passes(tool_hints(read_only=False, idempotent=True, open_world=True)(tool))


FAILING = (
    "\n\nThe tool fails, writing nothing, when no item was judged or more than max_failed_fraction of the "
    "items that needed the LLM failed; `failed` counts the failures otherwise."
)

TOOLS = [answer_tool(judge) for judge in JUDGES]
