"""The report of ``ultra sweep --workers N`` (N > 1), made by a process forked as the command starts.

The report's imports (matplotlib, the paired tests: about a quarter of a second) are made there while this
process imports what the workers need, a moment when only one core works, and at a lower priority than the
workers' once they run (``NICENESS``); before, worker 1 made them while the other workers ran trials, and they
took a core from the trials. The report process then waits. Once the trials are done, this process sends it
the spec, the rows and the notes, and it ranks, tests, writes the tables and plots (``run.finish``) and sends
back the table, the files written and the notes. This process prints them, so a failure reads as before.
Where forking is not safe, or the report process ends without an answer, the report is made here
(``run.finish``), so that its error is this process's.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from pathlib import Path
from typing import Any

from ultra_client.errors import UltraError
from ultra_client.sweep.processes.forked import Forked, can_fork

# the report process yields the cores to the workers: its imports that outlast the workers' start-up take only
# what they leave (two workers, 20 runs each interleaved: 1.368 s against 1.407 s)
NICENESS = 10


class Reporter:
    """A forked process that imports the report's libraries at once, then makes the report it is sent."""

    def __init__(self) -> None:
        self._request = os.pipe()  # this process -> the report process
        self._answer = os.pipe()  # the report process -> this process
        self._process: Forked | None = Forked(self._serve)
        os.close(self._request[0])
        os.close(self._answer[1])
        self._sent = False

    def _serve(self) -> int:
        """In the report process: warm, wait for the request (nothing: the sweep stopped), answer it."""
        os.close(self._request[1])
        os.close(self._answer[0])
        from ultra_client.sweep.report import warm

        with contextlib.suppress(OSError):
            os.nice(NICENESS)
        warm()
        from ultra_client.sweep.run import finish

        with os.fdopen(self._request[0], "rb") as pipe:
            request = pipe.read()
        if not request:
            return 0
        spec, rows, notes, processes = pickle.loads(request)
        try:
            answer: tuple = ("ok", finish(spec, rows, notes, processes), notes)
        except UltraError as exc:
            answer = ("error", str(exc))
        with os.fdopen(self._answer[1], "wb") as pipe:
            pipe.write(pickle.dumps(answer))
        return 0

    def finish(self, spec: Any, rows: list[dict[str, Any]], notes: list[str], processes: int) -> tuple[str, list[Path]]:
        """``run.finish`` made by the report process: the table and the files written (``notes`` gains its notes).
        Made here instead if that process ends without an answer."""
        self._sent = True
        data = b""
        with os.fdopen(self._answer[0], "rb") as answers:
            try:
                with os.fdopen(self._request[1], "wb") as pipe:
                    pipe.write(pickle.dumps((spec, rows, notes, processes)))
            except BrokenPipeError:  # the report process is gone
                pass
            else:
                data = answers.read()
        self._wait()
        try:
            answer = pickle.loads(data)
        except (pickle.UnpicklingError, EOFError):  # no answer, or a cut one: the report process ended first
            from ultra_client.sweep.run import finish

            return finish(spec, rows, notes, processes)
        if answer[0] == "error":
            raise UltraError(answer[1])
        notes[:] = answer[2]
        return answer[1]

    def close(self) -> None:
        """Stop the report process if it was never sent a report (the sweep stopped before its end)."""
        if not self._sent:
            self._sent = True
            for fd in (self._request[1], self._answer[0]):
                os.close(fd)  # it reads the end of its request, and stops
        self._wait()

    def _wait(self) -> None:
        if self._process is not None:
            self._process.wait()
            self._process = None


def start_reporter(count: int) -> Reporter | None:
    """A report process for ``count`` workers: only when more than one works here and forking is safe."""
    return Reporter() if count > 1 and can_fork() else None
