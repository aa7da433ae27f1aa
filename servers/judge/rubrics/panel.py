"""Rubric judgments through the jury layer (``servers.judge.common.jury``): each (item, rubric) is a unit.

Every member of ``judge_llm.jury`` (and every sample of ``judge_llm.samples``) judges every unit; the layer
gives each unit one value per rubric metric. The scale decides the metric's level:

- an integer scale ``[1, 5]`` is ``ordinal`` (alpha at the ordinal level, pairwise kappa over the grades); its
  samples are scores (the mean and sd of the member's samples); the jury takes ``jury_aggregate``;
- a label scale with three or more distinct values is ``ordinal`` too (its values order the labels), a
  label scale with two (pass / fail) is ``nominal``; labels' samples are voted (the majority, a tie to the
  lowest value, and the entropy), and a nominal scale's jury always takes the majority.

A combined unit's ``value`` is the metric's value and its ``score`` the scale's score of that value (None
when a mean or median falls between two). ``weighted`` (G-Eval) under a jury or samples is the mean of the
probability-weighted scores of the judgments that have one (each member's, over its samples, in its
``jury`` entry); null with the first reason given when none has.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from servers.judge.common.jury import Judged, judge_items
from servers.judge.rubrics.declaration import Rubric, Scale
from ultra_kit.reliability import Level
from ultra_llm.cache import AnswerCache, NoCache
from ultra_llm.settings import LLMSettings

Unit = dict[str, Any]
JudgeOne = Callable[[Any, Rubric, dict[str, Any], dict[str, Any]], Awaitable[Unit]]


def level_of(scale: Scale) -> Level:
    """The level of a rubric's metric (see the module)."""
    if scale.labelled and len(set(scale.values.values())) == 2:
        return "nominal"
    return "ordinal"


async def judge_units(
    settings: LLMSettings,
    cache: AnswerCache | NoCache,
    rubrics: Sequence[Rubric],
    steps: Sequence[dict[str, Any]],
    items: Sequence[dict[str, Any]],
    judge_one: JudgeOne,
) -> tuple[list[list[Unit]], Judged]:
    """Per item, one combined judgment per rubric (in ``rubrics``' order); and the panel."""
    pairs = [(rubric, step) for rubric, step in zip(rubrics, steps, strict=True)]
    weights: dict[tuple[str, int], list[tuple[float | None, str | None]]] = {}

    async def judge(client: Any) -> list[Unit]:
        units = await asyncio.gather(*(judge_one(client, r, s, item) for item in items for r, s in pairs))
        key = (client.settings.model_id, getattr(client, "index", 0))
        weights[key] = [(u.get("weighted"), u.get("weighted_reason")) for u in units]
        return [{**u, rubric.name: u.get("value")} for u, (rubric, _) in zip(units, pairs * len(items), strict=True)]

    scales = {rubric.name: level_of(rubric.scale) for rubric in rubrics}
    averaged = [rubric.name for rubric in rubrics if not rubric.scale.labelled]
    judged = await judge_items(settings, cache, judge, scales=scales, tool="rubric_judge", averaged=averaged)
    members = [member.model_id for member in settings.members()]
    panel = len(members) > 1 or settings.samples > 1
    combined = []
    for position, (unit, (rubric, _)) in enumerate(zip(judged.items, pairs * len(items), strict=True)):
        value = unit.get(rubric.name)
        unit = {key: field for key, field in unit.items() if key not in scales}  # the metrics: one per rubric
        if panel:
            given = [[weights[(member, s)][position] for s in range(settings.samples)] for member in members]
            unit = _settled(unit, value, rubric, given, members, metrics=list(scales))
        combined.append(unit)
    per_item = [combined[i * len(pairs) : (i + 1) * len(pairs)] for i in range(len(items))]
    return per_item, judged


def _settled(
    unit: Unit,
    value: Any,
    rubric: Rubric,
    weights: list[list[tuple[float | None, str | None]]],
    members: list[str],
    *,
    metrics: list[str],
) -> Unit:
    """A combined unit's value, score and weighted score (see the module); the samples' own to its rubric."""
    name = rubric.name
    for key in ("sample_values", "spread"):
        if isinstance(unit.get(key), dict):
            unit[key] = unit[key].get(name)
    if unit.get("jury"):  # each member's view: its value (and spread) for this rubric
        unit["jury"] = {member: _view(view, name, metrics) for member, view in unit["jury"].items()}
    if unit["status"] != "ok":
        for key in ("score", "value", "reasoning", "weighted", "weighted_reason"):
            unit.pop(key, None)
        return unit
    unit["value"] = value
    unit["score"] = next((score for score, worth in rubric.scale.values.items() if worth == value), None)
    if "weighted" in unit or "weighted_reason" in unit:
        own = [[w for w, _ in member if w is not None] for member in weights]
        means = [statistics.fmean(found) if found else None for found in own]
        for member, mean in zip(members, means, strict=True):
            if member in unit.get("jury", {}):
                unit["jury"][member]["weighted"] = mean
        known = [mean for mean in means if mean is not None]
        unit.pop("weighted_reason", None)
        unit["weighted"] = statistics.fmean(known) if known else None
        if not known:
            unit["weighted_reason"] = next((r for member in weights for _, r in member if r), "no weighted score")
    return unit


def _view(view: Unit, name: str, metrics: list[str]) -> Unit:
    own = {"value" if key == name else key: field for key, field in view.items() if key == name or key not in metrics}
    if isinstance(own.get("spread"), dict):
        own["spread"] = own["spread"].get(name)
    return own
