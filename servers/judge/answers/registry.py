"""Every answer judge, collected from its declaration (``@answer_judge`` beside its function in ``judges/``).

The MCP tools, the runner and the docs are built from ``JUDGES``. A new judge is a prompt file in
``prompts/``, a judge function ``(client, prompts, item, retries) -> dict`` declared with ``@answer_judge`` in a
module of ``answers/judges/`` (a new module there is found too), and tests. The judges are listed
module by module (in name order), each module's in the order they are written.
"""

from __future__ import annotations

import importlib
import pkgutil

from servers.judge.answers import judges as judge_modules
from servers.judge.answers.declare import AGGREGATE_DIRECTIONS, AnswerJudge, declared
from ultra_base.registry import Registry


def collect() -> tuple[AnswerJudge, ...]:
    """The declarations of every module in ``answers/judges/``."""
    found: list[AnswerJudge] = []
    for info in sorted(pkgutil.iter_modules(judge_modules.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{judge_modules.__name__}.{info.name}")
        for value in vars(module).values():
            judge = declared(value)
            if judge is not None and getattr(value, "__module__", None) == module.__name__:
                found.append(judge)
    return tuple(found)


REGISTRY: Registry[AnswerJudge] = Registry("answer judge", collect())  # a name declared twice fails here
JUDGES: tuple[AnswerJudge, ...] = tuple(REGISTRY.values())
BY_KIND = {judge.kind: judge for judge in JUDGES}


def judge_of_kind(kind: str) -> AnswerJudge:
    """The judge declared with ``kind`` (``idk``, ``citation``, ``faithfulness`` ...)."""
    try:
        return BY_KIND[kind]
    except KeyError:
        raise ValueError(f"no answer judge of kind {kind!r}; known: {sorted(BY_KIND)}") from None


def higher_is_better() -> dict[str, bool]:
    """``{metric: higher_is_better}`` of every answer judge's metrics and aggregate counts (``SPEC.metric_directions``);
    a metric two judges share (``toxicity``) must have one direction."""
    return {**AGGREGATE_DIRECTIONS, **REGISTRY.directions()}


def registry_markdown() -> str:
    """A markdown table of every answer judge: tool, inputs, metrics, prompt files, requests, summary."""
    return REGISTRY.table(
        [
            ("tool", lambda j: f"`{j.name}`"),
            ("inputs", lambda j: ", ".join(f"`{name}`" for name in j.inputs)),
            ("metrics", _metrics_cell),
            ("prompt files", lambda j: ", ".join(f"`prompts/{name}.txt`" for name in j.prompts)),
            ("requests per item", lambda j: j.requests),
            ("what it judges", lambda j: j.summary),
        ]
    )


def _metrics_cell(judge: AnswerJudge) -> str:
    return ", ".join(f"`{m}`" + ("" if up else " (lower is better)") for m, up in judge.higher_is_better.items())
