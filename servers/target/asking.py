"""One ``target.ask`` call from start to end: check the target, plan the turns, open the kind, ask (resuming
from the journal, reading the cache when one is named), write the result file and the run, check failures."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from servers.target import config, fastjson
from servers.target.conversations import plan as plan_turns
from servers.target.kinds import kind_module
from servers.target.records import failures, results
from servers.target.records.cache import ReplyCache
from servers.target.records.journal import RUNNER_KEYS, Journal, fingerprint
from servers.target.runner.estimate import EstimateAsker
from servers.target.runner.schedule import Run, ask_all
from ultra_kit.files import atomic_write, estimating, result_path


async def ask(
    q_ls: Sequence[Any], id_ls: Sequence[Any] | None, conv_ls: Sequence[Any] | None, gt_ls: Sequence[Any] | None,
    *, target: Any, save_path: str, on_done: Callable[[int, int], Awaitable[None]] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Ask every question; the tool's result (see ``tools/ask.py``)."""
    started = time.perf_counter()
    target = config.checked(target)
    plan = plan_turns(q_ls, id_ls, conv_ls, gt_ls, history=str(target["history"]))
    identity = {k: v for k, v in config.kind_keys(target).items() if k not in RUNNER_KEYS}
    key = fingerprint(identity, [[i.id, i.question, i.conversation, i.given_history, i.reference] for i in plan.items])
    estimate = estimating()
    save = result_path(save_path, "ask", ".jsonl")
    journal = None if estimate else Journal(_folder(save_path), key)
    cache_path = None if estimate else config.cache_file(target["target_cache"])
    cache = ReplyCache(cache_path) if cache_path is not None else None
    if estimate:
        asker: Any = EstimateAsker(str(target["kind"]), key)
    else:
        asker = kind_module(str(target["kind"])).open_asker(target, config.context_of(target))
    run = Run(asker, config.policy_of(target), identity, dict(target["settings"]), int(target["max_answer_chars"]),
              journal, cache, on_done)  # fmt: skip
    finished = False
    try:
        records, lines, resumed = await ask_all(plan, run)
        atomic_write(save, lambda h: h.writelines((line or fastjson.dumps(r) + b"\n").decode()
                                                  for r, line in zip(records, lines, strict=True)))  # fmt: skip
        run_path = atomic_write(
            save.with_suffix(".trec"), lambda h: h.writelines(f"{x}\n" for x in results.run_lines(records))
        )
        failed = failures.summarise(records)
        failures.check(failed, records, max_failed_fraction=target["max_failed_fraction"], result=str(save))
        finished = True
    finally:
        await asker.aclose()
        if journal is not None:
            journal.close(finished=finished)
        if cache is not None:
            cache.close()
    usage = results.usage_summary(records, kind=str(target["kind"]))
    info = {
        "kind": str(target["kind"]), "items": len(records), "answered": len(records) - failed["count"],
        "resumed": resumed, "cached": sum(bool(r.get("cached")) for r in records),
        "empty": sum("empty" in r["flags"] for r in records),
        "too_long": sum("too_long" in r["flags"] for r in records), "requests": usage["requests"],
        "seconds": round(time.perf_counter() - started, 3),
    }  # fmt: skip
    return {**results.outputs(records), "run_path": str(run_path), "latency": results.latency_summary(records),
            "failed": failed, "result_path": str(save), "target_info": info,
            "usage": usage}  # fmt: skip


def _folder(save_path: str) -> Path:
    """The folder results go to: ``save_path`` itself, or the folder of a file name."""
    path = Path(save_path)
    return path.parent if path.suffix else path
