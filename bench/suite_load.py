"""The test suite on a busy machine: ``python -m pytest -q`` beside CPU hogs that hold the load near a target.

Run from the project root: ``python bench/suite_load.py [--load 8] [--clone]``. CPU hogs (busy-looping
processes at normal priority) are started until the 1-minute load average reaches ``--load``, counting what
already runs on the machine; a sampler tops them up or retires them once a minute as the load drifts. The
suite runs in a fresh ``git clone`` of HEAD with ``--clone`` (what CI sees), else in this folder.

Printed: the suite's wall time, its exit code and its last summary line, the hogs started, and the load
average sampled every 30 s (median, min, max). The suite must pass at load about 8 (issue #41).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def hog() -> None:
    """Spin forever (until terminated)."""
    count = 0
    while True:
        count += 1


class Hogs:
    """CPU hogs kept at a number that holds the 1-minute load near a target."""

    def __init__(self, target: float) -> None:
        self.target = target
        self.running: list[multiprocessing.Process] = []
        self.samples: list[float] = []
        self.started = 0
        self.stop = threading.Event()

    def adjust(self) -> None:
        load = os.getloadavg()[0]
        self.samples.append(load)
        gap = round(self.target - load)
        if gap > 0:  # the load average lags: add a few at a time
            for _ in range(min(gap, 2)):
                process = multiprocessing.Process(target=hog, daemon=True)
                process.start()
                self.running.append(process)
                self.started += 1
        elif gap < -1 and self.running:
            self.running.pop().terminate()

    def keep(self) -> None:
        while not self.stop.wait(30):
            self.adjust()

    def close(self) -> None:
        self.stop.set()
        for process in self.running:
            process.terminate()
        for process in self.running:
            process.join()


def suite_folder(clone: bool) -> Path:
    if not clone:
        return ROOT
    folder = Path(tempfile.mkdtemp(prefix="ultra-suite-load-")) / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=float, default=8.0, help="1-minute load average to hold (default 8)")
    parser.add_argument("--clone", action="store_true", help="run the suite in a fresh clone of HEAD")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    options = parser.parse_args()
    folder = suite_folder(options.clone)
    hogs = Hogs(options.load)
    hogs.adjust()
    keeper = threading.Thread(target=hogs.keep, daemon=True)
    keeper.start()
    env = dict(os.environ, PYTHONPATH=str(folder))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options.pytest_args]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    finally:
        seconds = time.perf_counter() - start
        hogs.close()
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    failures = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    print("\n".join(failures[:40]))
    report = {
        "folder": str(folder),
        "exit_code": done.returncode,
        "summary": lines[-1] if lines else done.stderr[-500:],
        "wall_seconds": round(seconds, 1),
        "target_load": options.load,
        "hogs_started": hogs.started,
        "load_median": round(statistics.median(hogs.samples), 2),
        "load_min": round(min(hogs.samples), 2),
        "load_max": round(max(hogs.samples), 2),
        "load_samples": len(hogs.samples),
    }
    print(json.dumps(report, indent=2))
    sys.exit(0 if done.returncode == 0 else 1)


if __name__ == "__main__":
    main()
