"""Run a sweep's trials on one set of started servers, each into its own folder, and remember them.

A trial's folder is ``DIR/trials/<fingerprint>/``: ``parameters.yaml`` (the edited parameter file,
``${VAR}`` unexpanded), then ``memory.json``, ``files/`` and ``timings.json`` as ``ultra run``
writes them, and last ``trial.json`` (status, values, scalar results, per-query scores, error). A
folder without ``trial.json`` is a trial that was killed: it runs again. The fingerprint hashes the
pipeline file, the trial's parameter settings and the content of every data file they name.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import shutil
import socket
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from ultra_base.environment import OUTPUT_ROOT
from ultra_base.errors import InputError
from ultra_client.calls.server_info import ServerLocation
from ultra_client.calls.server_pool import ServerPool
from ultra_client.errors import UltraError, write_output
from ultra_client.pipeline.model import Pipeline
from ultra_client.pipeline.params import HEADER
from ultra_client.pipeline.runner import Runner, link_written_files, relative_memory
from ultra_client.pipeline.setting_checks import settings_to_send
from ultra_client.runs.records import UnreadableRecord, optional_json_record, read_json_record
from ultra_kit.files import atomic_write_json, atomic_write_text

RECORD = "trial.json"
FINGERPRINT_CHARS = 16  # of the SHA-256, in folder names
MAX_RESULT_KEYS = 200  # numbers in one mapping variable beyond which it is data, not results
SKIPPED_SETTINGS = ("save_path",)  # outputs, not inputs: never part of a fingerprint
_hashes: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256 of the content


def file_digest(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _hashes:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _hashes[key] = digest.hexdigest()
    return _hashes[key]


def data_files(settings: Any, skip: list[Path], name: str = "") -> dict[str, str]:
    """{path: sha256} of every existing file a setting names (not outputs, caches or files under ``skip``)."""
    found: dict[str, str] = {}
    if isinstance(settings, dict):
        for key, value in settings.items():
            if str(key) not in SKIPPED_SETTINGS and "cache" not in str(key):
                found.update(data_files(value, skip, str(key)))
    elif isinstance(settings, list):
        for item in settings:
            found.update(data_files(item, skip, name))
    elif isinstance(settings, str) and settings and len(settings) < 4096 and "\n" not in settings:
        path = Path(settings).expanduser()
        try:
            if path.is_file() and not any(path.resolve().is_relative_to(folder) for folder in skip):
                found[settings] = file_digest(path)
        except (OSError, ValueError):
            pass
    return found


def fingerprint(pipeline_text: str, settings: dict[str, Any], skip: list[Path]) -> str:
    """SHA-256 of the pipeline, the trial's settings (unexpanded) and the data files they name."""
    payload = {"pipeline": pipeline_text, "settings": settings, "data": data_files(settings, skip)}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def flatten(memory: dict[str, Any]) -> dict[str, float]:
    """The scalar results: numeric variables, and the numeric keys of mapping variables (``variable.key``).

    Deeper values and lists are data, not results; so is a mapping with more than
    ``MAX_RESULT_KEYS`` numbers (per-query or per-document values, qrels). NaN and infinities are
    included: ``split_non_finite`` takes them out.
    """
    flat: dict[str, float] = {}
    for name, value in memory.items():
        if _number(value):
            flat[str(name)] = value
        elif isinstance(value, dict):
            numbers = {f"{name}.{key}": item for key, item in value.items() if _number(item)}
            if len(numbers) <= MAX_RESULT_KEYS:
                flat.update(numbers)
    return flat


def split_non_finite(results: dict[str, float]) -> tuple[dict[str, float], dict[str, str]]:
    """(the finite results, ``{key: "nan" | "inf" | "-inf"}`` for the others): JSON has no NaN."""
    finite = {key: value for key, value in results.items() if math.isfinite(value)}
    return finite, {key: str(float(value)) for key, value in results.items() if key not in finite}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def per_query_scores(pipeline: Pipeline, tools: dict, memory: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per-query (per-item) scores behind each scalar result that has them, keyed ``variable.key``.

    ``avg_<m>`` next to a list ``<m>`` (``evaluate``) gives items by position; a result file with
    ``per_query: {qid: {measure: value}}`` (``evaluate_trec``) gives the step's mapping outputs by qid.
    """
    scores: dict[str, dict[str, float]] = {}
    for name, value in memory.items():
        if not isinstance(value, dict):
            continue
        for key, items in value.items():
            mean = value.get(f"avg_{key}")
            if isinstance(mean, (int, float)) and isinstance(items, list) and _numbers(items):
                scores[f"{name}.avg_{key}"] = {str(i): float(v) for i, v in enumerate(items)}
    for step in pipeline.tool_steps():
        info = tools.get(step.server, {}).get(step.tool)
        if info is None or "result_path" not in info.outputs:
            continue
        rows = _result_file_rows(memory.get(step.outputs.get("result_path", "result_path")))
        if not rows:
            continue
        for output in info.outputs:
            variable = step.outputs.get(output, output)
            if isinstance(memory.get(variable), dict):
                for key in memory[variable]:
                    column = {qid: row.get(key) for qid, row in rows.items()}
                    if _numbers(list(column.values())):
                        scores[f"{variable}.{key}"] = {qid: float(v) for qid, v in column.items()}
    return scores


def _numbers(values: list[Any]) -> bool:
    return bool(values) and all(_number(v) for v in values)


def _result_file_rows(path: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(path, str) or not path.endswith(".json"):
        return {}
    data = optional_json_record(Path(path), "result")  # missing, too large, too deep or malformed: no rows
    rows = data.get("per_query") if isinstance(data, dict) else None
    if not isinstance(rows, dict) or not all(isinstance(row, dict) for row in rows.values()):
        return {}
    return rows


class TrialStore:
    """The trial folders of one sweep folder: what finished, and a fresh folder for a new trial."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.trials = root / "trials"

    def folder(self, fp: str) -> Path:
        return self.trials / fp[:FINGERPRINT_CHARS]

    def finished(self, fp: str) -> dict[str, Any] | None:
        """The record of a trial that succeeded before (a failed one runs again, and so does one whose record is
        missing, or too large, too deep or malformed: said on stderr)."""
        path = self.folder(fp) / RECORD
        try:
            record = read_json_record(path, "trial record") if path.exists() else None
        except UnreadableRecord as exc:
            say(f"{exc}; the trial runs again")
            return None
        ok = isinstance(record, dict) and record.get("fingerprint") == fp and record.get("status") == "ok"
        return record if ok else None

    def fresh(self, fp: str) -> Path:
        folder = self.folder(fp)
        shutil.rmtree(folder, ignore_errors=True)  # what a killed or failed attempt left
        try:
            folder.mkdir(parents=True)
        except OSError as exc:
            raise UltraError(f"{folder}: cannot create the trial folder ({exc.strerror or exc})") from None
        return folder


class TrialRunner:
    """The started servers, restarted after a trial whose server crashed, stopped answering or timed out
    (not after a tool's refusal), or when a trial needs other ``${VAR}``s."""

    def __init__(
        self, pipeline: Pipeline, locations: list[ServerLocation], log_root: Path, timeout: float | None
    ) -> None:
        self.pipeline = pipeline
        self.locations = locations
        self.log_root = log_root
        self.timeout = timeout
        self.pool: ServerPool | None = None
        self.references: dict[str, set[str]] = {}
        self.starts = 0
        self.pipeline_text = pipeline.path.read_text(encoding="utf-8")
        # the running trial's parameters, as `ultra run` names its parameter file to the servers it starts: a
        # stdio server trusts the keys only a parameter file may set (ultra_kit.wrapping.pinned) from it, read
        # at each call, so one file per runner (this host and process) serves every trial in turn
        self.parameter_file = log_root / f"trial_parameters.{socket.gethostname()}.{os.getpid()}.yaml"

    async def start(self, references: dict[str, set[str]]) -> ServerPool:
        await self.close()
        self.references = {alias: set(names) for alias, names in references.items()}
        logs = self.log_root if self.starts == 0 else self.log_root / f"restart_{self.starts}"
        if self.starts:
            say(f"restarting the servers (restart {self.starts}; logs in {logs})")
        self.starts += 1
        pool = ServerPool(self.locations, logs, self.references, self.parameter_file)
        await pool.__aenter__()
        self.pool = pool
        return pool

    async def close(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            await pool.__aexit__(None, None, None)

    async def ensure(self, raw: dict[str, dict[str, Any]]) -> ServerPool:
        """The pool, (re)started when it is down or a server lacks a ``${VAR}`` these settings use."""
        from ultra_kit.settings import env_references

        needed = {alias: env_references(values) for alias, values in raw.items()}
        missing = any(not names <= self.references.get(alias, set()) for alias, names in needed.items())
        if self.pool is None or missing:
            union = {a: self.references.get(a, set()) | needed.get(a, set()) for a in {*self.references, *needed}}
            await self.start(union)
        assert self.pool is not None
        return self.pool

    async def run(self, folder: Path, raw: dict[str, dict[str, Any]], param_file: Path) -> dict[str, Any]:
        """One trial into ``folder``: its record (also written as ``trial.json``, last)."""
        started = time.time()
        clock = time.perf_counter()
        text = HEADER.format(pipeline=self.pipeline.path.name) + yaml.safe_dump(
            raw, sort_keys=False, allow_unicode=True, default_flow_style=False
        )
        write_output(folder / "parameters.yaml", lambda p: atomic_write_text(p, text))
        write_output(self.parameter_file, lambda p: (p.parent.mkdir(parents=True, exist_ok=True),
                                                     atomic_write_text(p, text)))  # fmt: skip
        record: dict[str, Any] = {"status": "ok", "error": None}
        runner = None
        try:
            pool = await self.ensure(raw)
            settings = settings_to_send(raw, param_file, self.pipeline, pool)  # as `ultra run` sends them
            runner = Runner(self.pipeline, pool, settings, default_timeout=self.timeout, echo=False)
            memory = await runner.run()
        except (UltraError, InputError) as exc:
            from ultra_base.redact import redact_text

            record.update(status="failed", error=redact_text(str(exc)))
            if not _tool_refused(exc):
                await self.close()  # a server may be dead or still busy: the next trial starts afresh
            memory = None
        if memory is not None:
            saved: dict[str, str] = {}  # as `ultra run`: the trial's files in files/, memory.json names them there
            linked = lambda p: link_written_files(memory, p.resolve(), started, runner.step_strings)  # noqa: E731
            write_output(folder / "files", lambda p: saved.update(linked(p)))
            write_output(folder / "memory.json", lambda p: atomic_write_json(p, relative_memory(memory, saved)))
            tools = {alias: server.tools for alias, server in pool.servers.items()}
            record["results"], non_finite = split_non_finite(flatten(memory))
            if non_finite:
                record["non_finite"] = non_finite
            record["per_query"] = per_query_scores(self.pipeline, tools, memory)
        steps = runner.timings if runner is not None else []
        timings = {"steps": steps, "total_seconds": round(time.time() - started, 3)}
        write_output(folder / "timings.json", lambda p: atomic_write_json(p, timings))
        record["tool_seconds"] = round(sum(seconds for _, seconds in steps), 4)
        record["wall_seconds"] = round(time.perf_counter() - clock, 4)
        return record


def _tool_refused(exc: Exception) -> bool:
    """True when the trial failed on a tool's answer (an error result, an output that is not a finite
    number) or on its settings: the servers answered, so they are not restarted."""
    from ultra_client.calls.local_server import ToolRefused

    return isinstance(exc, InputError) or isinstance(exc.__context__, ToolRefused)


def trial_settings(base: dict[str, dict[str, Any]], values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A private copy of the parameter settings with each swept ``server.setting[.key]`` set."""
    from ultra_client.sweep.spec import with_value

    raw = copy.deepcopy(base)
    for key, value in values.items():
        with_value(raw, key, copy.deepcopy(value))
    return raw


def skipped_folders(output_dir: Path) -> list[Path]:
    """Files under these never enter a fingerprint: the output root and the sweep's own folder."""
    return [(Path.cwd() / OUTPUT_ROOT).resolve(), output_dir.resolve()]


def record_trial(folder: Path, record: dict[str, Any]) -> None:
    write_output(folder / RECORD, lambda p: atomic_write_json(p, record))


def say(text: str) -> None:
    print(f"[ultra] {text}", file=sys.stderr, flush=True)
