"""What a rubric judge sends: the item shown by its inputs, the steps, the few-shot examples, the steps request.

``rubric_judge_v1`` asks for ``{reasoning, score}`` on the rubric's scale; ``rubric_steps_v1`` asks for the
evaluation steps of a rubric that declares none (G-Eval's auto chain-of-thought), once per rubric.
"""

from __future__ import annotations

import json
import re
from typing import Any

from servers.judge.answers.common import numbered
from servers.judge.rubrics.declaration import Rubric
from ultra_llm.replies import Reply, array, text

JUDGE_PROMPT = "rubric_judge_v1"
STEPS_PROMPT = "rubric_steps_v1"
STEPS = Reply.of(steps=array(text()))
MIN_STEP_WORDS = 3  # a generated step is an instruction: "Check that the answer cites a passage"
MAX_STEPS = 20


def unreadable_steps(steps: list[str]) -> str | None:
    """Why generated G-Eval steps are not a list of instructions (a template echoed back, JSON debris,
    repeats, too many), or None when they are."""
    if len(steps) > MAX_STEPS:
        return f"{len(steps)} steps (at most {MAX_STEPS})"
    for step in steps:
        words = re.findall(r"[^\W\d_]{2,}", step)
        if len(words) < MIN_STEP_WORDS or re.fullmatch(r"\s*<[^>]*>\s*", step):
            return f"{step[:60]!r} is not a sentence of at least {MIN_STEP_WORDS} words"
    if len({" ".join(step.lower().split()) for step in steps}) < len(steps):
        return "a step is repeated"
    return None


SHOWN = {"question": "Question", "answer": "Answer", "reference": "Reference answer", "passages": "Passages"}


def shown_item(rubric: Rubric, item: dict[str, Any]) -> str:
    """The item as the judge sees it: one titled block per input of the rubric."""
    blocks = []
    for name in rubric.inputs:
        value = item[name]
        if name == "passages":
            passages = value if isinstance(value, list) else [value]
            body = "\n".join(f"[{i}] {p}" for i, p in enumerate(passages, start=1)) or "(none)"
            blocks.append(f"{SHOWN[name]}:\n{body}")
        else:
            blocks.append(f"{SHOWN[name]}: {value}")
    return "\n\n".join(blocks)


def examples_block(rubric: Rubric) -> str:
    """The few-shot examples, each item with the reply it should get ('' without examples)."""
    if not rubric.examples:
        return ""
    parts = []
    for i, example in enumerate(rubric.examples, start=1):
        reply = json.dumps({"reasoning": example["reasoning"], "score": example["score"]}, ensure_ascii=False)
        parts.append(f"Example {i}:\n\n{shown_item(rubric, example)}\n\nReply: {reply}")
    return "Examples of judged items:\n\n" + "\n\n".join(parts) + "\n\n"


def judge_values(rubric: Rubric, steps: tuple[str, ...], item: dict[str, Any]) -> dict[str, str]:
    """The placeholders of ``rubric_judge_v1`` for one item."""
    return {
        "criteria": rubric.criteria,
        "steps": numbered(steps),
        "scale": rubric.scale.describe(),
        "examples": examples_block(rubric),
        "item": shown_item(rubric, item),
    }


def steps_values(rubric: Rubric) -> dict[str, str]:
    """The placeholders of ``rubric_steps_v1``."""
    return {
        "criteria": rubric.criteria,
        "inputs": ", ".join(SHOWN[name].lower() for name in rubric.inputs),
        "scale": rubric.scale.describe(),
    }
