"""A shared study read back from its storage, on any machine: ``--status`` (progress and the best so far with
its interval) and the sweep's rows, from which ``finish`` builds the table, plots and tests as for one process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_client.sweep import DEFAULTS
from ultra_client.sweep.beats import marked
from ultra_client.sweep.spec import Range, Space, SweepSpec
from ultra_client.sweep.worker import ATTR, MARK, excused


def spec_of(identity: dict[str, Any], output_dir: str | None) -> SweepSpec:
    """The sweep a study holds, as a spec for the report (its folder: ``output_dir`` or the default)."""
    spaces = [
        Space(key, values if isinstance(values, list) else Range(**values), "the study")
        for key, values in identity["space"].items()
    ]
    pipeline = Path(identity["pipeline"])
    return SweepSpec(
        pipeline=pipeline,
        param=None,
        spaces=spaces,
        method=identity["method"],
        trials=identity["trials"] if identity["method"] != "grid" else None,
        seed=identity["seed"],
        metric=identity["metric"],
        minimize=identity["minimize"],
        output_dir=Path(output_dir or DEFAULTS["output_dir"].format(stem=pipeline.stem)),
    )


def unpruned(trials: list[Any]) -> list[Any]:
    """The trials that are rows: not pruned unrun, nor lost as they claimed a trial they would have pruned."""
    gone = excused(trials)
    return [t for t in trials if MARK not in t.user_attrs and t.number not in gone]


def rows_of(study: Any) -> list[dict[str, Any]]:
    """One row per finished trial, as the one-process sweep's rows; a lost trial says which trial retried it."""
    import optuna

    states = optuna.trial.TrialState
    trials = unpruned(study.get_trials(deepcopy=False))
    retried = {t.system_attrs["failed_trial"]: t.number for t in trials if "failed_trial" in t.system_attrs}
    rows = []
    for trial in trials:
        if not trial.state.is_finished():
            continue
        record = trial.user_attrs.get(ATTR)
        if record is None:  # failed by the heartbeat: its worker was lost mid-trial
            again = f"; retried as trial {retried[trial.number]}" if trial.number in retried else ""
            lost = "stopped beating (lost mid-trial)" if marked(trial) else "was lost as it claimed the trial"
            record = {"status": "failed", "error": f"its worker {lost}{again}"}
            record["values"] = {}
        row = {"trial": trial.number, "results": {}, "per_query": {}, "wall_seconds": 0.0, "tool_seconds": 0.0}
        row.update({key: value for key, value in record.items() if value is not None})
        row.setdefault("error", None)
        row["folder"] = f"{record.get('host')}:{record['folder']}" if record.get("folder") else None
        row.setdefault("fingerprint", None)
        if trial.state == states.FAIL and row["status"] == "ok":
            row["status"] = "failed"
        rows.append(row)
    return rows


def counts_of(study: Any) -> dict[str, int]:
    """Trials by state: done (ok), failed, running, waiting (queued retries); pruned-unrun ones left out."""
    import optuna

    states = optuna.trial.TrialState
    found = {"done": 0, "failed": 0, "running": 0, "waiting": 0}
    for trial in unpruned(study.get_trials(deepcopy=False)):
        if trial.state == states.COMPLETE:
            found["done"] += 1
        elif trial.state == states.FAIL:
            found["failed"] += 1
        elif trial.state == states.RUNNING:
            found["running"] += 1
        elif trial.state == states.WAITING:
            found["waiting"] += 1
    return found


def best_of(rows: list[dict[str, Any]], metric: str, minimize: bool) -> dict[str, Any] | None:
    scored = [r for r in rows if r["status"] == "ok" and isinstance(r["results"].get(metric), (int, float))]
    if not scored:
        return None
    return min(scored, key=lambda r: (r["results"][metric] if minimize else -r["results"][metric], r["trial"]))


def interval(scores: dict[str, float]) -> tuple[float, float] | None:
    """The percentile bootstrap interval of the mean of per-query scores (the evaluation server's settings)."""
    if len(scores) < 2:
        return None
    import numpy as np

    from ultra_kit.settings import defaults
    from ultra_trec.significance import bootstrap_interval

    settings = defaults("evaluation")
    values = np.array([[scores[q] for q in sorted(scores)]])
    rng = np.random.default_rng(settings["seed"])
    low, high = bootstrap_interval(values, settings["n_resamples"], rng, settings["alpha"])
    return float(low[0]), float(high[0])


def status_text(name: str, shown: str, study: Any, identity: dict[str, Any]) -> str:
    """Progress of the study and its best trial so far, with the interval of its metric."""
    from ultra_kit.settings import defaults

    counts = counts_of(study)
    total = identity["trials"]
    lines = [
        f"study '{name}' in {shown}: {identity['method']} search of {total} trials over {', '.join(identity['keys'])}",
        f"trials: {counts['done']} done, {counts['failed']} failed, {counts['running']} running, "
        f"{counts['waiting']} waiting to be retried",
    ]
    metric = identity["metric"]
    best = best_of(rows_of(study), metric, identity["minimize"])
    if best is None:
        lines.append(f"best so far: none yet ({metric})")
        return "\n".join(lines)
    values = ", ".join(f"{key}={value}" for key, value in best["values"].items())
    text = f"best so far: trial {best['trial']} ({values}): {metric} = {best['results'][metric]:.4g}"
    bounds = interval(best.get("per_query", {}).get(metric) or {})
    if bounds is not None:
        level = round(100 * (1 - defaults("evaluation")["alpha"]))
        count = len(best["per_query"][metric])
        text += f", {level}% interval {bounds[0]:.4g} to {bounds[1]:.4g} ({count} queries)"
    lines += [text, f"  results in {best['folder']}"]
    return "\n".join(lines)
