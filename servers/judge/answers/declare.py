"""An answer judge's declaration (``AnswerJudge``), written beside its function with ``@answer_judge(...)``.

The registry (``answers.registry``) collects every declaration of the modules in ``answers/judges/``;
the MCP tool, its schema, the runner and the docs row are built from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ultra_kit.reliability import LEVELS, Level
from ultra_llm.replies import Reply

JudgeFunction = Callable[[Any, dict[str, Any], int], Awaitable[dict[str, Any]]]
INPUT_NAMES = ("q_ls", "pred_ls", "gt_ls", "ret_psg")
METRIC_KINDS = ("binary", "graded", "continuous")  # 0/1 per item; a few ordered grades; any number
# how the report charts a metric of each level, unless ``kinds`` says otherwise (a nominal value here is 0 / 1)
LEVEL_KINDS: dict[str, str] = {"nominal": "binary", "ordinal": "graded", "interval": "continuous"}
AGGREGATE_DIRECTIONS = {"num_excluded": False}  # every judge's aggregate: items not judged ok, fewer is better


@dataclass(frozen=True)
class AnswerJudge:
    """One answer judge and the MCP tool that runs it."""

    name: str  # the tool's name; without a ``_judge`` ending it is the kind (idk_judge -> idk)
    inputs: tuple[str, ...]  # the lists the tool takes, in INPUT_NAMES order; q_ls always
    metrics: tuple[str, ...]  # per-item values averaged over the ok items
    judge: JudgeFunction  # (client, item, retries) -> the item's status and values
    description: str  # the tool's description; its first line is the summary
    requests: str  # LLM requests per item
    # prompt file (prompts/<name>.txt) -> its declared reply; the first prompt is recorded in the result
    replies: Mapping[str, Reply] = field(default_factory=dict)
    kinds: Mapping[str, str] = field(default_factory=dict)  # metric -> its chart, where not its level's (LEVEL_KINDS)
    # metric -> nominal / ordinal (labels) or interval (scores, the default): how a jury combines and compares it,
    # and how the report charts it (LEVEL_KINDS)
    scales: Mapping[str, str] = field(default_factory=dict)
    lower_is_better: tuple[str, ...] = ()  # metrics where a lower value is better (toxicity); the others higher

    def __post_init__(self) -> None:
        if self.inputs[:1] != ("q_ls",) or list(self.inputs) != sorted(self.inputs, key=INPUT_NAMES.index):
            raise ValueError(f"{self.name}: inputs must start with q_ls and follow {INPUT_NAMES}")
        if not set(self.kinds) <= set(self.metrics) or not set(self.kinds.values()) <= set(METRIC_KINDS):
            raise ValueError(f"{self.name}: kinds must map its metrics to one of {METRIC_KINDS}")
        if set(self.scales) - set(self.metrics) or set(self.scales.values()) - set(LEVELS):
            raise ValueError(f"{self.name}: scales map its metrics to {LEVELS}")
        if not set(self.lower_is_better) <= set(self.metrics):
            raise ValueError(f"{self.name}: lower_is_better names metrics it does not have")

    @property
    def metric_kinds(self) -> dict[str, str]:
        """Each metric's kind (how the report charts it), written into the result file: declared, or its level's."""
        return {name: self.kinds.get(name) or LEVEL_KINDS[level] for name, level in self.levels.items()}

    @property
    def higher_is_better(self) -> dict[str, bool]:
        """Each metric's direction (gates, ``compare``, ``ultra sweep``), written into the result file."""
        return {name: name not in self.lower_is_better for name in self.metrics}

    @property
    def levels(self) -> dict[str, Level]:
        """Every metric's level (``servers.judge.common.jury``): declared, or interval."""
        return {metric: self.scales.get(metric, "interval") for metric in self.metrics}  # type: ignore[misc]

    @property
    def kind(self) -> str:
        """Names the result file (``<kind>_judge_<time>.json``)."""
        return self.name.removesuffix("_judge")

    @property
    def offline(self) -> bool:
        """No prompt, so no LLM request: the judge needs no key (``toxicity``)."""
        return not self.replies

    @property
    def prompts(self) -> tuple[str, ...]:
        return tuple(self.replies)

    @property
    def reply_schemas(self) -> dict[str, dict[str, Any]]:
        """Prompt name -> the JSON schema of its reply (sent as response_format with structured output)."""
        return {name: reply.schema for name, reply in self.replies.items() if reply.schema is not None}

    @property
    def summary(self) -> str:
        return self.description.split("\n", 1)[0]


def answer_judge(
    *,
    name: str,
    inputs: tuple[str, ...],
    metrics: tuple[str, ...],
    requests: str,
    description: str,
    replies: Mapping[str, Reply] | None = None,
    kinds: Mapping[str, str] | None = None,
    scales: Mapping[str, str] | None = None,
    lower_is_better: tuple[str, ...] = (),
) -> Callable[[JudgeFunction], JudgeFunction]:
    """Declare the decorated function an answer judge (``AnswerJudge``'s fields; ``judge`` is the function)."""

    def declare(function: JudgeFunction) -> JudgeFunction:
        function.__answer_judge__ = AnswerJudge(  # type: ignore[attr-defined]
            name,
            inputs,
            metrics,
            function,
            description,
            requests,
            dict(replies or {}),
            dict(kinds or {}),
            dict(scales or {}),
            tuple(lower_is_better),
        )
        return function

    return declare


def declared(function: Any) -> AnswerJudge | None:
    """The declaration on ``function``, if it is a declared answer judge."""
    judge = getattr(function, "__answer_judge__", None)
    return judge if isinstance(judge, AnswerJudge) else None
