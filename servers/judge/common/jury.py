"""Juries and repeated judging for every LLM judge: run the judge per (member, sample), then one value per item.

A judge hands ``judge_items`` its per-item work: ``judge(client) -> [item, ...]``, one dict per item with a
``status`` (ok / parse_error / error / a judge's own "nothing to judge" status) and its metric values
(numbers; None = no value). ``scales`` names each metric's level: ``nominal`` and ``ordinal`` values are
labels, ``interval`` values are scores. Then, per item:

- a member's samples (``judge_llm.samples``) give its value: the majority of the labels (a tie goes to the
  lowest), the mean of the scores, over the samples that came out ok; ``spread`` is their sd or entropy
  (``averaged`` names ordinal metrics that are scores all the same: their samples take the mean and sd);
- the jury's members (``judge_llm.jury``) give the item's value by ``judge_llm.jury_aggregate``: ``majority``
  (labels only), ``mean`` or ``median`` (nominal labels always take the majority), over the members that
  answered. When fewer than ``judge_llm.jury_min`` answered, the item is an ``error`` (counted as a failure).
  ``jury`` keeps each member's status and values.

Details besides the metrics (a label's name, a rationale ...) are those of the first member (sample) that
gave the item's values, or of the first that answered. ``reliability`` per metric: Krippendorff's alpha over
the members at the metric's level, Cohen's kappa of each pair of members (labels), the share of the variance
that is within items across samples (the judge's own noise) and the mean spread. Without a jury and samples
the items are the judge's own, untouched.

    result = await judge_items(settings, cache, lambda client: judge_all(client), scales={"score": "ordinal"})
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ultra_base.errors import InputError
from ultra_kit import reliability as stats
from ultra_kit.reliability import Level
from ultra_llm.cache import AnswerCache, NoCache
from ultra_llm.panel import MemberRun, run_panel, total_usage
from ultra_llm.settings import LLMSettings

Item = dict[str, Any]
# the output every LLM judge returns about its panel
RELIABILITY = (
    "with a jury (judge_llm.jury) or samples (judge_llm.samples), per metric: level, Krippendorff's alpha over "
    "the members, mean_kappa and kappa per pair of members (labels), units, within_item_share (the share of the "
    "variance across samples that is within items: the judge's own noise) and mean_spread; {} otherwise"
)
JUDGED = ("ok", "parse_error", "error")  # any other status: nothing to judge, the same for every member


@dataclass
class Judged:
    """The items with one value each, the agreement figures, per-member counts, the usage."""

    items: list[Item]
    reliability: dict[str, dict[str, Any]]
    members: dict[str, dict[str, int]]
    usage: dict[str, Any]
    dropped: list[str]

    def panel(self, settings: LLMSettings) -> dict[str, Any]:
        """What a result file records of the panel ({} without a jury and samples)."""
        if not self.reliability and len(self.members) == 1 and settings.samples == 1:
            return {}
        return {
            "members": self.members,
            "samples": settings.samples,
            "jury_aggregate": settings.jury_aggregate if settings.jury else None,
            "jury_min": settings.jury_min if settings.jury else None,
            "reliability": self.reliability,
        }


def check_scales(settings: LLMSettings, scales: Mapping[str, Level], *, tool: str) -> None:
    """Refuse ``jury_aggregate: majority`` over scores (interval metrics): it needs labels."""
    scores = [metric for metric, level in scales.items() if level == "interval"]
    if settings.jury and settings.jury_aggregate == "majority" and scores:
        raise InputError(
            f"judge_llm.jury_aggregate majority needs labels, but {tool}'s {scores} are scores: "
            "set judge_llm.jury_aggregate to mean or median"
        )


async def judge_items(
    settings: LLMSettings,
    cache: AnswerCache | NoCache,
    judge: Callable[[Any], Awaitable[Sequence[Item]]],
    *,
    scales: Mapping[str, Level],
    tool: str,
    progress: Any = None,
    averaged: Collection[str] = (),
) -> Judged:
    """Run ``judge`` per (member, sample) (``ultra_llm.panel``) and combine the items (see the module)."""
    check_scales(settings, scales, tool=tool)
    runs = await run_panel(settings, cache, judge, progress=progress)
    return combine(runs, scales, settings, averaged=averaged)


def combine(
    runs: Sequence[MemberRun[Sequence[Item]]],
    scales: Mapping[str, Level],
    settings: LLMSettings,
    *,
    averaged: Collection[str] = (),
) -> Judged:
    """One item per position from every member's samples (see the module)."""
    dropped = sorted({name for run in runs for name in run.dropped})
    usage = total_usage(list(runs))
    if len(runs) == 1 and len(runs[0].samples) == 1:
        items = [dict(item) for item in runs[0].samples[0]]
        return Judged(items, {}, _counts({runs[0].member: items}), usage, dropped)
    sampled = {metric: "interval" if metric in averaged else level for metric, level in scales.items()}
    by_member = {run.member: [_member_item(list(samples), sampled) for samples in zip(*run.samples, strict=True)]
                 for run in runs}  # fmt: skip
    if len(runs) == 1:
        items = next(iter(by_member.values()))
    else:
        items = [_jury_item(dict(zip(by_member, column, strict=True)), scales, settings)
                 for column in zip(*by_member.values(), strict=True)]  # fmt: skip
    figures = {metric: _reliability(by_member, metric, level) for metric, level in scales.items()}
    return Judged(items, {m: f for m, f in figures.items() if f}, _counts(by_member), usage, dropped)


def _member_item(samples: list[Item], scales: Mapping[str, Level]) -> Item:
    """A member's item from its samples: the first ok one, with each metric combined and its spread."""
    ok = [sample for sample in samples if sample["status"] == "ok"]
    if len(samples) == 1 or not ok:
        return {**samples[0], **_cost(samples)}
    given = {metric: [s.get(metric) if s["status"] == "ok" else None for s in samples] for metric in scales}
    values, spreads = {}, {}
    for metric, level in scales.items():
        known = [v for v in given[metric] if v is not None]
        values[metric] = (statistics.fmean(known) if level == "interval" else stats.majority(known)) if known else None
        spreads[metric] = stats.spread(known, level)
    return {**_closest(ok, values), **values, **_cost(samples), "sample_values": given, "spread": spreads}


def _jury_item(members: dict[str, Item], scales: Mapping[str, Level], settings: LLMSettings) -> Item:
    """The item's value over the members that answered, or an error when fewer than ``jury_min`` did."""
    first = next(iter(members.values()))
    if first["status"] not in JUDGED:
        return {**first, **_cost(members.values())}
    ok = [item for item in members.values() if item["status"] == "ok"]
    jury = {"jury": {name: _member_view(member, scales) for name, member in members.items()}}
    if len(ok) < settings.jury_min:
        error = f"jury: {len(ok)} of {len(members)} members answered; judge_llm.jury_min is {settings.jury_min}"
        base = {k: v for k, v in first.items() if k not in ("sample_values", "spread", "raw")}
        return {**base, **dict.fromkeys(scales), **_cost(members.values()), "status": "error", "error": error, **jury}
    values = {}
    for metric, level in scales.items():
        given = [member[metric] for member in ok if member.get(metric) is not None]
        values[metric] = _aggregate(given, level, settings.jury_aggregate) if given else None
    base = _closest(ok, values)
    base = {k: v for k, v in base.items() if k not in ("sample_values", "spread")}
    return {**base, **values, **_cost(members.values()), **jury}


def _closest(candidates: list[Item], values: Item) -> Item:
    """The first candidate that gave all of ``values`` (its details then fit them), else the first."""
    return next((c for c in candidates if all(c.get(m) == v for m, v in values.items())), candidates[0])


def _aggregate(values: list[Any], level: Level, how: str) -> Any:
    if how == "majority" or level == "nominal":
        return stats.majority(values)
    return statistics.fmean(values) if how == "mean" else statistics.median(values)


def _member_view(item: Item, scales: Mapping[str, Level]) -> Item:
    view = {"status": item["status"], **{metric: item.get(metric) for metric in scales}}
    if item.get("error"):
        view["error"] = item["error"]
    if item.get("spread"):
        view["spread"] = item["spread"]
    return view


def _cost(items: Any) -> Item:
    items = list(items)
    return {"requests": sum(i.get("requests", 0) for i in items), "cached": all(i.get("cached", True) for i in items)}


def _counts(by_member: Mapping[str, Sequence[Item]]) -> dict[str, dict[str, int]]:
    return {
        name: {"ok": sum(i["status"] == "ok" for i in items),
               "failed": sum(i["status"] in ("parse_error", "error") for i in items)}
        for name, items in by_member.items()
    }  # fmt: skip


def _reliability(by_member: Mapping[str, Sequence[Item]], metric: str, level: Level) -> dict[str, Any]:
    """Alpha and pairwise kappa across members; the within-item share and mean spread across samples."""
    figures: dict[str, Any] = {}
    columns = {name: [i.get(metric) if i["status"] == "ok" else None for i in items]
               for name, items in by_member.items()}  # fmt: skip
    if len(columns) > 1:
        units = list(zip(*columns.values(), strict=True))
        figures.update(level=level, alpha=stats.krippendorff_alpha(units, level), units=sum(
            sum(v is not None for v in unit) >= 2 for unit in units))  # fmt: skip
        if level != "interval":
            kappas = {
                f"{a} / {b}": stats.cohen_kappa([(x, y) for x, y in zip(columns[a], columns[b], strict=True)
                                                 if x is not None and y is not None])
                for a, b in itertools.combinations(columns, 2)
            }  # fmt: skip
            known = [k for k in kappas.values() if k is not None]
            figures.update(mean_kappa=statistics.fmean(known) if known else None, kappa=kappas)
    sampled = [items for items in by_member.values() if any("sample_values" in i for i in items)]
    if sampled:
        groups = [[[v for v in i["sample_values"][metric] if v is not None] for i in items if "sample_values" in i]
                  for items in sampled]  # fmt: skip
        spreads = [i["spread"][metric] for items in sampled for i in items if (i.get("spread") or {}).get(metric)
                   is not None]  # fmt: skip
        figures.update(
            level=level,
            within_item_share=stats.within_share(groups),
            mean_spread=statistics.fmean(spreads) if spreads else None,
        )
    return figures
