"""``ultra sweep --workers N`` forks its other workers from a warmed process
(``ultra_client/sweep/processes/forks.py``), or starts them as new processes where forking is not safe. Each case
runs in a fresh Python process of its own (a script), never in pytest's, whose threads would make the fork unsafe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.support.trec_sweep import write_trec_sweep

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")

# a worker's arguments whose outcome is known without a study: --status without --storage is a usage error
STATUS = '["sweep", "--status"]'


def script(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    """Run ``body`` (after ``import sys`` and the forks module) in a new Python process; its output."""
    path = tmp_path / "case.py"
    path.write_text(
        "import sys, threading, time\nfrom ultra_client.sweep.processes import forks\n" + textwrap.dedent(body)
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def test_a_forked_worker_ends_as_a_started_one_does(tmp_path: Path) -> None:
    """The same command, forked and started: the same exit code and error (the forked one's error line goes to
    the command, ``error_lines``; the started one prints its own); this process's buffered output is written once,
    not again by the child."""
    done = script(
        tmp_path,
        f"""
        print("before the fork")  # buffered: stdout is a pipe
        forked = forks.start_workers({STATUS}, 1, [], "journal:x")
        assert isinstance(forked[0], forks.Forked), forked
        code = forked[0].wait()
        print("forked", code, forked[0].wait())
        for line in forked[0].error_lines():
            print(line)
        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()  # a thread: forking is not safe now
        started = forks.start_workers({STATUS}, 1, [], "journal:x")
        assert not isinstance(started[0], forks.Forked), started
        print("started", started[0].wait())
        """,
    )
    assert done.returncode == 0, done.stderr
    message = "--status reads a shared study: give --storage URL and --study NAME"
    assert done.stdout.splitlines() == ["before the fork", "forked 1 1", f"error: {message}", "started 1"]
    assert done.stderr.count(message) == 1, done.stderr  # the started worker's


def test_a_forked_child_leaves_what_it_inherited_to_no_collection(tmp_path: Path) -> None:
    """``gc.freeze()`` before the fork: the objects this process made so far, which the child inherits, are in
    the permanent generation in both, so neither's collections visit them."""
    done = script(
        tmp_path,
        """
        import gc
        from ultra_client.sweep.processes.forked import Forked
        made = [[n] for n in range(50_000)]  # objects the collector tracks, made before the fork
        assert gc.get_freeze_count() == 0
        def child():
            print("child", gc.get_freeze_count() > 50_000, flush=True)
            return 0
        print("exit", Forked(child).wait(), flush=True)
        print("parent", gc.get_freeze_count() > 50_000)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["child True", "exit 0", "parent True"]


def test_terminate_stops_a_forked_worker_like_a_started_one(tmp_path: Path) -> None:
    done = script(
        tmp_path,
        f"""
        import ultra_client.cli
        ultra_client.cli.main = lambda argv, errors: time.sleep(60) or 0  # a worker busy with a long trial
        workers = forks.start_workers({STATUS}, 2, [], "journal:x")
        assert all(isinstance(w, forks.Forked) for w in workers), workers
        time.sleep(0.5)
        for worker in workers:
            worker.terminate()
        print([worker.wait() for worker in workers])
        workers[0].terminate()  # already collected: nothing to signal, no error
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[-15, -15]"


def test_preload_imports_the_servers_and_the_database_storage(tmp_path: Path) -> None:
    """Before the fork: each in-process server's tool modules and its ``heavy_imports`` (a module not installed,
    or one that fails, is skipped); SQLAlchemy and Alembic only for a database."""
    done = script(
        tmp_path,
        f"""
        from ultra_client.calls.server_info import ServerLocation
        from pathlib import Path
        root = Path({str(ROOT)!r})
        here = ServerLocation("evaluation", "servers.evaluation", root, root / "servers" / "evaluation")
        apart = ServerLocation("retriever", "servers.retriever", root, root / "servers" / "retriever", stdio=True)
        assert "colorsys" not in sys.modules
        forks.preload([here, apart], "journal:x")
        print(sorted({{m.split(".")[1] for m in sys.modules if m.startswith("servers.")}}))
        print(sorted(m for m in sys.modules if m.startswith("servers.evaluation.tools.")))
        print("pyarrow.compute" in sys.modules, "pyarrow.csv" in sys.modules, "bm25s" in sys.modules)
        print("sqlalchemy" in sys.modules, "alembic" in sys.modules)
        forks.preload([], "sqlite:///x.db")
        print("sqlalchemy.orm" in sys.modules, "alembic.migration" in sys.modules)
        import ultra_kit.inprocess
        class Broken:
            heavy_imports = ("no_such_module_anywhere", "json.no_such_part", "colorsys")
            def load_tools(self):
                raise ImportError("no module named 'missing'")
        ultra_kit.inprocess.load_spec = lambda module, root: Broken()
        forks.preload([here], "journal:x")  # left to each worker to report as it starts its servers
        print("preloaded", "colorsys" in sys.modules)
        """,
    )
    assert done.returncode == 0, done.stderr
    servers, tools, heavy, journal, database, broken = done.stdout.splitlines()
    assert broken == "preloaded True"
    assert heavy == "True True False"  # the evaluation server's TREC reader; the retriever's BM25 runs apart
    assert servers == "['evaluation']"  # a --stdio server runs in its own process: nothing to import here
    modules = [
        "answers",
        "consistency",
        "judged",
        "mtrag",
        "similarity",
        "trec",
    ]  # each tool module, not only the package
    assert tools == str([f"servers.evaluation.tools.{name}" for name in modules])
    assert (journal, database) == ("False False", "True True")


def test_two_forked_workers_share_a_sweep(tmp_path: Path) -> None:
    """``--workers 2`` end to end: two workers (the command and one forked from it), each joined once, every grid
    point run once by one of them, the report written once."""
    write_trec_sweep(tmp_path)
    done = run_ultra(
        "sweep", "pipes/trec.yaml", "--grid", "evaluation.max_depth=[5, 50, null]", "--metric", "eval_res.map",
        "--workers", "2", "--output-dir", "sw", cwd=tmp_path, env={"PYTHONPROFILEIMPORTTIME": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # Python lists each module a process imports: Optuna and the evaluation server's tools once, before the
    # fork (a started worker would list them again)
    imported = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert imported.count("optuna") == 1 and imported.count("servers.evaluation.tools") == 1, done.stderr[-2000:]
    joined = [line for line in done.stderr.splitlines() if "joined study" in line]
    assert len(joined) == 2 and len({line.split("(pid ")[1] for line in joined}) == 2, joined
    rows = json.loads((tmp_path / "sw" / "sweep.json").read_text(encoding="utf-8"))["rows"]
    assert sorted(str(row["evaluation.max_depth"]) for row in rows) == ["5", "50", "None"]
    # a row names its folder as host:path
    trials = [
        json.loads((Path(row["folder"].split(":", 1)[1]) / "trial.json").read_text(encoding="utf-8")) for row in rows
    ]
    assert {t["pid"] for t in trials} <= {int(line.split("(pid ")[1].split(")")[0]) for line in joined}
    assert done.stdout.count("sweep.json") == 1


def test_plots_are_shared_among_the_workers_processes(tmp_path: Path) -> None:
    """``--workers 3``' plots: three keys drawn by three processes (one forked per share), each file the same
    bytes as one process draws; a share whose process failed is drawn by the command itself."""
    done = script(
        tmp_path,
        """
        import os
        from pathlib import Path
        from ultra_client.sweep import report
        keys = ["a.x", "a.y", "b.z"]
        flat = [{"a.x": n, "a.y": ["p", "q"][n % 2], "b.z": n * n, "m": n / 10, "best": n == 3} for n in range(4)]
        drawn = []
        save = report._save_atomic
        def recorded(figure, path):
            save(figure, path)
            with open("pids.txt", "a") as out:
                out.write(f"{os.getpid()} {path.name}\\n")
        report._save_atomic = recorded
        for name, processes in (("one", 1), ("three", 3)):
            Path(name).mkdir()
            written = report.write_plots(Path(name), flat, keys, "m", False, processes)
            print(name, [p.name for p in written])
        draw = report._draw
        def fails_when_forked(folder, rows, keys, metric, minimize):
            if os.getpid() != parent:
                raise RuntimeError("a forked drawing failed")
            return draw(folder, rows, keys, metric, minimize)
        parent = os.getpid()
        report._draw = fails_when_forked
        Path("again").mkdir()
        print("again", [p.name for p in report.write_plots(Path("again"), flat, keys, "m", False, 2)])
        print("parent", parent)
        """,
    )
    assert done.returncode == 0, done.stderr
    umask = os.umask(0o022)
    os.umask(umask)
    lines = done.stdout.splitlines()
    names = ["plot_a.x.png", "plot_a.y.png", "plot_b.z.png"]
    assert lines[:3] == [f"one {names}", f"three {names}", f"again {names}"]
    parent = lines[3].split()[1]
    pids = [line.split() for line in (tmp_path / "pids.txt").read_text().splitlines()]
    one, three, again = pids[:3], pids[3:6], pids[6:]
    assert {pid for pid, _ in one} == {parent}
    assert len({pid for pid, _ in three}) == 3 and parent in {pid for pid, _ in three}
    assert sorted(name for _, name in again) == names and {pid for pid, _ in again} == {parent}
    for name in names:
        expected = (tmp_path / "one" / name).read_bytes()
        assert expected.startswith(b"\x89PNG\r\n\x1a\n")
        assert (tmp_path / "three" / name).read_bytes() == expected
        assert (tmp_path / "again" / name).read_bytes() == expected
        for folder in ("one", "three", "again"):  # as every other file of the sweep: 0666 less the umask
            assert (tmp_path / folder / name).stat().st_mode & 0o777 == 0o666 & ~umask
    assert not [p for p in tmp_path.rglob("*.tmp")]
