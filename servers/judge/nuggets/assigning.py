"""Nugget assignment through the jury layer (``servers.judge.common.jury``): each (answer, nugget) is an item.

Every member (and sample) assigns every answer's nuggets in its batches; the item's value is the support
credit (support 1, partial_support 0.5, not_support 0: an ordinal label) combined as ``judge_llm`` says,
read back as the label (a mean or an even median between two labels is rounded to the nearest, a half
down, as majority ties). Each member's batches are kept (with ``member`` and ``sample`` under a jury or
samples) and are the units of ``failed``; a nugget whose jury fell short of ``jury_min`` keeps no label.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

from servers.judge.common.jury import Judged, judge_items
from servers.judge.common.progress import Progress, ticked
from servers.judge.common.prompting import Prompts
from servers.judge.nuggets import stages as nuggets
from ultra_llm.cache import AnswerCache, NoCache
from ultra_llm.settings import LLMSettings

LABEL_OF = {credit: label for label, credit in nuggets.CREDIT.items()}
SCALES = {"support": "ordinal"}

Work = tuple[str, str, nuggets.QueryNuggets, str, list[int]]  # qid, run, nuggets, answer text, chosen indices


async def assign_all(
    work: Sequence[Work], settings: LLMSettings, cache: AnswerCache | NoCache, step: Progress | None, prompts: Prompts
) -> tuple[list[tuple[list[str | None], list[nuggets.Batch], list[dict[str, Any]]]], Judged]:
    """Per answer of ``work``: its labels, every member's batches and each nugget's jury; and the panel."""
    batches: dict[tuple[str, int, int], list[nuggets.Batch]] = {}
    panel = len(settings.members()) > 1 or settings.samples > 1

    async def judge(client: Any) -> list[dict[str, Any]]:
        member, sample = client.settings.model_id, getattr(client, "index", 0)
        labelled = await asyncio.gather(
            *(ticked(step, nuggets.assign(item, text, indices, client, prompts=prompts,
                                        max_retries=client.settings.max_retries))
              for _, _, item, text, indices in work)
        )  # fmt: skip
        items = []
        for position, (labels, answer_batches) in enumerate(labelled):
            for batch in answer_batches:
                batch.member, batch.sample = (member, sample) if panel else (None, None)
            batches[(member, sample, position)] = answer_batches
            items += [{"status": "ok" if label else "error", "support": nuggets.CREDIT.get(label)} for label in labels]
        return items

    judged = await judge_items(settings, cache, judge, scales=SCALES, tool="nuggetize")
    rank = {member.model_id: i for i, member in enumerate(settings.members())}

    def order(entry: tuple[tuple[str, int, int], Any]) -> tuple[int, int]:
        (member, sample, _), _ = entry
        return rank[member], sample

    results, start = [], 0
    for position, (_, _, _, _, indices) in enumerate(work):
        items = judged.items[start : start + len(indices)]
        start += len(indices)
        labels = [None if i["status"] != "ok" or i["support"] is None else _label(i["support"]) for i in items]
        own = [b for (_, _, p), answer_batches in sorted(batches.items(), key=order) if p == position
               for b in answer_batches]  # fmt: skip
        results.append((labels, own, [i.get("jury") for i in items]))
    return results, judged


def _label(credit: float) -> str:
    """The label of a (combined) credit: the nearest, a half down."""
    return LABEL_OF[math.ceil(credit * 2 - 0.5) / 2]
