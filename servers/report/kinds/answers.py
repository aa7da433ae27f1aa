"""The per-item kinds of result file: ``evaluate`` / ``evaluate_mtrag`` lists and an answer judge's items."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from servers.report.kinds.judges import panel_scalars
from servers.report.kinds.shapes import TIMESTAMP, declared, tool_of
from servers.report.model import Found, as_number, numeric_column
from servers.report.readers import new_run
from servers.report.risk import verdict
from ultra_base.errors import InputError


def read_answer_lists(document: dict[str, Any], path: str) -> Found:
    """``evaluate`` / ``evaluate_mtrag``: per-item lists aligned with ``id_ls``."""
    settings = document.get("settings", {})
    kind = "evaluate_mtrag" if "mtrag_metrics" in settings else "evaluate" if "metrics" in settings else ""
    kind = kind or TIMESTAMP.sub("", Path(path).stem)  # e.g. semantic_similarity_<time>.json
    ids = document.get("id_ls")
    lists = {k: v for k, v in document.items() if isinstance(v, list) and k != "id_ls"}
    if not isinstance(ids, list):
        raise InputError(
            f"this {kind} file has per-item lists but no id_ls, so its values cannot be joined on ids; "
            f"rerun {kind} (it now writes id_ls next to the per-item values)",
            path=path,
        )
    run = new_run(Path(path).stem, kind, path, settings)
    declared(run, settings)
    for name, values in lists.items():
        column = numeric_column(values)
        if column is None:
            continue  # e.g. a list per item (per-passage values), summarised through its own _max column
        if len(values) != len(ids):
            raise InputError(
                f"{name} has {len(values)} values but id_ls has {len(ids)} ids: the file is misaligned; "
                f"rerun {kind} to rewrite it",
                path=path,
            )
        run.add_column(name, ids, column, source=f"{kind}: {path}")
    return Found(kind, [run])


def read_answer_judge(document: dict[str, Any], path: str) -> Found:
    """An LLM answer judge (``<kind>_judge``): ``items`` with ``id``, ``status`` and the judge's metrics."""
    tool = tool_of(document)
    aggregate = document.get("aggregate", {})
    metrics = [k for k in aggregate if not k.startswith("num_") and f"num_{k}" in aggregate]
    items = document.get("items")
    if not isinstance(items, list) or not all(isinstance(i, dict) and "id" in i for i in items):
        raise InputError(f"{tool}: 'items' must be a list of objects with an 'id'", path=path)
    run = new_run(Path(path).stem, tool, path, document.get("settings"))
    ids = [str(item["id"]) for item in items]
    declared(run, document)
    for item, key in zip(items, ids, strict=True):
        said, why = verdict(item, tuple(metrics))
        if said or why:
            run.rationales.setdefault(key, []).append((tool, said, why))
    for name in metrics:  # a failed item has no value (it is counted in n, never scored)
        given = run.add_column(
            name, ids, [i.get(name) if i.get("status") == "ok" else None for i in items], source=tool
        )
        recorded = judge_samples(items, ids, name)
        if recorded:
            run.samples[given] = recorded
    found = Found(tool, [run], scalars=panel_scalars(document))
    if tool == "idk_judge":
        ok = [i for i in items if i.get("status") == "ok" and i.get("answer_attempted") is not None]
        answered = sum(float(i["answer_attempted"]) for i in ok)
        run.answered = {"answered": answered, "judged": len(ok), "items": len(items)}
    failed = sum(i.get("status") in ("error", "parse_error") for i in items)
    if failed:
        run.failures[tool] = failed
    failed = len(items) - sum(i.get("status") == "ok" for i in items)
    if failed:
        found.notes.append(f"{tool} ({Path(path).name}): {failed} of {len(items)} items were not judged (no value)")
    return found


def judge_samples(items: list[dict[str, Any]], ids: list[str], metric: str) -> dict[str, np.ndarray]:
    """Per ok item its judge samples of ``metric`` (``sample_values``, written by a judge run with
    ``judge_llm.samples: k``; failed samples left out); {} when no item recorded any or ids repeat."""
    if len(set(ids)) != len(ids):
        return {}
    found = {}
    for item, key in zip(items, ids, strict=True):
        listed = (item.get("sample_values") or {}).get(metric) if item.get("status") == "ok" else None
        values = [as_number(v) for v in listed or [] if v is not None]
        if values and all(math.isfinite(v) for v in values):
            found[key] = np.asarray(values)
    return found
