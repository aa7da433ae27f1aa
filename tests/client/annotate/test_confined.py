"""Every file ``ultra annotate`` writes stays under output/ unless ``ULTRA_ALLOW_OUTSIDE_OUTPUT=1``: the store it
serves into (``--store``), ``--export``, ``--disagreements`` and ``--align-out``, each refused outside, through
``..`` and through a symlink inside output/ that points out, with the setting named and nothing written. The
variable is removed from the child's environment (a suite may have set it for other tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.client.annotate import labelled as fixed
from tests.client.annotate.test_disagreements import RUBRIC
from tests.conftest import ROOT
from ultra_kit.paths.output_root import ALLOW_OUTSIDE_ENV


def ultra_confined(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != ALLOW_OUTSIDE_ENV} | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(ROOT / "ultra.py"), "annotate", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def outside_paths(folder: Path, name: str) -> list[str]:
    """Three ways out of output/: an absolute path, ``..``, a symlink inside output/ pointing out."""
    link = folder / "output" / "link"
    if not link.exists():
        link.symlink_to(folder / "elsewhere", target_is_directory=True)
    return [str(folder / "elsewhere" / name), f"output/../elsewhere/{name}", f"output/link/{name}"]


def refused(done: subprocess.CompletedProcess, setting: str) -> bool:
    return done.returncode != 0 and f"{setting} is outside the output folder" in done.stderr and \
        "Traceback" not in done.stderr  # fmt: skip


@pytest.fixture
def labelled(tmp_path):
    data, _ = fixed.write_labelled(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    rubric = tmp_path / "relevance.yaml"
    rubric.write_text(yaml.safe_dump([RUBRIC]))
    return tmp_path, data, rubric


def test_every_output_of_annotate_is_confined_to_output(labelled) -> None:
    folder, data, rubric = labelled
    absolute, dotdot, symlink = outside_paths(folder, "x")
    assert refused(ultra_confined(folder, "--export", absolute), "--export")
    assert refused(ultra_confined(folder, "--export", symlink), "--export")
    assert refused(ultra_confined(folder, str(data), "--disagreements", absolute + ".html"), "--disagreements")
    assert refused(ultra_confined(folder, str(data), "--disagreements", dotdot + ".html"), "--disagreements")
    assert refused(ultra_confined(folder, str(data), "--scale", "umbrela", "--store", symlink + ".sqlite"),
                   "--store")  # fmt: skip
    assert refused(ultra_confined(folder, str(data), "--scale", "umbrela", "--store", dotdot + ".sqlite"), "--store")
    (folder / "aligned").mkdir()
    aligned = fixed.write_labelled(folder / "aligned", scale=str(rubric))[0]
    for path in (absolute, symlink):
        done = ultra_confined(folder, str(aligned), "--align", str(rubric), "--store", "aligned/output/labels.sqlite",
                              "--align-out", path + ".yaml")  # fmt: skip
        assert refused(done, "--align-out")
    assert not any((folder / "elsewhere").iterdir())
    # the same commands write inside output/
    assert ultra_confined(folder, "--export", "output/export").returncode == 0
    assert (folder / "output" / "export" / "human_labels.jsonl").is_file()
    assert ultra_confined(folder, str(data), "--disagreements", "output/d.html").returncode == 0
    assert (folder / "output" / "d.html").is_file()
