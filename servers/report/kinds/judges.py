"""The judged kinds of result file read per query: ``umbrela_judge``, ``nuggetize``, ``judge_agreement``;
a jury's reliability figures (``panel_scalars``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers.report.kinds.shapes import declared, mapping
from servers.report.model import Found
from servers.report.readers import new_run, supported_vital


def read_umbrela(document: dict[str, Any], path: str) -> Found:
    run = new_run(Path(path).stem, "umbrela_judge", path, document.get("settings"))
    run.add_mapping(mapping(document, "per_query", path), source=f"umbrela_judge: {path}", skip=set())
    declared(run, document)  # num_judged, num_excluded: counts
    return Found("umbrela_judge", [run], scalars=panel_scalars(document))


def panel_scalars(document: dict[str, Any]) -> dict[str, float]:
    """A jury's agreement and the samples' noise per metric (the result's ``panel.reliability``), as scalars."""
    reliability = (document.get("panel") or {}).get("reliability") or {}
    return {
        f"{metric} {name}": float(figures[name])
        for metric, figures in reliability.items()
        if isinstance(figures, dict)
        for name in ("alpha", "mean_kappa", "within_item_share", "mean_spread")
        if isinstance(figures.get(name), int | float)
    }


def read_nuggetize(document: dict[str, Any], path: str) -> Found:
    by_run: dict[str, dict[str, dict[str, Any]]] = {}
    for qid, runs in mapping(document, "per_query", path).items():
        for name, scores in runs.items():
            ok = scores.get("status") == "ok"
            by_run.setdefault(str(name), {})[str(qid)] = {k: v for k, v in scores.items() if ok or k == "num_nuggets"}
    supported = supported_vital(document, path)
    runs = []
    for name, per_query in by_run.items():
        run = new_run(name, "nuggetize", path)
        run.add_mapping(per_query, source=f"nuggetize: {path}", skip=set())
        run.nuggets = supported.get(name, {})
        declared(run, document)  # num_nuggets: a count
        runs.append(run)
    if runs:
        runs[0].parameters[f"nuggetize: {Path(path).name}"] = document.get("settings", {})
    return Found("nuggetize", runs, scalars=panel_scalars(document))


def read_agreement(document: dict[str, Any], path: str) -> Found:
    scalars = {k: float(v) for k, v in document.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return Found("judge_agreement", scalars=scalars)
