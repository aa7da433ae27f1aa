"""What a rubric judge sends: the item shown by its inputs, the steps, the few-shot examples, the steps request.

``rubric_judge_v1`` asks for ``{reasoning, score}`` on the rubric's scale; ``rubric_steps_v1`` asks for the
evaluation steps of a rubric that declares none (G-Eval's auto chain-of-thought), once per rubric.
"""

from __future__ import annotations

import json
from typing import Any

from servers.judge.answers.common import numbered
from servers.judge.rubrics.declaration import Rubric
from ultra_llm.replies import Reply, array, text

JUDGE_PROMPT = "rubric_judge_v1"
STEPS_PROMPT = "rubric_steps_v1"
STEPS = Reply.of(steps=array(text()))
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
