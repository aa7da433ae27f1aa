"""A responder for the stub server that plays the three AutoNuggetizer stages from the prompt content.

Create: every passage "... <fact> ..." becomes the nugget "<fact>" (the passage text itself), appended to
the list so far and cut at 30. Score: a nugget starting with "vital" is vital, else okay. Assign: the
answer is a JSON object {nugget: label}; nuggets it does not name are not_support.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.openai_stub import content_of

_SO_FAR = re.compile(r"Nuggets so far \(\d+\): (.*?)\n\nPassages:\n(.*?)\n\nUpdated nugget list", re.DOTALL)
_NUGGETS = re.compile(r"Nuggets \((\d+)\):\n(.*?)\n\nLabels", re.DOTALL)
_ANSWER = re.compile(r"\n\nAnswer: (.*?)\n\nNuggets \(", re.DOTALL)


def numbered(block: str) -> list[str]:
    return [line.split(". ", 1)[1] for line in block.splitlines() if line.strip()]


def stage(request: dict[str, Any]) -> str:
    text = content_of(request)
    if "Updated nugget list" in text:
        return "create"
    if 'each "vital" or "okay"' in text:
        return "score"
    if "partial_support" in text:
        return "assign"
    return "other"


def nugget_responder(request: dict[str, Any]) -> str:
    text = content_of(request)
    kind = stage(request)
    if kind == "create":
        so_far, passages = _SO_FAR.search(text).groups()
        return json.dumps((json.loads(so_far) + numbered(passages))[:30])
    nuggets = numbered(_NUGGETS.search(text).group(2))
    if kind == "score":
        return json.dumps(["vital" if n.startswith("vital") else "okay" for n in nuggets])
    answer = json.loads(_ANSWER.search(text).group(1))
    return "Here you go:\n" + json.dumps([answer.get(n, "not_support") for n in nuggets])


def stages(requests: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"create": 0, "score": 0, "assign": 0}
    for request in requests:
        counts[stage(request)] = counts.get(stage(request), 0) + 1
    return counts
