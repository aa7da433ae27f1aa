"""An answer judge's declaration (``AnswerJudge``), written beside its function with ``@answer_judge(...)``.

The registry (``answers.registry``) collects every declaration of the modules in ``answers/judges/``;
the MCP tool, its schema, the runner and the docs row are built from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from servers.judge.common.prompting import Prompts
from ultra_base.registry import fail
from ultra_kit.reliability import Level
from ultra_llm.replies import Reply

# (client, the call's prompts, item, retries) -> the item's status and values
JudgeFunction = Callable[[Any, Prompts, dict[str, Any], int], Awaitable[dict[str, Any]]]
INPUT_NAMES = ("q_ls", "pred_ls", "gt_ls", "ret_psg")
# A metric's scale, its one declaration: -> (its level: how a jury combines and compares it,
# its kind: how the report charts it). A metric a judge does not name is on the interval scale.
SCALES: dict[str, tuple[Level, str]] = {
    "nominal": ("nominal", "binary"),  # a label, 0 / 1 here
    "ordinal": ("ordinal", "graded"),  # a few ordered grades
    "interval": ("interval", "continuous"),  # any number
    # a 0 / 1 label that stands for a probability: combined as a label, charted as a probability
    # (toxicity_llm's toxicity, drawn as the toxicity classifier's)
    "probability": ("nominal", "continuous"),
}
AGGREGATE_DIRECTIONS = {"num_excluded": False}  # every judge's aggregate: items not judged ok, fewer is better
AGGREGATE_COUNTS = ("num_excluded",)  # aggregate names that are counts, not metrics


@dataclass(frozen=True)
class AnswerJudge:
    """One answer judge and the MCP tool that runs it."""

    name: str  # the tool's name; without a ``_judge`` ending it is the kind (idk_judge -> idk)
    inputs: tuple[str, ...]  # the lists the tool takes, in INPUT_NAMES order; q_ls always
    metrics: tuple[str, ...]  # per-item values averaged over the ok items
    judge: JudgeFunction  # (client, prompts, item, retries) -> the item's status and values
    description: str  # the tool's description; its first line is the summary
    requests: str  # LLM requests per item
    # prompt file (prompts/<name>.txt) -> its declared reply; the first prompt is recorded in the result
    replies: Mapping[str, Reply] = field(default_factory=dict)
    # metric -> its scale (SCALES: nominal, ordinal, interval, probability; interval where not named): how a jury
    # combines and compares it, and how the report charts it
    scales: Mapping[str, str] = field(default_factory=dict)
    lower_is_better: tuple[str, ...] = ()  # metrics where a lower value is better (toxicity); the others higher

    def __post_init__(self) -> None:
        """A wrong declaration fails when its module is imported, naming the judge and the field."""
        if self.inputs[:1] != ("q_ls",) or list(self.inputs) != sorted(self.inputs, key=INPUT_NAMES.index):
            raise fail("answer judge", self.name, "inputs", f"must start with q_ls and follow {INPUT_NAMES}")
        for metric, scale in self.scales.items():
            if metric not in self.metrics:
                raise fail("answer judge", self.name, "scales", f"names {metric!r}, not one of its metrics")
            if scale not in SCALES:
                raise fail(
                    "answer judge", self.name, "scales", f"is {scale!r} for {metric!r}; expected one of {list(SCALES)}"
                )
        if not set(self.lower_is_better) <= set(self.metrics):
            raise fail("answer judge", self.name, "lower_is_better", "names metrics it does not have")

    def _scale(self, metric: str) -> tuple[Level, str]:
        return SCALES[self.scales.get(metric, "interval")]

    @property
    def metric_kinds(self) -> dict[str, str]:
        """Each metric's kind (how the report charts it), written into the result file: its scale's."""
        return {name: self._scale(name)[1] for name in self.metrics}

    @property
    def higher_is_better(self) -> dict[str, bool]:
        """Each metric's direction (gates, ``compare``, ``ultra sweep``), written into the result file."""
        return {name: name not in self.lower_is_better for name in self.metrics}

    def directions(self) -> dict[str, bool]:
        """``higher_is_better``, as the registry (``ultra_base.registry.Registry.directions``) reads it."""
        return self.higher_is_better

    @property
    def levels(self) -> dict[str, Level]:
        """Every metric's level (``servers.judge.common.jury``): its scale's."""
        return {name: self._scale(name)[0] for name in self.metrics}

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
            dict(scales or {}),
            tuple(lower_is_better),
        )
        return function

    return declare


def declared(function: Any) -> AnswerJudge | None:
    """The declaration on ``function``, if it is a declared answer judge."""
    judge = getattr(function, "__answer_judge__", None)
    return judge if isinstance(judge, AnswerJudge) else None
