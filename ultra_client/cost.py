"""What a run's LLM requests cost: tokens in and out per step, priced from ``ultra_llm.prices``.

Every LLM tool returns its call's usage (``ultra_llm.completions.Usage.as_dict``) among its outputs,
as ``usage``, ``<something>_usage``, or inside one output mapping (``generate_info.usage``); the
model is the ``model_id`` of the step's LLM setting (a mapping with ``model_id`` or ``endpoints``).
No tool is named here: any tool returning a usage mapping is counted. Tokens are those the step
sent (answers from the answer cache cost nothing now and are counted apart). A model without a
price shows its tokens with cost "unknown", and the total then says so: never 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ultra_kit.errors import InputError
from ultra_llm.prices import PRICES_ENV, dollars, models_of, price_of

TOKEN_KEYS = ("prompt_tokens", "completion_tokens")


@dataclass
class StepCost:
    """One step's requests and tokens, its model and what they cost (None: the model has no price)."""

    step: str
    model: str
    requests: int
    cache_hits: int
    tokens_in: int
    tokens_out: int
    cost: float | None
    price_date: str = ""
    price_problem: str = ""  # why the price table could not be read


def usage_in(outputs: dict[str, Any]) -> dict[str, Any] | None:
    """The usage mapping among a tool's outputs (top level, or one mapping deep), or None."""
    for name, value in outputs.items():
        if _is_usage(value) and (name == "usage" or name.endswith("_usage")):
            return value
    for value in outputs.values():
        if isinstance(value, dict) and _is_usage(value.get("usage")):
            return value["usage"]
    return None


def _is_usage(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(key), int) for key in TOKEN_KEYS)


def step_cost(step: str, args: dict[str, Any], outputs: dict[str, Any]) -> StepCost | None:
    """The cost of one tool call, or None when the tool returned no usage (it asked no LLM)."""
    usage = usage_in(outputs)
    if usage is None:
        return None
    models = models_of(args)
    tokens_in, tokens_out = usage["prompt_tokens"], usage["completion_tokens"]
    # several LLM settings in one step: which tokens went to which model is not known, so no price
    try:
        price = price_of(models[0]) if len(models) == 1 else None
        problem = ""
    except InputError as exc:  # a broken $ULTRA_PRICES file: said under the table, never a failed run
        price, problem = None, str(exc)
    return StepCost(
        step=step,
        model=", ".join(models) or "?",
        requests=int(usage.get("requests") or 0),
        cache_hits=int(usage.get("cache_hits") or 0),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost=0.0 if not tokens_in + tokens_out else None if price is None else price.cost(tokens_in, tokens_out),
        price_date=price.date if price else "",
        price_problem=problem,
    )


def total_cost(steps: list[StepCost]) -> tuple[float, int]:
    """(dollars of the priced steps, number of steps whose cost is unknown)."""
    return sum(s.cost for s in steps if s.cost is not None), sum(1 for s in steps if s.cost is None)


def cost_lines(steps: list[StepCost]) -> list[str]:
    """The table printed at the end of a run: a row per LLM step and the total (empty without LLM steps)."""
    if not steps:
        return []
    from ultra_client.summary import align

    rows = [["step", "model", "requests", "cached", "tokens in", "tokens out", "cost"]]
    for s in steps:
        rows.append(
            [s.step, s.model, *map(str, (s.requests, s.cache_hits, s.tokens_in, s.tokens_out)), dollars(s.cost)]
        )
    known, unknown = total_cost(steps)
    total = dollars(known) if not unknown else ("unknown" if known == 0 else f"{dollars(known)} + unknown")
    rows.append(["total", "", *(str(sum(getattr(s, k) for s in steps)) for k in _SUMMED), total])
    lines = align(rows, [False, False, True, True, True, True, True])
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(-1, "-" * len(lines[0]))
    dates = sorted({s.price_date for s in steps if s.price_date})
    note = f"prices of {', '.join(dates)}" if dates else "no prices"
    if unknown:
        note += f"; {unknown} step(s) with a model that has no price: add it to a file named by ${PRICES_ENV}"
    problems = sorted({s.price_problem for s in steps if s.price_problem})
    return ["", f"LLM cost ({note}; cached answers cost nothing now):", *lines, *(f"prices: {p}" for p in problems)]


_SUMMED = ("requests", "cache_hits", "tokens_in", "tokens_out")


def cost_record(steps: list[StepCost]) -> dict[str, Any]:
    """What ``cost.json`` in the run folder holds: the steps and the total (None when any step is unknown)."""
    known, unknown = total_cost(steps)
    return {
        "steps": [asdict(s) for s in steps],
        "tokens_in": sum(s.tokens_in for s in steps),
        "tokens_out": sum(s.tokens_out for s in steps),
        "total_cost": None if unknown else known,
        "priced_cost": known,
        "unpriced_steps": unknown,
        "currency": "USD",
    }
