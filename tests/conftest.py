"""Shared fixtures: the anyio backend and a way to run the ``ultra`` command as a real subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _results_outside_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests save results under tmp_path: opt out of confining them to output/ (the tests of that
    confinement delete the variable again)."""
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")


@pytest.fixture(autouse=True)
def _reads_from_tmp_and_repo(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tools read only inside the read roots: let them read the tests' temporary files and the repository's
    data wherever a test works (the tests of that confinement set the variable themselves)."""
    monkeypatch.setenv("ULTRA_READ_ROOTS", os.pathsep.join([str(tmp_path_factory.getbasetemp()), str(ROOT)]))


def run_ultra(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120, unset: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """Run ``python ultra.py ARGS`` in ``cwd`` and capture its output (``unset``: variables left out of its
    environment, e.g. a key a new user has not set)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    for name in unset:
        full_env.pop(name, None)
    return subprocess.run(
        [sys.executable, str(ROOT / "ultra.py"), *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "background_run(prepare): the test's long run starts before the first test")
    _sigint_stops_the_suite()


def _sigint_stops_the_suite() -> None:
    """SIGINT stops the suite however it was started: a shell without job control starts a command put in the
    background (``cmd &``, ``nohup cmd &``) with SIGINT ignored, which every child would inherit, so that a
    test's ``ultra`` child (and the suite itself) ignored the SIGINT a test sends. Here SIGINT is delivered and
    raises KeyboardInterrupt, as in a terminal (the tests of an ignored SIGINT ignore it in their child)."""
    if hasattr(signal, "pthread_sigmask"):  # POSIX
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Name a failing test as it fails (``-q`` prints only ``F`` until the end; a stopped suite never gets there)."""
    if report.failed and _REPORTER:
        _REPORTER[0].write_line(f"\nFAILED {report.nodeid} ({report.when})", red=True)


_REPORTER: list = []  # pytest's terminal reporter, once the session starts


def pytest_sessionstart(session: pytest.Session) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        _REPORTER[:] = [reporter]


@pytest.fixture(scope="session", autouse=True)
def _background_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Start the long runs of the selected tests in the background (tests/support/background.py); stop them
    when the session ends."""
    from tests.support.background import BACKGROUND

    BACKGROUND.start(request.session.items, tmp_path_factory.mktemp("background"))
    yield
    BACKGROUND.stop()


@pytest.fixture
def background_run(request: pytest.FixtureRequest, tmp_path: Path):
    """The test's ``background_run`` run, finished (see tests/support/background.py)."""
    from tests.support.background import BACKGROUND

    return BACKGROUND.result(request.node, tmp_path)
