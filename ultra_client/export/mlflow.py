"""``ultra export mlflow RUN...``: each run folder as one MLflow run, logged with MLflow's own client.

- params: the run's ``parameters.yaml`` flattened to ``server.setting[.key]`` (values as YAML text; ``${VAR}``
  stays as written, never expanded);
- metrics: every scalar result (``ultra sweep --metric``'s names) and ``failed_fraction``; a name MLflow
  refuses (``ndcg@10``) is logged as ``ndcg_at_10``, and the tag ``ultra.metric_names`` maps them back;
- artifacts: the whole run folder (``memory.json``, result files, ``report.html`` if any);
- tags: ``ultra.pipeline``, ``ultra.run_folder`` and the git commit of the working directory
  (``mlflow.source.git.commit``) when it is a git checkout.

A tracker that cannot be reached, or that refuses a run, is an error naming the run folder and MLflow's reason;
MLflow's HTTP retries are bounded (``MLFLOW_HTTP_REQUEST_MAX_RETRIES``, 2 unless set), so an unreachable
``--tracking-uri`` fails in seconds, not minutes. MLflow is an optional extra (``pip install
'ultra-eval[mlflow]'``), imported only here.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from ultra_client.errors import UltraError
from ultra_client.export.folders import finished_runs, git_commit

MLFLOW_NAME = re.compile(r"[^A-Za-z0-9_\-. :]")  # "/" too: MLflow refuses a name that reads as a path (../x)
HTTP_RETRIES = "2"  # MLflow's own default retries an unreachable server for minutes
MAX_PARAM_CHARS = 6000  # MLflow's limit on a parameter's value
BATCH = 100  # params per log_batch call (MLflow's limit; metrics allow 1000)
INSTALL_HINT = "ultra export mlflow needs MLflow: pip install 'ultra-eval[mlflow]' (or mlflow-skinny)"


def metric_name(name: str) -> str:
    """A result's name as MLflow accepts it: ``@`` becomes ``_at_``, other refused characters (``/`` included)
    ``_``, and a name starting with ``.`` (``..`` reads as a parent folder) or empty gets a leading ``_``."""
    name = MLFLOW_NAME.sub("_", name.replace("@", "_at_"))
    return "_" + name if not name or name.startswith(".") else name


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


def client_for(tracking_uri: str | None) -> Any:
    """MLflow's client; a ``file:`` store (MLflow keeps it in maintenance mode) is allowed when named."""
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise UltraError(INSTALL_HINT) from None
    if tracking_uri and tracking_uri.startswith("file:"):
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", HTTP_RETRIES)
    return MlflowClient(tracking_uri=tracking_uri)


def export_runs(folders: list[str], tracking_uri: str | None, experiment: str) -> list[tuple[str, str]]:
    """Log each run folder as an MLflow run of ``experiment`` (created if missing); ``[(folder, run id)]``."""
    if tracking_uri is not None and not tracking_uri.strip():
        raise UltraError("--tracking-uri is empty: give a URI (file:/path, sqlite:///mlflow.db, http://host:port)")
    runs = finished_runs(folders)
    where = tracking_uri or "MLflow's default tracking URI"
    try:
        from mlflow.exceptions import MlflowException
    except ImportError:
        raise UltraError(INSTALL_HINT) from None
    try:
        client = client_for(tracking_uri)
    except (MlflowException, ValueError) as exc:  # an unknown scheme, a file store by default, "Invalid IPv6 URL"
        hint = "" if tracking_uri else " (name a store with --tracking-uri, e.g. file:./mlruns or sqlite:///mlflow.db)"
        raise UltraError(f"MLflow at {where}: {_reason(exc)}{hint}; nothing was exported") from None
    try:
        found = client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    except (MlflowException, OSError, ValueError) as exc:
        raise UltraError(f"MLflow at {where}: {_reason(exc)}; nothing was exported") from None
    commit = git_commit(Path.cwd())
    logged = []
    for run in runs:
        try:
            logged.append((str(run.folder), _log(client, run, experiment_id, commit)))
        except (MlflowException, OSError) as exc:
            raise UltraError(f"{run.folder}: MLflow at {where} refused the run: {_reason(exc)}") from None
    return logged


def _reason(exc: Exception) -> str:
    """MLflow's message, first line only (its HTTP errors repeat the whole request)."""
    text = str(getattr(exc, "message", None) or exc).strip().splitlines()
    return text[0][:500] if text else type(exc).__name__


def _log(client: Any, run: Any, experiment_id: str, commit: str | None) -> str:
    """Log one finished run; its MLflow run id."""
    from mlflow.entities import Metric, Param, RunStatus

    started = int(run.started.timestamp() * 1000)
    names = {metric_name(key): key for key in run.metrics}
    tags = {"ultra.pipeline": run.pipeline, "ultra.run_folder": str(run.folder.resolve())}
    tags["ultra.metric_names"] = json.dumps({k: v for k, v in names.items() if k != v})[:MAX_PARAM_CHARS]
    if commit:
        tags.update({"mlflow.source.git.commit": commit, "ultra.git_commit": commit})
    created = client.create_run(experiment_id, start_time=started, tags=tags, run_name=run.folder.name)
    run_id = created.info.run_id
    params = [Param(metric_name(k), v) for k, v in flat_params(run.parameters).items()]
    metrics = [Metric(metric_name(k), v, started, 0) for k, v in run.metrics.items()]
    for start in range(0, max(len(params), len(metrics)), BATCH):
        client.log_batch(run_id, metrics=metrics[start : start + BATCH], params=params[start : start + BATCH])
    client.log_artifacts(run_id, str(run.folder))
    ended = started + int((run.duration or 0) * 1000)
    client.set_terminated(run_id, RunStatus.to_string(RunStatus.FINISHED), end_time=ended)
    return run_id
