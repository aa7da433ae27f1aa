"""Run folders that cannot crash the commands reading them (issue 40, major 2; M4, M5), through the real CLI.

``ultra runs`` skips a folder whose name is not a run's and lists one it cannot read as ``unreadable``;
``ultra gate`` (exit 2) and ``ultra export mlflow|wandb`` (exit 1) refuse it, naming the file and the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.support.background import Command, Finished, Prepare, in_background

DEEP_JSON = "[" * 100_000 + "]" * 100_000  # the report's memory.json, 100,000 levels deep


def refused(result: subprocess.CompletedProcess, code: int, *fragments: str) -> None:
    """Exit ``code`` with an ``error:`` line holding every fragment, and no traceback."""
    assert result.returncode == code, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr, result.stderr
    assert "error: " in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def run_folder(output: Path, name: str, memory: str = '{"eval_res": {"map": 0.5}}') -> Path:
    folder = output / name
    folder.mkdir(parents=True)
    (folder / "memory.json").write_text(memory, encoding="utf-8")
    return folder


def gate_file(where: Path, text: str = "gate:\n  - {metric: eval_res.map, min: 0.1}\n") -> Path:
    path = where / "gate.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_runs_skips_a_folder_named_with_an_impossible_date(tmp_path: Path) -> None:
    run_folder(tmp_path / "output", "x_20261399_999999")
    run_folder(tmp_path / "output", "good_20260101_101010")
    done = run_ultra("runs", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "good_20260101_101010" in done.stdout and "x_20261399_999999" not in done.stdout


def test_runs_lists_a_memory_nested_100000_deep_as_unreadable(tmp_path: Path) -> None:
    run_folder(tmp_path / "output", "deep_20260101_101010", DEEP_JSON)
    run_folder(tmp_path / "output", "good_20260101_101011")
    done = run_ultra("runs", "--json", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = {row["folder"]: row for row in json.loads(done.stdout)}
    assert rows["deep_20260101_101010"]["status"] == "unreadable"
    assert rows["good_20260101_101011"]["status"] == "ok" and rows["good_20260101_101011"]["metrics"] == {
        "eval_res.map": 0.5
    }
    assert "deep_20260101_101010/memory.json: line 1: JSON nested deeper than 100 levels" in done.stderr


def test_gate_refuses_a_memory_nested_100000_deep_with_exit_2(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "deep_20260101_101010", DEEP_JSON)
    done = run_ultra("gate", str(folder), "--gate", str(gate_file(tmp_path)), cwd=tmp_path)
    refused(done, 2, "memory.json: line 1: JSON nested deeper than 100 levels")


def test_gate_refuses_a_baseline_nested_100000_deep_with_exit_2(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "run_20260101_101010")
    baseline = run_folder(tmp_path, "base_20260101_101010", DEEP_JSON)
    gate = gate_file(tmp_path, f"gate:\n  - {{metric: eval_res.map, baseline: {baseline}, max_drop: 0.1}}\n")
    done = run_ultra("gate", str(folder), "--gate", str(gate), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    # the note under the table wraps at 100 columns, where the length of pytest's temporary path puts the breaks
    assert "JSON nested deeper than 100 levels" in " ".join(done.stdout.split())


@pytest.mark.parametrize("tracker", ["mlflow", "wandb"])
def test_export_refuses_a_memory_nested_100000_deep(tmp_path: Path, tracker: str) -> None:
    folder = run_folder(tmp_path, "deep_20260101_101010", DEEP_JSON)
    done = run_ultra("export", tracker, str(folder), cwd=tmp_path, env={"WANDB_MODE": "offline"})
    refused(done, 1, "deep_20260101_101010/memory.json: line 1: JSON nested deeper than 100 levels")
    assert not (tmp_path / "mlruns").exists() and not (tmp_path / "wandb").exists()


@pytest.mark.parametrize("tracker", ["mlflow", "wandb"])
def test_export_refuses_a_parameter_file_nested_3000_deep(tmp_path: Path, tracker: str) -> None:
    folder = run_folder(tmp_path, "deep_20260101_101010")
    (folder / "parameters.yaml").write_text("a: " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    done = run_ultra("export", tracker, str(folder), cwd=tmp_path, env={"WANDB_MODE": "offline"})
    refused(done, 1, "parameters.yaml: line 1: nested more than 100 levels deep", "nothing was exported")


def test_export_mlflow_logs_a_metric_named_like_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = run_folder(tmp_path, "odd_20260101_101010", '{"../../x": 0.25, "eval_res": {"map": 0.5}}')
    done = run_ultra("export", "mlflow", str(folder), "--tracking-uri", f"file:{tmp_path / 'mlruns'}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # as ultra export does for a file: store
    run_id = done.stdout.split("mlflow run ")[1].split()[0]
    metrics = MlflowClient(tracking_uri=f"file:{tmp_path / 'mlruns'}").get_run(run_id).data.metrics
    assert metrics["_.._.._x"] == 0.25 and metrics["eval_res.map"] == 0.5
    assert not (tmp_path.parent / "x").exists()


def mlflow_export(tmp_path: Path) -> Command:
    """``ultra export mlflow`` to a port nothing listens on: a background run (MLflow's import is long)."""
    folder = run_folder(tmp_path, "run_20260101_101010")
    return Command(("export", "mlflow", str(folder), "--tracking-uri", "http://127.0.0.1:9"), timeout=120, cwd=tmp_path)


@in_background(mlflow_export)
def test_export_mlflow_to_an_unreachable_tracking_uri(background_run: Finished) -> None:
    done = background_run.done
    refused(done, 1, "MLflow at http://127.0.0.1:9:", "Connection refused", "nothing was exported")


def test_export_wandb_with_a_file_as_dir(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "run_20260101_101010")
    (tmp_path / "afile").write_text("x")
    done = run_ultra("export", "wandb", str(folder), "--dir", "afile", cwd=tmp_path, env={"WANDB_MODE": "offline"})
    refused(done, 1, "--dir afile: is a file; W&B needs a folder for")


def test_runs_on_a_folder_without_runs_creates_no_index(tmp_path: Path) -> None:
    """``ultra runs --output-dir /etc`` created /etc/runs.sqlite: a listing writes into no folder without runs."""
    plain = tmp_path / "etc"
    plain.mkdir()
    (plain / "hosts").write_text("127.0.0.1 localhost\n")
    done = run_ultra("runs", "--output-dir", str(plain), cwd=tmp_path)
    assert done.returncode == 0 and f"no runs in {plain}" in done.stdout, done.stderr
    assert sorted(p.name for p in plain.iterdir()) == ["hosts"]


def test_runs_rebuild_sets_a_corrupt_index_aside(tmp_path: Path) -> None:
    output = tmp_path / "output"
    run_folder(output, "good_20260101_101010")
    (output / "runs.sqlite").write_bytes(b"this is not a database" * 100)
    listed = run_ultra("runs", cwd=tmp_path)
    refused(listed, 1, "runs.sqlite: file is not a database", "ultra runs --rebuild sets it aside")
    rebuilt = run_ultra("runs", "--rebuild", cwd=tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "rebuilt" in rebuilt.stdout and "good_20260101_101010" in rebuilt.stdout
    assert (output / "runs.sqlite.corrupt").read_bytes().startswith(b"this is not a database")
    assert run_ultra("runs", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("tracker", ["mlflow", "wandb"])
@pytest.mark.parametrize("entry", ["a link to a file outside", "a link to a folder", "a loop of links", "a pipe"])
def test_export_refuses_a_run_folder_whose_artifacts_leave_it(tmp_path: Path, tracker: str, entry: str) -> None:
    """The folder is logged whole: ``notes.txt -> <a secret outside>`` would upload the secret, a link to a folder
    whatever it holds, a pipe would hang the copy. Each is refused, named, before anything is logged."""
    (tmp_path / "secret.txt").write_text("SECRET-TOKEN")
    folder = run_folder(tmp_path / "output", "odd_20260101_101010")
    made = {
        "a link to a file outside": lambda: (folder / "notes.txt").symlink_to(tmp_path / "secret.txt"),
        "a link to a folder": lambda: (folder / "notes.txt").symlink_to(folder),
        "a loop of links": lambda: [
            (folder / "notes.txt").symlink_to("x.txt"),
            (folder / "x.txt").symlink_to("notes.txt"),
        ],
        "a pipe": lambda: os.mkfifo(folder / "notes.txt"),
    }
    made[entry]()
    done = run_ultra("export", tracker, str(folder), "--tracking-uri", f"file:{tmp_path / 'mlruns'}",
                     cwd=tmp_path, env={"WANDB_MODE": "offline"}) if tracker == "mlflow" else run_ultra(
        "export", tracker, str(folder), cwd=tmp_path, env={"WANDB_MODE": "offline"})  # fmt: skip
    refused(done, 1, "notes.txt" if entry != "a loop of links" else "odd_20260101_101010/", "nothing was exported")
    assert not (tmp_path / "mlruns").exists() and not (tmp_path / "wandb").exists()


def linked_export(tmp_path: Path) -> Command:
    """``ultra export mlflow`` of a folder holding a link to its own memory.json: a spare background run."""
    folder = run_folder(tmp_path / "output", "linked_20260101_101010")
    (folder / "sub").mkdir()
    (folder / "sub" / "memory_copy.json").symlink_to("../memory.json")
    return Command(("export", "mlflow", str(folder), "--tracking-uri", f"file:{tmp_path / 'mlruns'}"), timeout=120,
                   cwd=tmp_path)  # fmt: skip


@in_background(linked_export, spare=True)
def test_export_keeps_a_link_to_a_file_inside_the_folder(background_run: Finished) -> None:
    done, tmp_path = background_run.done, background_run.folder
    assert done.returncode == 0, done.stderr
    copied = list((tmp_path / "mlruns").rglob("memory_copy.json"))
    assert len(copied) == 1 and json.loads(copied[0].read_text()) == {"eval_res": {"map": 0.5}}


def unusable_tracking_uri(uri: str | None) -> Prepare:
    """``ultra export mlflow`` to ``uri`` beside an older MLflow's store: a spare background run (MLflow's import
    is long)."""

    def prepare(tmp_path: Path) -> Command:
        folder = run_folder(tmp_path, "run_20260101_101010")
        (tmp_path / "mlruns" / "0").mkdir(parents=True)  # an older MLflow's store: MLflow's default is then that
        (tmp_path / "mlruns" / "0" / "meta.yaml").write_text("name: Default\n")  # file store, which it refuses
        given = () if uri is None else ("--tracking-uri", uri)
        return Command(("export", "mlflow", str(folder), *given), timeout=120, unset=("MLFLOW_TRACKING_URI",),
                       cwd=tmp_path)  # fmt: skip

    return prepare


URIS = [
    ("garbage://x", "MLflow at garbage://x: Model registry functionality is unavailable"),
    ("http://[::1", "MLflow at http://[::1: Invalid IPv6 URL"),
    ("", "--tracking-uri is empty"),
    (None, "MLflow at MLflow's default tracking URI: The filesystem tracking backend"),
]


@pytest.mark.parametrize(("uri", "expected"), [
    pytest.param(uri, expected, marks=in_background(unusable_tracking_uri(uri), spare=True)) for uri, expected in URIS
])  # fmt: skip
def test_export_mlflow_to_a_tracking_uri_it_cannot_use(background_run: Finished, uri: str | None, expected: str):
    """An unknown scheme, a malformed URI, an empty one, and MLflow's own default where an ``mlruns`` folder is
    (a file store it refuses unless asked for): each is an error naming the store, not MLflow's traceback."""
    done, tmp_path = background_run.done, background_run.folder
    refused(done, 1, expected)
    assert [p.name for p in (tmp_path / "mlruns").iterdir()] == ["0"] and not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize(("where", "expected"), [("/proc", "--dir /proc: cannot be W&B's folder"),
                                                 ("taken", "--dir taken: taken/wandb is a file")])  # fmt: skip
def test_export_wandb_to_a_dir_it_cannot_write(tmp_path: Path, where: str, expected: str) -> None:
    folder = run_folder(tmp_path, "run_20260101_101010")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "wandb").write_text("x")
    done = run_ultra("export", "wandb", str(folder), "--dir", where, cwd=tmp_path, env={"WANDB_MODE": "offline"})
    refused(done, 1, expected)


def test_runs_rebuild_sets_aside_an_index_of_another_schema_and_keeps_earlier_copies(tmp_path: Path) -> None:
    """A ``runs`` table without the index's columns: ``ultra runs`` pointed at ``--rebuild``, which then failed
    with the same "no such column". It is set aside as corrupt; a later corrupt copy never replaces an earlier."""
    import sqlite3

    output = tmp_path / "output"
    run_folder(output, "good_20260101_101010")
    (output / "runs.sqlite.corrupt").write_bytes(b"an earlier corrupt index")
    with sqlite3.connect(output / "runs.sqlite") as connection:
        connection.execute("CREATE TABLE runs (x INTEGER)")
    refused(run_ultra("runs", cwd=tmp_path), 1, "no such column: folder", "ultra runs --rebuild sets it aside")
    rebuilt = run_ultra("runs", "--rebuild", cwd=tmp_path)
    assert rebuilt.returncode == 0 and "good_20260101_101010" in rebuilt.stdout, rebuilt.stderr
    assert "kept as output/runs.sqlite.corrupt.1" in rebuilt.stderr
    assert (output / "runs.sqlite.corrupt").read_bytes() == b"an earlier corrupt index"
    assert run_ultra("runs", cwd=tmp_path).returncode == 0
