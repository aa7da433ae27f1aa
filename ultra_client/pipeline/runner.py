"""Execute a checked pipeline against running servers, passing variables from step to step."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from ultra_client.calls.server_pool import ServerPool
from ultra_client.errors import UltraError, located
from ultra_client.pipeline.dataflow import tool_for
from ultra_client.pipeline.model import Pipeline, Step, ToolStep
from ultra_client.progress import ProgressBar
from ultra_client.summary.lines import strings_inside

Memory = dict[str, Any]


class Runner:
    """Runs steps in order; ``settings`` are the expanded parameter-file values per server alias."""

    def __init__(
        self,
        pipeline: Pipeline,
        pool: ServerPool,
        settings: dict[str, dict[str, Any]],
        default_timeout: float | None = None,
        echo: bool = True,
    ) -> None:
        self.pipeline = pipeline
        self.pool = pool
        self.settings = settings
        self.default_timeout = default_timeout
        self.echo = echo
        self.timings: list[tuple[str, float]] = []
        self.producers: dict[str, str] = {}  # variable -> the step that last wrote it, in the order written
        self.accounting: list[dict[str, Any]] = []  # per LLM step: tokens, failures, model (ultra_client.summary.costs)
        self.step_strings: list[tuple[str, list[str]]] = []  # (step name, the strings of its outputs) per call
        self.warned: set[str] = set()  # the warnings a step's outputs gave, each printed once

    @property
    def tools(self):
        return {alias: server.tools for alias, server in self.pool.servers.items()}

    async def run(self, memory: Memory | None = None) -> Memory:
        """Run the whole pipeline and return the final variables."""
        return await self.run_steps(self.pipeline.steps, dict(memory or {}))

    async def run_steps(self, steps: list[Step], memory: Memory) -> Memory:
        """Run steps in order (each kind runs itself, ``ultra_client.pipeline.steps``); the variables after them."""
        for step in steps:
            memory = await step.run(self, memory)
        return memory

    def arguments(self, step: ToolStep, memory: Memory) -> dict[str, Any]:
        """Settings from the parameter file plus the variables the tool reads, renamed as the step says."""
        info = tool_for(self.pipeline, step, self.tools)
        server_settings = self.settings.get(step.server, {})
        args = {name: server_settings[name] for name in info.settings if name in server_settings}
        for parameter in info.variables:
            variable = step.inputs.get(parameter, parameter)
            if variable in memory:
                args[parameter] = memory[variable]
            elif parameter in info.required:
                raise located(
                    self.pipeline.path,
                    step.line,
                    f"'{step.name}' needs variable '{variable}', but no earlier step returned it",
                )
        return args

    async def call(self, step: ToolStep, memory: Memory) -> Memory:
        """Call one tool; return its outputs under their pipeline names."""
        from ultra_client.calls.local_server import HungStep, ToolCrashed, ToolRefused

        args = self.arguments(step, memory)
        server = self.pool.servers[step.server]
        timeout = step.timeout or self.default_timeout
        bar = ProgressBar(step.name)
        if self.echo:
            print(f"[ultra] {step.name}", file=sys.stderr, flush=True)
        started = time.perf_counter()
        where = f"{self.pipeline.path}:{step.line}: step '{step.name}'"
        alive = asyncio.get_running_loop().create_task(bar.keep_alive()) if self.echo else None
        try:
            outputs = await server.call(step.tool, args, timeout=timeout, progress=bar)
        except ToolRefused as exc:
            raise located(self.pipeline.path, step.line, f"step '{step.name}' failed: {exc}") from None
        except ToolCrashed as exc:
            raise UltraError(f"{where}: " + self.pool.describe_failure(step.server, f"crashed {exc}")) from None
        except Exception as exc:  # noqa: BLE001 - a dead server or timeout, reported with its log
            if server.transport == "in-process" and isinstance(exc, TimeoutError):
                raise HungStep(
                    f"{where} timed out after {timeout:g} s; it ran in-process and cannot be stopped, so ultra "
                    f"exits now (raise its 'timeout', or give the server 'transport: stdio' in the pipeline)"
                ) from None
            raise UltraError(self._call_failure(step, exc, timeout)) from None
        finally:
            if alive is not None:
                alive.cancel()
            bar.close()
        self.timings.append((step.name, time.perf_counter() - started))
        from ultra_client.summary.costs import step_records  # prices stay unloaded for `ultra call`

        self.accounting += step_records(step.name, args, outputs)  # a jury: a row per member's model
        summary = failure_summary(step.name, outputs.get("failed"))
        if summary and self.echo:
            print(f"[ultra] {summary}", file=sys.stderr, flush=True)
        for warning in warnings_in(outputs):
            if warning not in self.warned and self.echo:  # once per run, however often a loop repeats the step
                self.warned.add(warning)
                print(f"[ultra] warning: {step.name}: {warning}", file=sys.stderr, flush=True)
        named = {step.outputs.get(name, name): value for name, value in outputs.items()}
        self.step_strings.append((step.name, list(strings_inside(named))))  # not the outputs: a loop's stay small
        for name in named:
            self.producers.pop(name, None)
            self.producers[name] = step.name
        return named

    def _call_failure(self, step: ToolStep, exc: Exception, timeout: float | None) -> str:
        text = str(exc) or type(exc).__name__
        where = f"{self.pipeline.path}:{step.line}: step '{step.name}'"
        if "timed out" in text.lower() or isinstance(exc, TimeoutError):
            return f"{where} timed out after {timeout:g} s; raise its 'timeout' in the pipeline or pass --timeout"
        return f"{where}: " + self.pool.describe_failure(step.server, f"stopped answering ({text})")


def warnings_in(outputs: Memory) -> list[str]:
    """The texts of a ``warnings`` list among a tool's outputs, or one mapping deep (``settings.warnings``)."""
    found = [outputs.get("warnings")] + [v.get("warnings") for v in outputs.values() if isinstance(v, dict)]
    return [text for texts in found if isinstance(texts, list) for text in texts if isinstance(text, str)]


def failure_summary(name: str, failed: Any) -> str | None:
    """``name: N of M failed (kind n, ...; first: text)`` for a result's ``failed`` field, if any item failed."""
    if not isinstance(failed, dict) or not isinstance(failed.get("count"), int) or failed["count"] <= 0:
        return None
    total = failed.get("total")
    line = f"{name}: {failed['count']} of {total if isinstance(total, int) else '?'} failed"
    reasons = failed.get("reasons")
    inside = ", ".join(f"{kind} {n}" for kind, n in reasons.items()) if isinstance(reasons, dict) else ""
    first = str(failed.get("first_error") or "").strip().splitlines()
    if first:  # its first line, at most 200 characters
        text = first[0] if len(first[0]) <= 200 else first[0][:199] + "…"
        inside = f"{inside}; first: {text}" if inside else f"first: {text}"
    return f"{line} ({inside})" if inside else line


def link_written_files(
    memory: Memory, folder: Path, started: float, step_strings: list[tuple[str, list[str]]]
) -> dict[str, str]:
    """Bring into ``folder`` (the run folder's ``files/``) every file written during this run that a
    variable names: the final variables' files in ``files/`` itself, and the files that only an earlier
    step's outputs named (a ``result_path`` a later step replaced) in ``files/<step name>/``.

    Each file is hard-linked (no extra disk; results are written once and replaced, never edited in
    place), or copied when that fails (another file system), so the run folder holds the files
    themselves and can be zipped or moved. A file already inside the run folder stays where it is.
    Returns ``{path as a variable names it: path relative to the run folder}``.
    """
    run_folder = folder.parent.resolve()
    folder = run_folder / folder.name
    saved: dict[str, str] = {}
    taken: dict[Path, str] = {}  # real source -> its path relative to the run folder
    sources = [(folder, list(strings_inside(memory)))]
    sources += [(folder / _folder_name(step), strings) for step, strings in step_strings]
    for into, strings in sources:
        for value in strings:
            if value in saved or len(value) > 4096 or "\n" in value:
                continue
            source = _written_file(value, started)
            if source is None:
                continue
            if source not in taken:
                taken[source] = _bring(source, into, run_folder)
            saved[value] = taken[source]
    return saved


def _written_file(value: str, started: float) -> Path | None:
    """The real path of the file ``value`` names, if it is one written during this run."""
    candidate = Path(value)
    try:
        if not candidate.is_file() or candidate.stat().st_mtime < started - 1:
            return None
        return candidate.resolve()
    except (OSError, ValueError):
        return None


def _bring(source: Path, into: Path, run_folder: Path) -> str:
    """Link (or copy) ``source`` into ``into`` under a free name; its path relative to the run folder."""
    if source.is_relative_to(run_folder):
        return source.relative_to(run_folder).as_posix()
    into.mkdir(parents=True, exist_ok=True)
    target = _free_name(into / source.name)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
    return target.relative_to(run_folder).as_posix()


def _folder_name(step: str) -> str:
    """A step's name as a folder name (``judge.umbrela_judge``)."""
    return re.sub(r"[^\w.-]", "_", step).strip(".") or "step"


def _free_name(path: Path) -> Path:
    """``path``, or ``stem_2<suffix>``, ``stem_3`` ... if taken (two results with one name)."""
    counter = 1
    candidate = path
    while candidate.exists() or candidate.is_symlink():
        counter += 1
        candidate = path.with_name(f"{path.stem}_{counter}{path.suffix}")
    return candidate


def relative_memory(value: Any, saved: dict[str, str]) -> Any:
    """``value`` with every string that names a file of ``saved`` replaced by its path in the run folder."""
    if isinstance(value, str):
        return saved.get(value, value)
    if isinstance(value, dict):
        return {key: relative_memory(item, saved) for key, item in value.items()}
    if isinstance(value, list):
        return [relative_memory(item, saved) for item in value]
    return value
