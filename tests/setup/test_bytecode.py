"""scripts/bytecode.py, which scripts/test and the benches run: the .pyc files of the project's packages (the ones
pyproject.toml names) and of ultra.py, written where missing or stale; a file that does not compile fails it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import bytecode  # noqa: E402


def a_project(folder: Path) -> Path:
    """A copy of the script and pyproject.toml beside an empty folder for each package it names, and ultra.py."""
    (folder / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bytecode.py", folder / "scripts")
    shutil.copy(ROOT / "pyproject.toml", folder)
    for package in bytecode.project_packages():
        (folder / package / "inner").mkdir(parents=True)
    (folder / "ultra.py").write_text("print('ultra')\n")
    return folder


def compile_in(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "scripts/bytecode.py"], cwd=folder, capture_output=True, text=True)


def pyc(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def test_the_packages_are_the_ones_ultra_imports_from_this_checkout() -> None:
    found = subprocess.run(
        [sys.executable, "-c", "import sys, ultra_client.cli, ultra_client.sweep.run; print(*sys.modules)"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    here = {name.split(".")[0] for name in found if (ROOT / name.split(".")[0]).is_dir()}
    assert here and here <= set(bytecode.project_packages())
    assert {"servers", "ultra_client", "ultra_kit"} <= set(bytecode.project_packages())


def test_missing_files_are_written_and_stale_ones_rewritten(tmp_path: Path) -> None:
    project = a_project(tmp_path)
    first, last = bytecode.project_packages()[0], bytecode.project_packages()[-1]
    deep = project / first / "inner" / "deep.py"
    deep.write_text("VALUE = 1\n")
    other = project / last / "mod.py"
    other.write_text("VALUE = 2\n")
    done = compile_in(project)
    assert done.returncode == 0, done.stdout + done.stderr
    for source in (deep, other, project / "ultra.py"):
        assert pyc(source).is_file(), source
    before = pyc(deep).read_bytes()
    deep.write_text("VALUE = 'a longer value than before'\n")
    later = deep.stat().st_mtime + 10  # an edit a moment later (compileall compares whole seconds of mtime)
    os.utime(deep, (later, later))
    assert compile_in(project).returncode == 0
    assert pyc(deep).read_bytes() != before
    spec = importlib.util.spec_from_file_location("deep", deep)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.VALUE == "a longer value than before"


def test_a_file_that_does_not_compile_fails_it_and_the_others_are_still_written(tmp_path: Path) -> None:
    project = a_project(tmp_path)
    package = bytecode.project_packages()[0]
    (project / package / "broken.py").write_text("def (:\n")
    good = project / package / "inner" / "good.py"
    good.write_text("VALUE = 3\n")
    done = compile_in(project)
    assert done.returncode == 1
    assert "broken.py" in done.stdout + done.stderr
    assert pyc(good).is_file() and not pyc(project / package / "broken.py").exists()
