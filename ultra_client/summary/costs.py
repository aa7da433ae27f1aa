"""Tokens and cost of a run's LLM steps: recorded per step while the run goes, priced at its end.

The runner keeps, for each tool step that returns ``usage`` or ``failed``, the step's tokens in and out,
requests, cache hits, judged-item failures and model (``step_record``). At the end ``ultra run`` writes them
to ``usage.json`` in the run folder and prints a table after the results: tokens in/out and cost per step,
and the total. Prices (USD per million tokens) come from ``ultra_llm/prices.yaml`` (with the date they were
read), overridden entry by entry by the YAML file ``$ULTRA_PRICES``. A model with no price has cost
``unknown``, never 0 (and so has the total); the local backend's models cost 0. Tokens answered from the
judge cache were paid for by an earlier run and cost nothing now.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_client.errors import UltraError

PRICES_FILE = Path(__file__).resolve().parents[1] / "ultra_llm" / "prices.yaml"
PRICES_ENV = "ULTRA_PRICES"
USAGE_FILE = "usage.json"
DATED_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")  # gpt-4o-mini-2024-07-18 is priced as gpt-4o-mini
COUNTS = ("requests", "cache_hits", "prompt_tokens", "completion_tokens")


@dataclass(frozen=True)
class Prices:
    """USD per million tokens ``{model: (input, output)}`` and where they come from (files and dates)."""

    models: dict[str, tuple[float, float]]
    source: str

    def of(self, model: str) -> tuple[float, float] | None:
        return self.models.get(model) or self.models.get(DATED_SNAPSHOT.sub("", model))


def _read_prices(path: Path) -> tuple[dict[str, tuple[float, float]], str]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise UltraError(f"{path}: cannot read the price table: {exc}") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise UltraError(f"{path}: a price table is a mapping with 'date' and 'models: {{name: {{input, output}}}}'")
    table = {}
    for name, price in models.items():
        values = [price.get(key) if isinstance(price, dict) else None for key in ("input", "output")]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
                   for v in values):  # fmt: skip
            expected = "{input: USD per 1M tokens, output: USD per 1M tokens}"
            raise UltraError(f"{path}: model {name!r}: expected {expected}, got {price!r}")
        table[str(name)] = (float(values[0]), float(values[1]))
    return table, f"{path.name} of {data.get('date', 'no stated date')}"


def load_prices() -> Prices:
    """The built-in price table, with ``$ULTRA_PRICES``'s entries on top."""
    models, source = _read_prices(PRICES_FILE)
    override = os.environ.get(PRICES_ENV, "").strip()
    if override:
        extra, extra_source = _read_prices(Path(override).expanduser())
        models, source = {**models, **extra}, f"{extra_source} over {source}"
    return Prices(models, source)


def step_record(name: str, args: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any] | None:
    """What a step spent: its ``usage`` counts, ``failed`` summary and the model of its ``*_llm`` setting."""
    usage, failed = outputs.get("usage"), outputs.get("failed")
    has_usage = isinstance(usage, dict) and any(isinstance(usage.get(key), int) for key in COUNTS)
    has_failed = isinstance(failed, dict) and isinstance(failed.get("count"), int)
    if not (has_usage or has_failed):
        return None
    llm = next((v for k, v in args.items() if k.endswith("_llm") and isinstance(v, dict)), {})
    record: dict[str, Any] = {"step": name, "model": str(llm.get("model_id") or ""), "backend": llm.get("backend")}
    for key in COUNTS:
        value = usage.get(key) if has_usage else None
        record[key] = value if isinstance(value, int) else 0
    if has_failed:
        record["failed"] = {"count": failed["count"], "total": failed.get("total")}
    return record


def step_cost(record: dict[str, Any], prices: Prices) -> float | None:
    """USD of one step's tokens, 0 for the local backend, None (unknown) for a model with no price."""
    if not record["prompt_tokens"] and not record["completion_tokens"]:
        return 0.0  # nothing was sent (every reply came from the cache, or the step asked no LLM)
    if record.get("backend") == "local":
        return 0.0
    price = prices.of(record["model"]) if record["model"] else None
    if price is None:
        return None
    return (record["prompt_tokens"] * price[0] + record["completion_tokens"] * price[1]) / 1e6


def priced(records: list[dict[str, Any]], prices: Prices) -> dict[str, Any]:
    """``usage.json``'s content: the steps with their cost, and the totals (cost None if any step's is unknown)."""
    steps = [{**record, "cost_usd": step_cost(record, prices)} for record in records]
    costs = [step["cost_usd"] for step in steps]
    total = {key: sum(step[key] for step in steps) for key in COUNTS}
    total["cost_usd"] = None if any(cost is None for cost in costs) else sum(costs)
    total["known_cost_usd"] = sum(cost for cost in costs if cost is not None)
    return {"steps": steps, "total": total, "prices": prices.source}


def dollars(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def cost_lines(usage: dict[str, Any]) -> list[str]:
    """The table printed at the end of the run: a row per LLM step and the total."""
    from ultra_client.summary.lines import align

    if not usage["steps"]:
        return []
    rows = [["step", "model", "requests", "cache hits", "tokens in", "tokens out", "cost"]]
    for step in usage["steps"]:
        counts = [str(step[key]) for key in COUNTS]
        rows.append([step["step"], step["model"] or "-", *counts, dollars(step["cost_usd"])])
    total = usage["total"]
    rows.append(["total", "", *(str(total[key]) for key in COUNTS), dollars(total["cost_usd"])])
    lines = align(rows, [False, False, True, True, True, True, True])
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(-1, "-" * len(lines[0]))
    note = f"prices: {usage['prices']} (USD per 1M tokens; ${PRICES_ENV} names a file that overrides them)"
    if total["cost_usd"] is None:
        unknown = sorted({s["model"] or "no model" for s in usage["steps"] if s["cost_usd"] is None})
        note += f"; no price for {', '.join(unknown)}: the known part is {dollars(total['known_cost_usd'])}"
    return ["", *lines, note]


def finish_run(folder: Path, records: list[dict[str, Any]]) -> list[str]:
    """Price the run's steps, write ``usage.json`` into its folder, and return the lines to print."""
    from ultra_kit.files import atomic_write_json

    if not records:
        return []
    try:
        usage = priced(records, load_prices())
    except UltraError as exc:
        return ["", f"cost: not computed ({exc})"]
    try:
        atomic_write_json(folder / USAGE_FILE, usage)
    except OSError as exc:
        raise UltraError(f"{folder / USAGE_FILE}: cannot write: {exc.strerror or exc}") from None
    return cost_lines(usage)


def run_usage(folder: Path) -> dict[str, Any] | None:
    """A run folder's ``usage.json``, if it has one."""
    import json

    try:
        data = json.loads((folder / USAGE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("steps"), list) else None
