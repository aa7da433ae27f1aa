"""``ultra sweep`` refuses an unset ``${VAR}`` that its trials would send before the first trial, with ``ultra run``'s
message (``ultra_client.sweep.run.check_sent_variables``): in the parameter file, in a ``--grid`` value list and in a
sweep file's grid; a typed setting whose variable holds a word is refused without showing it. Before, each trial
failed on it after the servers started. Real ``ultra`` subprocesses on a real server package; with ``--stdio`` the
server's ``__main__`` marks ``probe/started``, which a refusal before any server starts never writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.support.server_package import write_server_package

SERVER = '''"""A probe server: shout repeats words."""

from pathlib import Path

from typing_extensions import TypedDict

from ultra_kit.factory import ServerSpec


class Words(TypedDict):
    words_ls: list[str]


def shout(words: str, count: int) -> Words:
    """Repeat the words count times."""
    return {"words_ls": words.split() * count}


SPEC = ServerSpec("probe", Path(__file__).parent, lambda: [shout])
'''
MAIN = """from pathlib import Path

Path(__file__).with_name("started").write_text("started")  # what the test looks for
from probe.server import SPEC  # noqa: E402

SPEC.main()
"""
UNSET = "environment variable PROBE_UNSET is not set; export PROBE_UNSET=... before running"
STDIO = [pytest.param([], id="in-process"), pytest.param(["--stdio"], id="stdio")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_server_package(tmp_path / "probe", server=SERVER, main=MAIN, parameters="words: a b\ncount: 1\n")
    (tmp_path / "p.yaml").write_text("servers:\n  probe: probe\npipeline:\n  - probe.shout\n")
    (tmp_path / "good.yaml").write_text("probe:\n  words: a b\n  count: 1\n")
    (tmp_path / "bad.yaml").write_text("probe:\n  words: ${PROBE_UNSET}\n  count: 1\n")
    return tmp_path


def refused(project: Path, stdio: list[str], *args: str) -> str:
    """``ultra sweep ARGS``: exit 1 and one error line (returned), nothing else but [ultra] lines, no trial folder, no
    server process started, and the value of PROBE_COUNT ('many') shown nowhere."""
    result = sweep(project, stdio, *args)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.startswith("[ultra]")]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert not (project / "out" / "trials").exists() and not (project / "out" / "sweep.csv").exists()
    assert not (project / "probe" / "started").exists(), "a server process started before the refusal"
    assert "many" not in result.stdout + result.stderr
    return lines[0]


def sweep(project: Path, stdio: list[str], *args: str):  # noqa: ANN201 - a CompletedProcess
    return run_ultra(
        "sweep", *args, "--output-dir", "out", *stdio, cwd=project, env={"PROBE_COUNT": "many"}, unset=("PROBE_UNSET",)
    )


@pytest.mark.parametrize("stdio", STDIO)
def test_an_unset_variable_of_the_parameter_file_is_refused_as_ultra_run_refuses_it(project: Path, stdio) -> None:
    error = refused(project, stdio, "p.yaml", "--param", "bad.yaml", "--grid", "probe.count=[1, 2]")
    assert error == f"error: bad.yaml: {UNSET}"
    run = run_ultra("run", "p.yaml", "--param", "bad.yaml", "--output-dir", "runs", *stdio, cwd=project,
                    unset=("PROBE_UNSET",))  # fmt: skip
    assert run.returncode == 1 and run.stderr.splitlines()[-1] == error


@pytest.mark.parametrize("stdio", STDIO)
def test_an_unset_variable_in_a_grid_value_is_refused_by_its_key(project: Path, stdio) -> None:
    error = refused(project, stdio, "p.yaml", "--param", "good.yaml", "--grid", 'probe.words=[a, "${PROBE_UNSET}"]')
    assert error == f"error: --grid probe.words: {UNSET}"


@pytest.mark.parametrize("stdio", STDIO)
def test_a_grid_variable_holding_a_word_for_a_count_is_refused_and_never_shown(project: Path, stdio) -> None:
    error = refused(project, stdio, "p.yaml", "--param", "good.yaml", "--grid", 'probe.count=[1, "${PROBE_COUNT}"]')
    assert error == (
        "error: --grid probe.count: count ${PROBE_COUNT} must hold a whole number; it holds something else (not shown)"
    )


def test_an_unset_variable_in_a_sweep_files_grid_is_refused_at_its_line(project: Path) -> None:
    (project / "s.yaml").write_text(
        'sweep:\n  pipeline: p.yaml\n  param: good.yaml\n  grid:\n    probe.words: [a, "${PROBE_UNSET}"]\n'
    )
    assert refused(project, ["--stdio"], "s.yaml") == f"error: s.yaml:5: {UNSET}"


def test_a_swept_settings_own_variable_is_never_sent_so_need_not_be_set(project: Path) -> None:
    result = sweep(project, [], "p.yaml", "--param", "bad.yaml", "--grid", "probe.words=[x, y z]")
    assert result.returncode == 0, result.stderr
    assert len(list((project / "out" / "trials").iterdir())) == 2
