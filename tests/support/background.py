"""Long ``ultra`` runs (the local SmolLM2 ones) started before the first test, one at a time in a worker
thread, so that they use the machine's second core while the rest of the suite runs on the first; also the
in-process SmolLM2 work of a few tests, as ``python -m tests.support.local_probes`` (see there). The worker is
done with those within the suite's first third, so single runs of later tests that take seconds and need nothing
of the test's own (no stub server, no signal) are marked too: an idle core runs them ahead of their tests.

A test marked ``@in_background(prepare)`` (the ``background_run`` marker) takes the ``background_run``
fixture: the ``Finished`` run (its ``CompletedProcess`` and its folder). ``prepare(folder)`` writes the run's
files under ``folder`` and returns its ``Command``. A test that reaches its run before the worker has started it
runs it itself, at once, so no test waits longer than it would have in a serial suite. The command and every
assertion stay the test's: only the moment the run starts changes. Runs of tests that are deselected or
marked to skip never start.

``@in_background(prepare, spare=True)`` marks a run of seconds that the worker takes only once it is through the
others (in the tests' order, skipping those their tests have already run): such runs never hold up the long
ones, and use the second core while it would otherwise idle.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT

MARKER = "background_run"


@dataclass(frozen=True)
class Command:
    """``python ultra.py ARGS`` in the repository (``python -m MODULE ARGS`` when ``module`` is given; in ``cwd`` when
    given), with ``env`` added to the tests' environment and ``unset`` taken out of it."""

    args: tuple[str, ...]
    timeout: float
    env: dict[str, str] = field(default_factory=dict)
    module: str = ""
    unset: tuple[str, ...] = ()  # variables left out of its environment (a new user's shell: no OPENAI_API_KEY)
    cwd: Path | None = None  # where it runs: the repository unless given (a run folder of prepare's, say)

    def argv(self) -> list[str]:
        start = ["-m", self.module] if self.module else [str(ROOT / "ultra.py")]
        return [sys.executable, *start, *self.args]


@dataclass(frozen=True)
class Finished:
    done: subprocess.CompletedProcess
    folder: Path


Prepare = Callable[[Path], Command]


def in_background(prepare: Prepare, *, spare: bool = False) -> pytest.MarkDecorator:
    """The mark of a test whose run ``prepare`` gives (``pytest.mark.background_run(f)`` would mark ``f`` itself);
    ``spare``: the worker takes it after every run not marked so."""
    return getattr(pytest.mark, MARKER).with_args(prepare, spare=spare)


def spare_ultra(
    arguments: Callable[[Path], Iterable[str]],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> pytest.MarkDecorator:
    """The mark of a test whose one ``ultra ARGUMENTS(folder)`` (as ``run_ultra`` runs it) is a spare background run,
    in ``cwd`` (the run's folder when None); ``arguments`` may write the files the command reads under ``folder``."""
    return in_background(
        lambda folder: Command(tuple(arguments(folder)), timeout=timeout, env=env or {}, cwd=cwd or folder), spare=True
    )


class Job:
    """One run: pending until the worker or its test claims it, then running, then finished."""

    def __init__(self, prepare: Prepare, folder: Path, environ: dict[str, str]) -> None:
        self.prepare, self.folder, self.environ = prepare, folder, environ
        self._claimed = self._stopped = False
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self.process: subprocess.Popen | None = None
        self.result: Finished | None = None
        self.error: BaseException | None = None

    def claim(self) -> bool:
        with self._lock:
            claimed, self._claimed = self._claimed, True
        return not claimed

    def run(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            command = self.prepare(self.folder)
            # what the autouse fixtures of tests/conftest.py give a test, with this run's folder as its temp root
            roots = os.pathsep.join([str(self.folder), str(ROOT)])
            env = {**self.environ, "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1", "ULTRA_READ_ROOTS": roots}
            env.update({"PYTHONPATH": str(ROOT), **command.env})
            for name in command.unset:
                env.pop(name, None)
            with self._lock:  # never started once the session has stopped
                if self._stopped:
                    raise RuntimeError("the session ended before this run started")
                self.process = subprocess.Popen(
                    command.argv(),
                    cwd=command.cwd or ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                )  # fmt: skip
            try:
                stdout, stderr = self.process.communicate(timeout=command.timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.communicate()
                raise
            done = subprocess.CompletedProcess(self.process.args, self.process.returncode, stdout, stderr)
            self.result = Finished(done, self.folder)
        except BaseException as exc:  # noqa: BLE001 - handed to the test that waits for this run
            self.error = exc
        finally:
            self._finished.set()

    def wait(self) -> Finished:
        while not self._finished.wait(0.5):  # in short waits, so that Ctrl-C reaches the suite at once
            pass
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result

    def stop(self) -> None:
        """Kill this job's process if it still runs, and start none after (the session ended first)."""
        with self._lock:
            self._stopped = True
            if self.process is not None and self.process.poll() is None:
                self.process.kill()


def _will_skip(item: pytest.Item) -> bool:
    """Whether ``item`` carries a skip, or a skipif whose condition is true (or not a plain value)."""
    if item.get_closest_marker("skip") is not None:
        return True
    for mark in item.iter_markers("skipif"):
        conditions = mark.args or (mark.kwargs.get("condition", True),)
        if any(isinstance(c, str) or c for c in conditions):
            return True
    return False


class Background:
    """The session's background runs, keyed by test node id."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        # the environment before any test ran: never what a test running meanwhile has monkeypatched
        self._environ = dict(os.environ)

    def start(self, items: Iterable[pytest.Item], folder: Path) -> None:
        """Queue the marked runs of ``items`` (in their order, the spare ones after the rest), each in a folder
        under ``folder``, and start the worker."""
        self._environ = dict(os.environ)
        spare: dict[str, Job] = {}
        for item in items:
            mark = item.get_closest_marker(MARKER)
            if mark is not None and not _will_skip(item):
                name = re.sub(r"\W+", "_", f"run{len(self._jobs) + len(spare)}_{item.name}").strip("_")
                job_folder = folder / name[:100]  # a parameter's long text: within a file name's 255 bytes
                queue = spare if mark.kwargs.get("spare") else self._jobs
                queue[item.nodeid] = Job(mark.args[0], job_folder, self._environ)
        self._jobs.update(spare)
        if self._jobs:
            self._thread = threading.Thread(target=self._work, name="background-runs", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        for job in list(self._jobs.values()):
            if self._stopping.is_set():
                return
            if job.claim():
                job.run()

    def result(self, item: pytest.Item, tmp_path: Path) -> Finished:
        """The run of ``item``: waited for, or run now when nothing has started it (then under ``tmp_path``)."""
        job = self._jobs.get(item.nodeid)
        if job is None:
            mark = item.get_closest_marker(MARKER)
            assert mark is not None, f"{item.nodeid} takes background_run without its marker"
            job = Job(mark.args[0], tmp_path, self._environ)
        if job.claim():
            job.run()
        return job.wait()

    def stop(self) -> None:
        """End the session's runs: kill what still runs and wait for the worker (pytest keeps the folders)."""
        self._stopping.set()
        for job in self._jobs.values():
            job.stop()
        if self._thread is not None:
            self._thread.join(timeout=30)


BACKGROUND = Background()
