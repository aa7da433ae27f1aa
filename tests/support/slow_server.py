"""A custom in-process server, written into a test's folder, whose tool reserves its result and sleeps.

Used to check that ``ultra run`` and ``ultra call`` stopped mid-tool (SIGTERM, SIGHUP) exit at once and
leave neither the empty reserved result name nor the half-written temporary file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import ROOT

SERVER = '''
"""A server whose tool reserves its result, writes half of it and sleeps."""

import os
import time
from pathlib import Path

from typing_extensions import TypedDict

from ultra_kit.factory import ServerSpec
from ultra_kit.files import atomic_write, result_path


class Written(TypedDict):
    result_path: str


def slow_write(*, seconds: float, directory: str) -> Written:
    """Reserve output/slow/slow_write_<time>.json, write "{", note the process id, sleep, then finish it
    (noting ``finished`` first). Each note appears whole (written aside, then renamed)."""
    path = result_path("output/slow", "slow_write")

    def note(name: str, text: str) -> None:
        (Path(directory) / f".{name}").write_text(text)
        os.replace(Path(directory) / f".{name}", Path(directory) / name)

    def write(handle) -> None:
        handle.write("{")
        handle.flush()
        note("pid", str(os.getpid()))
        note("writing", str(path))
        time.sleep(seconds)
        note("finished", "")
        handle.write("}")

    atomic_write(path, write)
    return {"result_path": str(path)}


SPEC = ServerSpec("slow", Path(__file__).parent, lambda: [slow_write])
'''


def write_slow_server(folder: Path, *, runnable: bool = False) -> Path:
    """``folder/slowsrv``: the package (``SPEC``) and its parameter.yaml; the tool signals in ``folder/writing``
    (and writes its process id to ``folder/pid`` just before). ``runnable`` adds a ``__main__.py``
    serving it over stdio."""
    package = folder / "slowsrv"
    package.mkdir()
    (package / "__init__.py").write_text("")
    if runnable:
        (package / "__main__.py").write_text("from slowsrv.server import SPEC\n\nSPEC.create_app().run()\n")
    (package / "server.py").write_text(textwrap.dedent(SERVER))
    (package / "parameter.yaml").write_text("seconds: 30\ndirectory: .\n")
    return package


def wait_for(predicate: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for a reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def default_sigint() -> None:
    """SIGINT delivered and left to the system (Python makes it KeyboardInterrupt), whatever the test process
    inherited or set: an ignored or blocked SIGINT would pass on to the child and change what is tested."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_ultra(*args: str, cwd: Path, sigint_ignored: bool = False) -> subprocess.Popen:
    """``python ultra.py ARGS`` in ``cwd``, started in the background (SIGINT ignored, as a script's ``&`` does)."""
    return subprocess.Popen(
        [sys.executable, str(ROOT / "ultra.py"), *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), "ULTRA_ALLOW_OUTSIDE_OUTPUT": "0"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_sigint if sigint_ignored else default_sigint,
    )


def tool_finished(project: Path) -> bool:
    """Whether the slow tool woke from its 30 s sleep: a command stopped "at once" ended before that, whatever
    the machine's load (a state to check, where a time bound would fail on a busy machine)."""
    return (project / "finished").exists()


def stop_when_writing(client: subprocess.Popen, project: Path, signum: int) -> tuple[str, str, float]:
    """Wait until the tool is writing (its reserved name and temporary file exist), send ``signum``;
    (stdout, stderr, seconds from the signal to the exit). The client is killed if it outlives the test,
    or if it has not ended 25 s after the signal (before the tool's 30 s sleep ends)."""
    try:
        assert wait_for(lambda: (project / "writing").is_file(), 60), "the tool never started writing"
        slow = project / "output" / "slow"
        reserved = Path((project / "writing").read_text())
        assert reserved.parent == slow.resolve() and reserved.stat().st_size == 0
        assert len(list(slow.iterdir())) == 2  # the reserved name and the temporary file being written
        sent = time.monotonic()
        client.send_signal(signum)
        stdout, stderr = client.communicate(timeout=25)
        return stdout, stderr, time.monotonic() - sent
    finally:
        if client.poll() is None:
            client.kill()
            client.communicate()
