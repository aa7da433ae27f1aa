"""The ``rubric_judge`` tool: judges declared in YAML (criteria, steps, scale, inputs), a thin face over ``rubrics``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.judge.answers.run import build_items
from servers.judge.common.jury import RELIABILITY
from servers.judge.common.parameters import INPUT_TYPES, CachePath, FailedFraction, Ids, LLMSpec, SavePath
from servers.judge.common.progress import reporter
from servers.judge.common.prompting import LanguageParam
from servers.judge.common.scripts import WARNINGS
from servers.judge.rubrics.declaration import INPUTS, Rubric
from servers.judge.rubrics.run import run_rubric_judge
from servers.judge.rubrics.sources import declared_rubrics
from ultra_base.errors import InputError
from ultra_kit.factory import tool_hints
from ultra_kit.failures import FailedSummary
from ultra_llm.batch_mode.passes import runs_in_passes

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

Rubrics = Annotated[
    list[dict[str, Any]],
    Field(description="rubric declarations: name, criteria, optional steps, scale ([1, 5] or {pass: 1, fail: 0}), "
          "inputs (question, answer, reference, passages), optional examples; [] = read rubrics_path"),
]  # fmt: skip
RubricsPath = Annotated[str, Field(description="a YAML file of rubric declarations ('' = the rubrics setting)")]
Questions, Answers, References, Passages = (
    Annotated[(INPUT_TYPES[name].__origin__ | None, *INPUT_TYPES[name].__metadata__)]
    for name in ("q_ls", "pred_ls", "gt_ls", "ret_psg")
)  # each optional: a rubric's inputs say which lists it needs
TopLogprobs = Annotated[
    int,
    Field(description="alternatives per token to weight the score, 0 = none (at most caps.top_logprobs)", ge=0),
]


class RubricJudgeResult(TypedDict):
    """What rubric_judge returns (its result file holds the same)."""

    result_path: Annotated[str, Field(description="the result file (rubric_judge_TIME.json)")]
    aggregate: Annotated[
        dict[str, Any],
        Field(
            description="per rubric NAME its mean value over its ok judgments and num_NAME; "
            "num_items, num_excluded (items not ok on every rubric)"
        ),  # fmt: skip
    ]
    weighted: Annotated[
        dict[str, Any], Field(description="per rubric the mean probability-weighted score (null: none could be had)")
    ]
    items: Annotated[
        list[dict[str, Any]],
        Field(
            description="per item: id, status (ok / incomplete / error / parse_error), NAME: the value per rubric, "
            "rubrics: {NAME: {status, score, value, reasoning, weighted, weighted_reason, jury}}; with "
            "judge_llm.samples: sample_values and spread per NAME"
        ),  # fmt: skip
    ]
    counts: Annotated[dict[str, int], Field(description="items, and the number of items per status")]
    failed: FailedSummary
    warnings: Annotated[list[str], Field(description=WARNINGS)]
    rubrics: Annotated[
        list[dict[str, Any]],
        Field(description="per rubric: name, declared, text and sha256, scale, inputs, steps, steps_generated"),
    ]
    metric_kinds: Annotated[
        dict[str, str],
        Field(description="per rubric its kind from its scale: binary (two labels worth 0 and 1, {pass: 1, fail: 0}) "
              "or graded (an integer scale, other labels); the report charts it so"),
    ]  # fmt: skip
    usage: Annotated[dict[str, Any], Field(description="requests, cache hits, errors and tokens of this call")]
    prompt: Annotated[dict[str, str], Field(description="the judging prompt file: name, sha256, version")]
    reliability: Annotated[dict[str, dict[str, Any]], Field(description=RELIABILITY)]


@runs_in_passes
@tool_hints(read_only=False, idempotent=True, open_world=True)
async def rubric_judge(
    *,
    q_ls: Questions = None,
    pred_ls: Answers = None,
    gt_ls: References = None,
    ret_psg: Passages = None,
    id_ls: Ids = None,
    rubrics: Rubrics,
    rubrics_path: RubricsPath,
    rubric_top_logprobs: TopLogprobs,
    judge_llm: LLMSpec,
    judge_cache: CachePath,
    save_path: SavePath,
    max_failed_fraction: FailedFraction,
    language: LanguageParam,
    ctx: Context | None = None,
) -> RubricJudgeResult:
    """Judges declared in YAML (G-Eval), one metric each: rubrics [{name, criteria, steps?, scale, inputs, examples?}].

    A rubric: name, criteria, optional steps (else generated once, recorded), scale ([1, 5] or {pass: 1, fail: 0}),
    inputs (question, answer, reference, passages; the lists q_ls, pred_ls, gt_ls, ret_psg), optional examples.
    One request per (item, rubric) for {reasoning, score}; with rubric_top_logprobs > 0 the score is also weighted
    by its token probabilities where the endpoint returns them (else weighted null, with the reason).
    judge_llm.jury / judge_llm.samples: every member (sample) judges every (item, rubric); an integer scale is
    ordinal (samples averaged), a pass/fail scale nominal (majority), labels with 3+ values ordinal (voted).
    """
    found = declared_rubrics(rubrics, rubrics_path)
    lists = {"q_ls": q_ls, "pred_ls": pred_ls, "gt_ls": gt_ls, "ret_psg": ret_psg}
    items = rubric_items(found, lists, id_ls)
    result = await run_rubric_judge(
        found, items, judge_llm=judge_llm, judge_cache=judge_cache, save_path=save_path,
        max_failed_fraction=max_failed_fraction, top_logprobs=rubric_top_logprobs,
        source=rubrics_path or "the rubrics setting", language=language, progress=reporter(ctx, "(item, rubric) units"),
    )  # fmt: skip
    return RubricJudgeResult(**{key: result[key] for key in RubricJudgeResult.__annotations__})  # type: ignore[typeddict-item]


def rubric_items(rubrics: list[Rubric], lists: dict[str, Any], id_ls: list[str] | None) -> list[dict[str, Any]]:
    """The items: one per position of the lists the rubrics' inputs need (each of them given, all as long).

    A None in pred_ls (the system under test failed) makes the item ``unanswered`` on every rubric, never judged.
    """
    needed = [INPUTS[name] for name in INPUTS if any(name in r.inputs for r in rubrics)]
    missing = [name for name in needed if lists[name] is None]
    if missing:
        raise InputError(f"the rubrics' inputs need {missing}: give them (one per item)")
    n = len(lists[needed[0]])
    if n == 0:
        raise InputError(f"{needed[0]} is empty: nothing to judge")
    blank = [""] * n
    return build_items(
        lists["q_ls"] if "q_ls" in needed else blank,
        lists["pred_ls"] if "pred_ls" in needed or lists["pred_ls"] is not None else blank,  # None: unanswered
        ret_psg=lists["ret_psg"] if "ret_psg" in needed else None,
        gt_ls=lists["gt_ls"] if "gt_ls" in needed else None,
        id_ls=id_ls,
    )


TOOLS = [rubric_judge]
