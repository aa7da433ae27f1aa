"""A gate's conditions, from a pipeline's ``gate:`` block or a gate file, checked with file:line errors.

Each condition names a scalar result as ``ultra sweep --metric`` does (``variable.key``, e.g.
``eval_res.map``; a numeric variable such as ``kappa_graded``; or ``failed_fraction``) and has ``min``
and/or ``max``, or ``baseline`` (a run folder) with ``max_drop`` and/or ``no_significant_drop: true`` (a
paired test, ``ultra_client.gates.significance``). A drop is a change for the worse in the metric's direction
(a rise for a lower-is-better one: ``ultra_client.gates.direction``)::

    gate:
      - {metric: eval_res.map, min: 0.30}
      - {metric: failed_fraction, max: 0.02}
      - {metric: eval_res.ndcg@10, baseline: runs/main, max_drop: 0.01}
      - {metric: eval_res.ndcg@10, baseline: runs/main, no_significant_drop: true}
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_client.errors import UltraError, as_ultra_error, did_you_mean, located
from ultra_client.gates import ERROR, EXIT_CODES, FAILED_FRACTION
from ultra_kit.yaml_files.lines import load_yaml_with_lines


class GateNotEvaluable(UltraError):
    """A gate that names a metric the run cannot produce: ``ultra`` exits 2, as for a verdict that is an error."""

    exit_code = EXIT_CODES[ERROR]


CONDITION_KEYS = ("metric", "min", "max", "baseline", "max_drop", "no_significant_drop")
EXAMPLE = "e.g. - {metric: eval_res.map, min: 0.3}"


@dataclass(frozen=True)
class Condition:
    """One checked gate condition; ``where`` is its file:line (or a note for the implicit ones)."""

    metric: str
    min: float | None = None
    max: float | None = None
    baseline: str | None = None
    max_drop: float | None = None
    no_significant_drop: bool = False
    where: str = ""

    def describe(self, higher_is_better: bool = True) -> str:
        """The condition as a line of the verdict table, e.g. ``eval_res.map >= baseline - 0.01``; for a
        lower-is-better metric a drop is a rise: ``toxicity.toxic <= baseline + 0.01``."""
        parts = []
        if self.no_significant_drop:
            parts.append(f"{self.metric}: no significant {'drop' if higher_is_better else 'rise'} vs baseline")
        if self.max_drop is not None:
            sign = ">= baseline -" if higher_is_better else "<= baseline +"
            parts.append(f"{self.metric} {sign} {self.max_drop:g}")
        if self.min is not None:
            parts.append(f"{self.metric} >= {self.min:g}")
        if self.max is not None:
            parts.append(f"{self.metric} <= {self.max:g}")
        return ", ".join(parts)


def parse_gate(items: Any, path: Path, line: int | None = None) -> list[Condition]:
    """The conditions of a ``gate:`` list (from ``load_yaml_with_lines``); an UltraError at file:line if malformed."""
    if not isinstance(items, list) or not items:
        raise located(path, getattr(items, "line", line), f"'gate' must be a non-empty list of conditions, {EXAMPLE}")
    return [_condition(item, path, getattr(items, "line", line)) for item in items]


def _condition(item: Any, path: Path, line: int | None) -> Condition:
    where_line = getattr(item, "line", line)
    if not isinstance(item, dict):
        raise located(path, where_line, f"a gate condition is a mapping with 'metric' and 'min', 'max' or 'baseline', "
                      f"{EXAMPLE}; got {item!r}")  # fmt: skip
    for key in item:
        if key not in CONDITION_KEYS:
            raise located(path, where_line, f"unknown gate key '{key}'" + did_you_mean(str(key), list(CONDITION_KEYS)))
    metric = item.get("metric")
    if not isinstance(metric, str) or not metric.strip() or metric != metric.strip():
        raise located(
            path,
            where_line,
            f"'metric' names a scalar result as variable.key (e.g. eval_res.map), a numeric variable or "
            f"{FAILED_FRACTION}; got {metric!r}",
        )
    paired = item.get("no_significant_drop", False)
    if not isinstance(paired, bool):
        raise located(path, where_line, f"'no_significant_drop' is true or false; got {paired!r}")
    bounds = {key: _number(item, key, path, where_line) for key in ("min", "max", "max_drop")}
    baseline = item.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline.strip()):
        raise located(path, where_line, f"'baseline' is the path of a run folder, e.g. runs/main; got {baseline!r}")
    if baseline is not None and bounds["max_drop"] is None and not paired:
        raise located(
            path, where_line, "'baseline' needs 'max_drop: 0.01' or 'no_significant_drop: true' (a paired test)"
        )
    if baseline is None and (bounds["max_drop"] is not None or paired):
        raise located(
            path, where_line, "'max_drop' and 'no_significant_drop' compare with a run: add baseline: <folder>"
        )
    if bounds["max_drop"] is not None and bounds["max_drop"] < 0:
        raise located(path, where_line, f"'max_drop' must be 0 or more; got {bounds['max_drop']:g}")
    if baseline is None and bounds["min"] is None and bounds["max"] is None:
        raise located(path, where_line, f"gate condition on {metric} needs 'min', 'max' or 'baseline'; {EXAMPLE}")
    if bounds["min"] is not None and bounds["max"] is not None and bounds["min"] > bounds["max"]:
        raise located(path, where_line, f"'min' ({bounds['min']:g}) is above 'max' ({bounds['max']:g}): nothing passes")
    return Condition(
        metric=str(metric),
        min=bounds["min"],
        max=bounds["max"],
        baseline=None if baseline is None else str(baseline),
        max_drop=bounds["max_drop"],
        no_significant_drop=paired,
        where=f"{path}:{where_line}" if where_line else str(path),
    )


def _number(item: dict, key: str, path: Path, line: int | None) -> float | None:
    value = item.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise located(path, line, f"'{key}' must be a finite number; got {value!r}")
    return float(value)


def read_gate_file(file: str | Path) -> list[Condition]:
    """The conditions of a gate file: a YAML mapping holding one ``gate:`` list. A file that cannot be read or is
    malformed (missing, a directory, too large or deep, a syntax error, a bad condition) is a ``GateNotEvaluable``
    at file:line: ``ultra`` exits 2, never 1 (which says a condition failed)."""
    path = Path(file)
    try:
        with as_ultra_error():
            data = load_yaml_with_lines(path, "gate")
        if not isinstance(data, dict) or "gate" not in data:
            where = getattr(data, "line", None)
            raise located(path, where, f"a gate file holds a 'gate:' list of conditions, {EXAMPLE}")
        other = [str(key) for key in data if key != "gate"]
        if other:
            raise located(path, data.line, f"unknown key(s) {other} in a gate file; it holds only 'gate:'")
        return parse_gate(data["gate"], path, data.line)
    except GateNotEvaluable:
        raise
    except UltraError as exc:
        raise GateNotEvaluable(f"{exc} (the gate cannot be evaluated)") from None


def check_gate_options(junit: str | None, conditions: list[Condition], reads: Iterable[str | Path] = ()) -> None:
    """Before any work: ``--junit`` without any gate condition would write an empty report, and a ``--junit``
    path that cannot be written (a folder, a missing or read-only folder) would fail after the whole run; an
    empty one would be ignored, and one naming a file the command reads (``reads``: the gate file, the pipeline,
    the run's memory.json) would be overwritten by the report."""
    if junit is not None and not junit.strip():
        raise UltraError("--junit is empty: give the path of a file (e.g. gate.xml)")
    if junit and not conditions:
        raise UltraError("--junit writes the gate's verdicts: give --gate FILE or a pipeline with a 'gate:' block")
    if junit:
        check_output_file(Path(junit), "--junit")
        clobbered = [str(read) for read in reads if read and Path(read).resolve() == Path(junit).resolve()]
        if clobbered:
            raise UltraError(f"--junit {junit}: is {clobbered[0]}, which this command reads; give another file")


def check_output_file(path: Path, option: str) -> None:
    """UltraError unless ``path`` can be written as a file: not a folder, and its nearest existing ancestor a folder
    that may be written (missing folders are created when the file is written)."""
    import os

    if path.is_dir():
        raise UltraError(f"{option} {path}: is a folder; give the path of a file (e.g. {path / 'gate.xml'})")
    if path.exists() and not path.is_file():
        raise UltraError(f"{option} {path}: is not a regular file")
    folder = path.absolute().parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise UltraError(f"{option} {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UltraError(f"{option} {path}: the folder {folder} cannot be written")


def check_gate_variables(conditions: list[Condition], produced: Iterable[str]) -> None:
    """Before a run spends anything (``ultra build``, the start of ``ultra run``): each condition's variable
    (``eval_res`` of ``eval_res.map``) must be one a step of the pipeline produces, or ``failed_fraction``; an
    UltraError at the condition's file:line otherwise. The key inside a mapping is checked after the run (a
    tool's result keys are not all known before it runs)."""
    names = sorted(produced)
    for condition in conditions:
        variable = condition.metric.split(".", 1)[0]
        if condition.metric == FAILED_FRACTION or variable in names:
            continue
        raise GateNotEvaluable(
            f"{condition.where}: gate metric {condition.metric}: no step of the pipeline produces a variable "
            f"'{variable}'" + did_you_mean(variable, [*names, FAILED_FRACTION])
        )
