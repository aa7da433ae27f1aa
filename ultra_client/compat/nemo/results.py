"""``results.json`` in NeMo Evaluator's layout, from the run's ``memory.json``.

NeMo's result: ``{"groups": {"evaluation": {"metrics": {"evaluation": {"scores": {METRIC: {"value": x}}}}}}}``,
one entry per metric of the job (its name in the job's ``metrics``), ``value`` the mean over items.
The same scores are under ``tasks.<task name>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_client.errors import UltraError
from ultra_kit.files import atomic_write_json


def nemo_results(memory: dict[str, Any], scores: dict[str, tuple[str, str]], task: str) -> dict[str, Any]:
    """The NeMo result of a run: each metric's mean, read from the variable and key that hold it."""
    values: dict[str, dict[str, Any]] = {}
    for label, (variable, key) in scores.items():
        holder = memory.get(variable)
        if not isinstance(holder, dict) or key not in holder:
            raise UltraError(f"the run produced no {variable}.{key}, the value of metric {label!r}")
        values[label] = {"value": holder[key]}
    block = {"metrics": {"evaluation": {"scores": values}}}
    return {"tasks": {task: block}, "groups": {"evaluation": block}}


def write_results(folder: Path, scores: dict[str, tuple[str, str]], task: str) -> Path:
    """Write ``<run folder>/results.json`` from the run's ``memory.json`` (read within the run folders' size and
    depth limits: ``ultra_client.runs.records``)."""
    from ultra_client.runs.records import UnreadableRecord, read_memory

    try:
        memory = read_memory(folder)
    except UnreadableRecord as exc:
        raise UltraError(f"{exc}; no NeMo results.json was written") from None
    if memory is None:
        raise UltraError(f"{folder}: the run left no memory.json; no NeMo results.json was written")
    return atomic_write_json(folder / "results.json", nemo_results(memory, scores, task))
