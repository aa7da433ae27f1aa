"""The judges' language check: a warning when most of the text they judge is not in ``language``'s script.

A judge puts the list in its result (``warnings``) and its result file; ``ultra run`` prints each warning once
a run. Chinese questions under the default ``language: en`` are judged by English prompts and word rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ultra_kit.languages import script_warning

ITEM_TEXTS = ("question", "answer")  # an answer judge's item: what the check reads
WARNINGS = (
    "a warning, naming the setting, when most of the text judged is not in the script of `language` "
    "(`ultra run` says it once per run); [] else"
)


def text_warnings(texts: Iterable[object], language: str) -> list[str]:
    """``[warning]`` when most of ``texts`` (those with letters) are not in ``language``'s script; [] else."""
    return [w for w in [script_warning([str(text or "") for text in texts], language)] if w]


def language_warnings(items: Sequence[Mapping[str, Any]], language: str) -> list[str]:
    """``text_warnings`` of the items' questions and answers (Chinese answers under 'en')."""
    return text_warnings((item.get(key) for item in items for key in ITEM_TEXTS), language)
