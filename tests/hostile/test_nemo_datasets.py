"""A NeMo job's dataset, read when the job is compiled, is read within the benchmark server's ``max_bytes`` and the
JSON depth limit, as ``get_data`` reads it (issue 40: every JSON the project reads, the same limits), through the
real CLI. Files over the limit are sparse: their size is what stat() reports, and they are refused unread."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import clear_error
from ultra_kit.settings import defaults

EXAMPLES = ROOT / "examples" / "compat" / "nemo"
LIMIT = defaults("benchmark")["benchmark"]["max_bytes"]


@pytest.fixture
def jobs(tmp_path: Path) -> Path:
    """A copy of the shipped NeMo examples (jobs and their data), without compiled files."""
    shutil.copytree(EXAMPLES, tmp_path / "nemo", ignore=shutil.ignore_patterns("compiled"))
    return tmp_path / "nemo"


def oversized(path: Path) -> None:
    """``path`` made one byte larger than benchmark.max_bytes, without writing the bytes (a sparse file)."""
    with path.open("r+b") as handle:
        handle.truncate(LIMIT + 1)


def build(jobs: Path, job: str):
    return run_ultra("build", f"{job}.json", cwd=jobs, env={"ULTRA_READ_ROOTS": str(jobs)}, timeout=300)


@pytest.mark.parametrize(
    ("job", "dataset"),
    [
        ("custom_data", "data/squad.json"),
        ("ragas_answers", "data/ragas.json"),
        ("beir_standard", "data/beir/qrels/test.tsv"),
    ],
)
def test_a_dataset_over_benchmark_max_bytes_is_refused_unread(jobs: Path, job: str, dataset: str) -> None:
    oversized(jobs / dataset)
    done = build(jobs, job)
    clear_error(
        done,
        f"{job}.json: ",
        f"{dataset.split('/')[-1]}: the file is {LIMIT + 1:,} bytes, more than benchmark.max_bytes = {LIMIT:,} bytes",
        "it was not read. Raise benchmark.max_bytes (in servers/benchmark/parameter.yaml",
    )
    assert "result file" not in done.stderr
    assert not (jobs / "compiled").exists() or not list((jobs / "compiled").glob("*.yaml"))


def test_a_dataset_at_the_limit_is_read(jobs: Path) -> None:
    """The limit is the benchmark server's: the shipped dataset, far below it, compiles."""
    assert (jobs / "data" / "squad.json").stat().st_size < LIMIT
    done = build(jobs, "custom_data")
    assert done.returncode == 0, done.stderr
    assert (jobs / "compiled" / "custom_data.yaml").is_file()


def test_a_dataset_nested_100000_deep_is_refused(jobs: Path) -> None:
    (jobs / "data" / "squad.json").write_text('{"data": ' + "[" * 100_000 + "]" * 100_000 + "}")
    clear_error(build(jobs, "custom_data"), "squad.json:1: JSON nested deeper than 100 levels")


def test_a_fifo_as_dataset_is_refused_without_blocking(jobs: Path) -> None:
    (jobs / "data" / "squad.json").unlink()
    os.mkfifo(jobs / "data" / "squad.json")
    clear_error(build(jobs, "custom_data"), "squad.json")
