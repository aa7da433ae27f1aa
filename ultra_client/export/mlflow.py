"""``ultra export mlflow RUN...``: each run folder as one MLflow run, logged with MLflow's own client.

- params: the run's ``parameters.yaml`` flattened to ``server.setting[.key]`` (values as YAML text; ``${VAR}``
  stays as written, never expanded);
- metrics: every scalar result (``ultra sweep --metric``'s names) and ``failed_fraction``; a name MLflow
  refuses (``ndcg@10``) is logged as ``ndcg_at_10``, and the tag ``ultra.metric_names`` maps them back;
- artifacts: the whole run folder (``memory.json``, result files, ``report.html`` if any);
- tags: ``ultra.pipeline``, ``ultra.run_folder`` and the git commit of the working directory
  (``mlflow.source.git.commit``) when it is a git checkout.

MLflow is an optional extra (``pip install 'ultra-eval[mlflow]'``), imported only here.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from ultra_client.errors import UltraError

MLFLOW_NAME = re.compile(r"[^A-Za-z0-9_\-. :/]")
MAX_PARAM_CHARS = 6000  # MLflow's limit on a parameter's value
BATCH = 100  # params per log_batch call (MLflow's limit; metrics allow 1000)
INSTALL_HINT = "ultra export mlflow needs MLflow: pip install 'ultra-eval[mlflow]' (or mlflow-skinny)"


def metric_name(name: str) -> str:
    """A result's name as MLflow accepts it: ``@`` becomes ``_at_``, other refused characters ``_``."""
    return MLFLOW_NAME.sub("_", name.replace("@", "_at_"))


def flat_params(settings: Any, prefix: str = "") -> dict[str, str]:
    """``{server.setting[.key]: value as YAML text}`` of a parameter file's mapping (lists stay whole)."""
    params: dict[str, str] = {}
    if isinstance(settings, dict) and settings:
        for key, value in settings.items():
            params.update(flat_params(value, f"{prefix}{key}."))
        return params
    text = settings if isinstance(settings, str) else yaml.safe_dump(settings, default_flow_style=True).strip()
    text = text.removesuffix("\n...").strip() if not isinstance(settings, str) else text
    return {prefix.rstrip("."): text[:MAX_PARAM_CHARS]}


def git_commit(where: Path) -> str | None:
    """The commit checked out at ``where``, if it is in a git checkout."""
    try:
        done = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) else None


def client_for(tracking_uri: str | None) -> Any:
    """MLflow's client; a ``file:`` store (MLflow keeps it in maintenance mode) is allowed when named."""
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise UltraError(INSTALL_HINT) from None
    if tracking_uri and tracking_uri.startswith("file:"):
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return MlflowClient(tracking_uri=tracking_uri)


def export_runs(folders: list[str], tracking_uri: str | None, experiment: str) -> list[tuple[str, str]]:
    """Log each run folder as an MLflow run of ``experiment`` (created if missing); ``[(folder, run id)]``."""
    from ultra_client.gates.verdict import read_run
    from ultra_client.runs.index import describe_folder

    runs = []
    for name in folders:
        folder = Path(name)
        row = describe_folder(folder.resolve()) if folder.is_dir() else None
        if row is None or row["status"] != "ok":
            raise UltraError(f"{folder}: not a finished run folder of ultra run (<pipeline>_<date>_<time>/memory.json)")
        runs.append((folder, row, read_run(folder)))
    client = client_for(tracking_uri)
    from mlflow.entities import Metric, Param, RunStatus

    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    commit = git_commit(Path.cwd())
    logged = []
    for folder, row, results in runs:
        started = int(datetime.fromisoformat(row["started"]).timestamp() * 1000)
        values = {**results.scalars, "failed_fraction": results.value("failed_fraction")}
        names = {metric_name(key): key for key in values}
        tags = {"ultra.pipeline": row["pipeline"], "ultra.run_folder": str(folder.resolve())}
        tags["ultra.metric_names"] = json.dumps({k: v for k, v in names.items() if k != v})[:MAX_PARAM_CHARS]
        if commit:
            tags.update({"mlflow.source.git.commit": commit, "ultra.git_commit": commit})
        run = client.create_run(experiment_id, start_time=started, tags=tags, run_name=folder.name)
        run_id = run.info.run_id
        params = [Param(k, v) for k, v in flat_params(_parameters(folder)).items()]
        metrics = [Metric(metric_name(k), float(v), started, 0) for k, v in values.items() if math.isfinite(v)]
        for start in range(0, max(len(params), len(metrics)), BATCH):
            client.log_batch(run_id, metrics=metrics[start : start + BATCH], params=params[start : start + BATCH])
        client.log_artifacts(run_id, str(folder))
        ended = started + int((row["duration"] or 0) * 1000)
        client.set_terminated(run_id, RunStatus.to_string(RunStatus.FINISHED), end_time=ended)
        logged.append((str(folder), run_id))
    return logged


def _parameters(folder: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load((folder / "parameters.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}
