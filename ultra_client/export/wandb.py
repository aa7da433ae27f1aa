"""``ultra export wandb RUN...``: each run folder as one Weights & Biases run, logged with W&B's own client.

- config: the run's ``parameters.yaml`` as a nested mapping (``server.setting``; ``${VAR}`` stays as written,
  never expanded), plus ``ultra``: pipeline, run folder, start, duration and git commit;
- summary: every scalar result (``ultra sweep --metric``'s names, ``ndcg@10`` kept) and ``failed_fraction``;
- artifact: the whole run folder (``memory.json``, result files, ``report.html`` if any), type ``ultra-run``;
- name: the folder's name; group and the tag ``pipeline:<name>``: the pipeline; tag ``git:<commit>``.

``offline`` writes ``<dir>/wandb/offline-run-*`` and never touches the network (``wandb sync`` uploads it later);
``online`` needs ``wandb login``. W&B's own system metrics, console capture, git probe and code saving are off: the
exporting process is not the run. W&B is an optional extra (``pip install 'ultra-eval[wandb]'``), imported here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ultra_client.errors import UltraError
from ultra_client.export.folders import FinishedRun, finished_runs, git_commit

MODES = ("offline", "online")
INSTALL_HINT = "ultra export wandb needs Weights & Biases' client: pip install 'ultra-eval[wandb]' (or wandb)"
ARTIFACT_NAME = re.compile(r"[^A-Za-z0-9_.-]")
# W&B settings of a run logged after the fact; a setting this wandb does not know is left out.
QUIET = {
    "console": "off",
    "save_code": False,
    "disable_code": True,
    "disable_git": True,
    "disable_job_creation": True,
    "x_disable_stats": True,
    "x_disable_meta": True,
    "x_disable_machine_info": True,
    "x_save_requirements": False,
    "silent": True,
}


def default_mode() -> str:
    """``$WANDB_MODE`` when it names one of ``MODES``, else ``offline``: nothing is uploaded unless asked for."""
    mode = os.environ.get("WANDB_MODE", "")
    return mode if mode in MODES else "offline"


def export_runs(folders: list[str], project: str, directory: str | None, mode: str) -> list[tuple[str, str, str]]:
    """Log each run folder as a W&B run of ``project``; ``[(folder, run id, local run directory)]``."""
    if mode == "offline":
        # also for W&B's service process: no login, no network (nor W&B's own error reports)
        os.environ |= {"WANDB_MODE": "offline", "WANDB_ERROR_REPORTING": "false"}
    try:
        import wandb
    except ImportError:
        raise UltraError(INSTALL_HINT) from None
    runs = finished_runs(folders)
    known = wandb.Settings.model_fields
    settings = wandb.Settings(mode=mode, **{key: value for key, value in QUIET.items() if key in known})
    if directory:
        try:
            Path(directory).mkdir(parents=True, exist_ok=True)
            (Path(directory) / "wandb").mkdir(exist_ok=True)  # where W&B writes (/proc exists, /proc/wandb cannot)
        except FileExistsError as exc:
            which = "" if Path(exc.filename) == Path(directory) else f" {exc.filename}"
            raise UltraError(f"--dir {directory}:{which} is a file; W&B needs a folder for its wandb/ folder") from None
        except OSError as exc:  # a read-only parent ...
            raise UltraError(f"--dir {directory}: cannot be W&B's folder: {exc.strerror or exc}") from None
    commit = git_commit(Path.cwd())
    logged = []
    for run in runs:
        try:
            logged.append(_log(wandb, run, project, directory, settings, commit))
        except wandb.errors.Error as exc:  # no API key for online, a refused name, ...
            hint = (
                " (run `wandb login`, or export with --mode offline and `wandb sync` later)" if mode == "online" else ""
            )
            raise UltraError(f"{run.folder}: W&B refused the run: {exc}{hint}") from None
        except OSError as exc:  # a folder W&B cannot write
            raise UltraError(
                f"{run.folder}: W&B could not write the run: {exc.strerror or exc}: {exc.filename}"
            ) from None
    return logged


def _log(
    wandb: Any, run: FinishedRun, project: str, directory: str | None, settings: Any, commit: str | None
) -> tuple[str, str, str]:
    about = {"pipeline": run.pipeline, "run_folder": str(run.folder.resolve()), "started": run.started.isoformat()}
    about |= {"duration_seconds": run.duration, "git_commit": commit}
    tags = [f"pipeline:{run.pipeline}"[:64]] + ([f"git:{commit}"] if commit else [])
    config = {**run.parameters, "ultra": about}
    logged = wandb.init(
        project=project,
        dir=directory,
        name=run.folder.name,
        group=run.pipeline,
        job_type="evaluation",
        tags=tags,
        config=config,
        settings=settings,
    )
    with logged:  # finishes the run, also on an error
        logged.summary.update(run.metrics)
        artifact = wandb.Artifact(ARTIFACT_NAME.sub("_", run.folder.name), type="ultra-run")
        artifact.add_dir(str(run.folder))
        logged.log_artifact(artifact)
    return str(run.folder), logged.id, logged.settings.sync_dir
