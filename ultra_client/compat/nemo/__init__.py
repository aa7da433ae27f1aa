"""NeMo Evaluator's RAG jobs (JSON) compiled into an ordinary pipeline and parameter file.

``ultra build job.json`` and ``ultra run job.json`` recognise a job by its ``"type"`` and ``tasks``,
write ``<job folder>/compiled/<stem>.yaml`` (the pipeline), ``compiled/parameters/<stem>_parameter.yaml``
and ``compiled/<stem>_data/`` (a task's TREC qrels, a SQuAD task's corpus), then build and run that
pipeline as any other. ``--param FILE`` with a job lays FILE's settings over the compiled ones (a
mapping setting key by key). The run folder keeps the pipeline (``pipeline.yaml``) and gets
``results.json`` in NeMo's layout. Differences from NeMo's service: docs/compat-nemo.md.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ultra_base.errors import add_read_root
from ultra_client.compat.nemo.compile import Compiled, compile_task
from ultra_client.compat.nemo.datasets import TaskData, prepare
from ultra_client.compat.nemo.job import Job, read_job
from ultra_client.compat.nemo.results import write_results
from ultra_client.errors import UltraError

HEADER = (
    "# Compiled by ultra from the NeMo Evaluator job {job} (task {task}); rebuilt from the job on every\n"
    "# `ultra build` / `ultra run` of it: edit the job, or lay settings over it with --param. docs/compat-nemo.md\n"
)


@dataclass
class NemoRun:
    """A compiled job: where its pipeline and parameter file are, and what the run needs from it."""

    job: Job
    pipeline: Path
    parameters: Path
    compiled: Compiled

    def export_secrets(self) -> None:
        """Put the job's literal keys into this process's environment under the names the parameter file references."""
        from ultra_base import redact

        for name, value in self.compiled.secrets.items():
            os.environ[name] = value
            redact.remember(value)

    def finish(self, folder: Path) -> Path:
        """Keep the pipeline in the run folder and write ``results.json`` (NeMo's layout) there."""
        shutil.copyfile(self.pipeline, folder / "pipeline.yaml")
        path = write_results(folder, self.compiled.scores, self.job.tasks[0].name)
        print(f"[ultra] NeMo results: {path}", file=sys.stderr)
        return path


def is_nemo_job(path: Path) -> Any:
    """The parsed job if ``path`` is a NeMo job (a .json object with ``type`` and ``tasks``), else None. Read within
    the limits of the files people write (``ultra_kit.limits.json_files``: 1 MiB, 100 levels deep)."""
    from ultra_base.errors import InputError
    from ultra_kit.limits.json_files import load_json_file

    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    try:
        data = load_json_file(path, kind="NeMo job")
    except InputError as exc:
        raise UltraError(f"{exc} (not readable as a NeMo job)") from None
    return data if isinstance(data, dict) and "type" in data and "tasks" in data else None


def compile_if_job(path: str | Path, overlay: str | Path | None = None) -> NemoRun | None:
    """Compile the NeMo job at ``path`` (None for a pipeline file), with ``overlay``'s settings laid over."""
    file = Path(path)
    data = is_nemo_job(file)
    if data is None:
        return None
    job = read_job(file, data)
    task = job.tasks[0]
    folder = file.resolve().parent / "compiled"
    data = prepare(task, file, folder / f"{file.stem}_data")
    compiled = compile_task(job, task, data, file.stem)
    if overlay is not None:
        lay_over(compiled, Path(overlay))
    try:
        pipeline, parameters = write_compiled(file, folder, task.name, data, compiled)
    except OSError as exc:
        raise UltraError(f"{file}: cannot write the compiled pipeline into {folder}: {exc.strerror or exc}") from None
    add_read_root(folder)  # the tools read the derived files, wherever the job file (named by the user) lies
    print(f"[ultra] NeMo job {file} compiled into {pipeline}", file=sys.stderr)
    return NemoRun(job, pipeline, parameters, compiled)


def write_compiled(file: Path, folder: Path, task: str, data: TaskData, compiled: Compiled) -> tuple[Path, Path]:
    """Write the derived data files, the pipeline and its parameter file (an earlier compilation's replaced)."""
    from ultra_client.pipeline.params import write_parameter_file
    from ultra_kit.files import atomic_write_text

    data.write_files()  # nothing is written before the job and the overlay are found right
    pipeline = folder / f"{file.stem}.yaml"
    body = yaml.safe_dump({"servers": compiled.servers, "pipeline": compiled.steps}, sort_keys=False)
    atomic_write_text(pipeline, HEADER.format(job=file, task=task) + body)
    parameters = folder / "parameters" / f"{file.stem}_parameter.yaml"
    parameters.unlink(missing_ok=True)  # the job is the source: nothing of an earlier compilation is kept
    write_parameter_file(parameters, pipeline.name, compiled.settings)
    return pipeline, parameters


def lay_over(compiled: Compiled, overlay: Path) -> None:
    """``overlay``'s settings over the compiled ones; a mapping setting is merged key by key. A section
    for a server the pipeline does not use is skipped with a note (one overlay serves several jobs)."""
    from ultra_base.errors import InputError
    from ultra_base.file_limits import require_regular_file
    from ultra_client.errors import as_ultra_error
    from ultra_client.pipeline.params import read_parameter_file
    from ultra_kit.settings import defaults, merge_mapping

    with as_ultra_error():
        require_regular_file(overlay, "parameter")
    known = {}
    for alias in read_parameter_file(overlay):
        try:
            known[alias] = defaults(alias)
        except InputError as exc:
            raise UltraError(f"{overlay}: section '{alias}': {exc}") from None
    for alias, values in read_parameter_file(overlay, settings=known).items():
        if alias not in compiled.servers:
            note = f"[ultra] note: {overlay}: the job's pipeline uses no {alias} server; section skipped"
            print(note, file=sys.stderr)
            continue
        current = compiled.settings.setdefault(alias, {})
        for name, value in values.items():
            base = current.get(name, known[alias].get(name))
            current[name] = merge_mapping(base, value) if isinstance(base, dict) and isinstance(value, dict) else value
