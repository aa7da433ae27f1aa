"""What a report is made of: runs (per-query metric columns joined on ids) and what else the files said."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ultra_base.errors import InputError


def as_number(value: Any) -> float:
    """A per-item value as a float; None, text and non-finite values are NaN (no value)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return math.nan


@dataclass
class Run:
    """One run or configuration: metric columns over its query ids (NaN = no value for that query)."""

    label: str
    ids: list[str] = field(default_factory=list)
    columns: dict[str, np.ndarray] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)  # "kind: path" of every file read
    texts: dict[str, dict[str, str]] = field(default_factory=dict)  # id -> {"question": ..., "answer": ...}
    parameters: dict[str, Any] = field(default_factory=dict)  # source -> settings it recorded
    timings: dict[str, Any] | None = None
    answered: dict[str, Any] | None = None  # the IDK judge's answer-attempt share
    failures: dict[str, int] = field(default_factory=dict)  # tool -> items it failed to judge (no value)
    nuggets: dict[str, set[str]] = field(default_factory=dict)  # id -> the vital nuggets its answer supports
    origin: dict[str, str] = field(default_factory=dict)  # metric -> the kind of file it came from
    kinds: dict[str, str] = field(default_factory=dict)  # metric -> binary / graded / continuous / count, as declared
    lower_is_better: set[str] = field(default_factory=set)  # metrics declared lower-is-better (toxicity); others higher
    rationales: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # id -> [(judge, verdict, why)]
    notes: list[str] = field(default_factory=list)
    samples: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)  # metric -> id -> its judge samples
    quantiles: dict[str, tuple[float, ...]] = field(default_factory=dict)  # metric -> percentiles compare also tests
    groups: dict[str, str] = field(default_factory=dict)  # id -> its group (memory.json's group_ls: report.groups)
    group_by: str = ""  # the attribute the groups are values of (benchmark.group_by)
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def add_column(self, name: str, ids: Sequence[Any], values: Sequence[Any] | np.ndarray, *, source: str) -> str:
        """Join a column on its ids; a name already taken gets ``<source kind>.`` in front (the name it got)."""
        path = source.split(": ", 1)[-1]
        keys = [str(i) for i in ids]
        if len(keys) != len(values):
            raise InputError(f"{name} has {len(values)} values for {len(keys)} ids", path=path)
        if len(set(keys)) != len(keys):
            keys = unique_ids(keys)
            note = f"{path}: ids repeat (several items per id); the n-th item of an id is shown as '<id> #n'"
            if note not in self.notes:
                self.notes.append(note)
        column = values if _is_float(values) else numeric_column(values)
        if column is None:
            raise InputError(f"{name} holds values that are not numbers", path=path)
        if name in self.columns:
            name = f"{source.split(':', 1)[0]}.{name}"
        self.origin.setdefault(name, source.split(":", 1)[0])
        if keys == self.ids:
            self.columns[name] = np.asarray(column, dtype=np.float64)
            return name
        self._extend(keys)
        full = np.full(len(self.ids), np.nan)
        full[[self._index[k] for k in keys]] = column
        self.columns[name] = full
        return name

    def add_mapping(self, per_id: Mapping[Any, Mapping[str, Any]], *, source: str, skip: set[str]) -> None:
        """Columns from ``{id: {metric: value}}``: every numeric field except those in ``skip``."""
        ids = [str(i) for i in per_id]
        names = dict.fromkeys(k for row in per_id.values() for k, v in row.items() if k not in skip and _number(v))
        for name in names:
            self.add_column(name, ids, [row.get(name) for row in per_id.values()], source=source)

    def _extend(self, keys: Sequence[str]) -> None:
        if not self._index and self.ids:
            self._index = {k: i for i, k in enumerate(self.ids)}
        new = [k for k in dict.fromkeys(keys) if k not in self._index]
        if not new:
            return
        for key in new:
            self._index[key] = len(self.ids)
            self.ids.append(key)
        for name, column in self.columns.items():
            self.columns[name] = np.concatenate([column, np.full(len(new), np.nan)])

    def merge(self, other: Run) -> None:
        """Take ``other``'s columns, texts and records into this run (joined on ids)."""
        for name, column in other.columns.items():
            given = self.add_column(name, other.ids, column, source=other.sources[0] if other.sources else name)
            if name in other.samples:
                self.samples[given] = other.samples[name]
            if name in other.lower_is_better:
                self.lower_is_better.add(given)
            if name in other.quantiles:
                self.quantiles[given] = other.quantiles[name]
        self.sources += other.sources
        self.notes += [note for note in other.notes if note not in self.notes]
        self.parameters.update(other.parameters)
        self.answered = other.answered or self.answered
        for key, supported in other.nuggets.items():
            self.nuggets.setdefault(key, supported)
        for key, count in other.failures.items():
            self.failures[key] = self.failures.get(key, 0) + count
        for key, kind in other.kinds.items():
            self.kinds.setdefault(key, kind)
        for key, said in other.rationales.items():
            self.rationales.setdefault(key, []).extend(said)
        for key, text in other.texts.items():
            self.texts.setdefault(key, text)


def counts_of(runs: Sequence[Run]) -> set[str]:
    """The columns a result file declared counts (``kind: count``: ``num_ret``, ``num_rel``): numbers of things,
    shown as counts (per query, in totals), never summarised, charted, led with or compared as metrics."""
    return {name for run in runs for name, kind in run.kinds.items() if kind == "count"}


def numeric_column(values: Sequence[Any]) -> np.ndarray | None:
    """Per-item values as float64 (None, NaN and infinities: NaN), or None when they are not numbers
    (text, or a list per item)."""
    try:
        column = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        if any(isinstance(v, list | dict | tuple) for v in values):
            return None
        column = np.asarray([as_number(v) for v in values], dtype=np.float64)
    if column.ndim != 1:
        return None
    if any(isinstance(v, str) for v in values[:1]):
        return None
    column[~np.isfinite(column)] = np.nan
    return column


def unique_ids(ids: Sequence[str]) -> list[str]:
    """``ids`` with the 2nd, 3rd ... occurrence of an id renamed ``<id> #2``, ``<id> #3`` (the same rule for
    every file of a run, so repeated ids still join: the n-th item of an id with the n-th)."""
    seen: dict[str, int] = {}
    unique = []
    for key in ids:
        seen[key] = seen.get(key, 0) + 1
        unique.append(key if seen[key] == 1 else f"{key} #{seen[key]}")
    return unique


def _is_float(values: Any) -> bool:
    return isinstance(values, np.ndarray) and values.dtype == np.float64


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass
class Found:
    """What one result file holds: its runs, and the tables that go on the page as they are."""

    kind: str
    runs: list[Run] = field(default_factory=list)
    significance: list[dict[str, Any]] = field(default_factory=list)  # evaluate_trec_pvalue's table
    scalars: dict[str, float] = field(default_factory=dict)  # results without per-query values
    folders: list[tuple[str, str]] = field(default_factory=list)  # (label, run folder) still to read: sweep trials
    sweep: dict[str, Any] | None = None  # the sweep's columns and rows
    risk: dict[str, Any] | None = None  # the risk table: path, rows, failing examples per row, note
    judged: dict[str, Any] | None = None  # ppi / compare_judged / fill_qrels: tool, path, document
    notes: list[str] = field(default_factory=list)
