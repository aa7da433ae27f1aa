"""NeMo's RAG metric names -> our step and setting, read from ``translation.yaml`` (the one table).

A NeMo metric is ``{"type": NAME}``; a retrieval metric carries its cutoff in the name (``recall_5``,
``ndcg_cut_10``). Each entry of the table says which step scores it, what the items need, which
setting configures it and where the step's result holds the mean over items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultra_base.errors import closest
from ultra_base.file_limits import load_limited_yaml

TABLE_FILE = Path(__file__).with_name("translation.yaml")


def read_table(path: Path = TABLE_FILE) -> dict[str, Any]:
    """The translation table in ``path``, read within the size, depth and alias limits of every YAML file read."""
    return load_limited_yaml(path, kind="NeMo translation")


TABLE: dict[str, Any] = read_table()
STAGES: dict[str, list[Any]] = TABLE["stages"]
CUTOFF = re.compile(r"^(?P<stem>[a-z_]+?)_(?P<k>[0-9]+)$")


@dataclass(frozen=True)
class MetricSpec:
    """How one NeMo metric is scored here (an entry of the table)."""

    step: str  # server.tool
    needs: tuple[str, ...]
    setting: str
    result: str
    score: str
    note: str
    input: dict[str, str] = field(default_factory=dict)  # the step's input renames

    @property
    def server(self) -> str:
        return self.step.split(".", 1)[0]


METRICS: dict[str, MetricSpec] = {
    name: MetricSpec(**{**entry, "needs": tuple(entry["needs"])}) for name, entry in TABLE["metrics"].items()
}


@dataclass(frozen=True)
class Metric:
    """A metric of the job: its name in the job (the result key), its NeMo type, and its translation."""

    label: str
    type: str
    spec: MetricSpec
    k: int | None = None

    @property
    def score(self) -> tuple[str, str]:
        """(variable, key) of the mean in the run's memory."""
        variable, key = self.spec.score.format(k=self.k).split(".", 1)
        return variable, key

    @property
    def measure(self) -> str:
        """The key of the mean in the step's result (for evaluate_trec, trec_eval's own measure name)."""
        return self.score[1]


def lookup(label: str, name: str) -> Metric | None:
    """The metric called ``name`` (a NeMo type), or None if there is no such metric."""
    if name in METRICS and "{k}" not in name:
        return Metric(label, name, METRICS[name])
    match = CUTOFF.match(name)
    if match and int(match["k"]) > 0 and f"{match['stem']}_{{k}}" in METRICS:
        return Metric(label, name, METRICS[f"{match['stem']}_{{k}}"], int(match["k"]))
    return None


def known_names() -> list[str]:
    """The metric names as the docs and errors show them (``recall_<k>``)."""
    return [name.replace("{k}", "<k>") for name in METRICS]


def did_you_mean(name: str) -> str:
    """'did you mean X? ' for an unknown metric name (cutoff names tried with the name's own number), or ''."""
    digits = re.findall(r"[0-9]+", name)
    k = digits[-1] if digits else "5"
    candidates = [pattern.format(k=k) for pattern in METRICS]
    near = closest(name, candidates)
    return f"did you mean {near}? " if near else ""
