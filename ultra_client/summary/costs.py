"""Tokens and cost of a run's LLM steps: recorded per step while the run goes, priced at its end.

The runner keeps, for each tool step that returns a usage mapping or ``failed``, the step's tokens in and out,
requests, cache hits, judged-item failures and model (``step_record``). The usage is found among the outputs
as ``usage``, ``<something>_usage`` or one mapping deep (``generate_info.usage``): no tool is named here. The
model is the ``model_id`` of the step's LLM setting (a pool's first endpoint's; ``local:<id>`` for the local
backend). At the end ``ultra run`` writes them to ``usage.json`` in the run folder and prints a table after
the results: tokens in/out and cost per step, and the total. Prices come from ``ultra_llm.prices``
(``ultra_llm/prices.yaml``, dated, with ``$ULTRA_PRICES`` over it). A model with no price, or a step with
several LLM settings (which tokens went to which model is not recorded), has cost ``unknown``, never 0 (and so
has the total); the local backend's models cost 0. A price file that cannot be read never fails the run: every
cost is unknown and the table says why. Tokens answered from the judge cache were paid for by an earlier run
and cost nothing now. A usage mapping with ``system_under_test`` (``target.ask``: the system being evaluated,
named by its kind) gets a row with its requests and reported tokens, model ``target:<kind>`` and cost unknown,
and stays out of the total: the total is what the evaluation itself spent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_base.redact import redact
from ultra_client.errors import UltraError
from ultra_llm.prices import LOCAL_PREFIX, PRICES_ENV, SHIPPED, Price, dollars, models_of, price_of, price_table

USAGE_FILE = "usage.json"
COUNTS = ("requests", "cache_hits", "prompt_tokens", "completion_tokens")
TOKEN_KEYS = ("prompt_tokens", "completion_tokens")
RECORDED = "recorded"  # a step that read recorded judgments (usage.recorded names the file) instead of asking
TARGET_PREFIX = "target:"  # a system under test's row: its cost is the user's own, unknown here


def usage_in(outputs: dict[str, Any]) -> dict[str, Any] | None:
    """The usage mapping among a tool's outputs (``usage``, ``*_usage``, or one mapping deep), or None."""
    usage = outputs.get("usage")
    if isinstance(usage, dict) and any(isinstance(usage.get(key), int) for key in COUNTS):
        return usage
    for name, value in outputs.items():
        if name.endswith("_usage") and _has_tokens(value):
            return value
    for value in outputs.values():
        if isinstance(value, dict) and _has_tokens(value.get("usage")):
            return value["usage"]
    return None


def _has_tokens(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(key), int) for key in TOKEN_KEYS)


def step_record(name: str, args: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any] | None:
    """What a step spent: its usage counts, ``failed`` summary and the model(s) of its LLM settings."""
    usage, failed = usage_in(outputs), outputs.get("failed")
    has_failed = isinstance(failed, dict) and isinstance(failed.get("count"), int)
    if usage is None and not has_failed:
        return None
    record: dict[str, Any] = {"step": name, "model": ", ".join(models_of(args))}
    system = usage.get("system_under_test") if usage is not None else None
    if isinstance(system, str):  # the system being evaluated: its tokens are not priced as its model_id's
        record.update(model=f"{TARGET_PREFIX}{system}", system_under_test=True)
    if usage is not None and isinstance(usage.get("recorded"), str):  # judgments read from a file: no model asked
        record["model"] = RECORDED
    for key in COUNTS:
        value = usage.get(key) if usage is not None else None
        record[key] = value if isinstance(value, int) else 0
    if asked_no_model(usage):
        record["model"] = ""  # an offline judge: no model, and no row in the table
    if has_failed:
        record["failed"] = {"count": failed["count"], "total": failed.get("total")}
    return record


def asked_no_model(usage: dict[str, Any] | None) -> bool:
    """Whether a step's usage (None: none) says it asked no model: no request, cache hit or token, and neither
    recorded judgments nor a system under test (an offline judge: ``judge.toxicity``'s classifier, HHEM)."""
    usage = usage or {}
    if isinstance(usage.get("recorded"), str) or isinstance(usage.get("system_under_test"), str):
        return False
    return not any(isinstance(usage.get(key), int) and usage[key] for key in COUNTS)


def step_records(name: str, args: dict[str, Any], outputs: dict[str, Any]) -> list[dict[str, Any]]:
    """What a step spent, one record per model: a jury's members (``usage.members``) each get their own row,
    priced as their own model; any other step one record (``step_record``), or none."""
    record = step_record(name, args, outputs)
    usage = usage_in(outputs) if record is not None else None
    members = usage.get("members") if usage is not None else None
    if record is None or not isinstance(members, dict) or len(members) < 2:
        return [record] if record is not None else []
    local = {model.removeprefix(LOCAL_PREFIX): model for model in _jury_models(args)}
    rows = []
    for member, spent in members.items():
        row = {"step": name, "model": local.get(member, member)}
        row.update({key: spent.get(key) if isinstance(spent.get(key), int) else 0 for key in COUNTS})
        rows.append(row)
    if "failed" in record:  # the step's judged items, not one member's: said once
        rows[0]["failed"] = record["failed"]
    return rows


def _jury_models(args: dict[str, Any]) -> list[str]:
    """The models of the jury members among a step's LLM settings (``local:<id>`` for a local one)."""
    inherited = [  # a member inherits its jury's other keys (the backend among them)
        {**{k: v for k, v in value.items() if k not in ("jury", "endpoints")}, **member}
        for value in args.values()
        if isinstance(value, dict) and isinstance(value.get("jury"), list)
        for member in value["jury"]
        if isinstance(member, dict)
    ]
    return models_of({str(i): member for i, member in enumerate(inherited)})


def step_price(record: dict[str, Any], table: dict[str, Price]) -> Price | None:
    """The price of a step's model; None (unknown) without a model, with several, or for one with no price."""
    models = record["model"].split(", ") if record["model"] else []
    return price_of(models[0], table) if len(models) == 1 else None


def step_cost(record: dict[str, Any], table: dict[str, Price]) -> float | None:
    """USD of one step's tokens, 0 for the local backend, None (unknown) for a model with no price or a system
    under test."""
    if record.get("system_under_test"):
        return None
    if not record["prompt_tokens"] and not record["completion_tokens"]:
        return 0.0  # nothing was sent (every reply came from the cache, or the step asked no LLM)
    price = step_price(record, table)
    return None if price is None else price.cost(record["prompt_tokens"], record["completion_tokens"])


def priced(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``usage.json``'s content: the steps with their cost, and the totals (cost None if any step's is unknown).
    A price file that cannot be read leaves every cost but the local backend's unknown, with the reason."""
    try:
        table, problem = price_table(), None
    except InputError as exc:  # a broken $ULTRA_PRICES file: said under the table, never a failed run
        table, problem = {}, str(exc)
    # priced by the real model id; a model id from a ${VAR} is shown and written as *** (ultra_base.redact)
    steps = [{**record, "cost_usd": step_cost(record, table), "model": redact(record["model"])} for record in records]
    own = [step for step in steps if not step.get("system_under_test")]  # the evaluation's own spend
    costs = [step["cost_usd"] for step in own]
    total = {key: sum(step[key] for step in own) for key in COUNTS}
    total["cost_usd"] = None if any(cost is None for cost in costs) else sum(costs)
    total["known_cost_usd"] = sum(cost for cost in costs if cost is not None)
    usage = {"steps": steps, "total": total, "prices": _sources(table)}
    if problem:
        usage["prices_problem"] = problem
    return usage


def _sources(table: dict[str, Price]) -> str:
    """Where the prices come from: ``mine.yaml of 2026-01-01 over prices.yaml of 2025-06-15``."""
    files = {price.source: price.date or "no stated date" for price in table.values()}
    order = sorted(files, key=lambda source: source == str(SHIPPED))  # the user's file over the shipped one
    return " over ".join(f"{Path(source).name} of {files[source]}" for source in order) or "none read"


def cost_lines(usage: dict[str, Any]) -> list[str]:
    """The table printed at the end of the run: a row per LLM step and the total; a step that asked no model
    (an offline judge: its record keeps its ``failed`` summary for the gates) has no row, as a retriever has none."""
    from ultra_client.summary.lines import align

    asked = [step for step in usage["steps"] if step["model"] or any(step[key] for key in COUNTS)]
    if not asked:
        return []
    rows = [["step", "model", "requests", "cache hits", "tokens in", "tokens out", "cost"]]
    for step in asked:
        counts = [str(step[key]) for key in COUNTS]
        rows.append([step["step"], step["model"] or "-", *counts, dollars(step["cost_usd"])])
    total = usage["total"]
    rows.append(["total", "", *(str(total[key]) for key in COUNTS), dollars(total["cost_usd"])])
    lines = align(rows, [False, False, True, True, True, True, True])
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(-1, "-" * len(lines[0]))
    notes = [f"prices: {usage['prices']} (USD per 1M tokens; a file named by ${PRICES_ENV} overrides them)"]
    if usage.get("prices_problem"):
        notes.append(f"prices not read: {usage['prices_problem']}")
    systems = [s["step"] for s in usage["steps"] if s.get("system_under_test")]
    if systems:
        notes.append(f"{', '.join(systems)}: the system under test, not priced and not in the total")
    if total["cost_usd"] is None:
        unknown = sorted({s["model"] or "no model" for s in usage["steps"]
                          if s["cost_usd"] is None and not s.get("system_under_test")})  # fmt: skip
        notes.append(f"no price for {'; '.join(unknown)}: the known part is {dollars(total['known_cost_usd'])}")
    return ["", *lines, *notes]


def finish_run(folder: Path, records: list[dict[str, Any]]) -> list[str]:
    """Price the run's steps, write ``usage.json`` into its folder, and return the lines to print."""
    from ultra_kit.files import atomic_write_json

    if not records:
        return []
    usage = priced(records)
    try:
        atomic_write_json(folder / USAGE_FILE, usage)
    except OSError as exc:
        raise UltraError(f"{folder / USAGE_FILE}: cannot write: {exc.strerror or exc}") from None
    return cost_lines(usage)


def run_usage(folder: Path) -> dict[str, Any] | None:
    """A run folder's ``usage.json``, if it has one (and it is readable, within the limits of run records)."""
    from ultra_client.runs.records import optional_json_record

    data = optional_json_record(folder / USAGE_FILE, "run usage")
    return data if isinstance(data, dict) and isinstance(data.get("steps"), list) else None
