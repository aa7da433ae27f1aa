"""With ``--stdio`` a bad parameter file is refused before any server process starts (``ultra_client.calls.described``).

Each test runs the real ``ultra`` command. The pipeline names ``probe``, a server package with a ``SPEC`` whose
``__main__.py`` (what ``--stdio`` starts) first writes ``probe/started``: a refusal that comes after the servers
started leaves that file, one that comes before does not. The refusal's text is the in-process path's, compared
line for line with the same command run without ``--stdio``, and no run folder, sweep log or rewritten parameter
file is left. A server that only speaks stdio (no ``SPEC``) cannot be described without starting it: then every
server starts first and the same refusal follows, as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.support.server_package import write_server_package

SERVER = '''"""A probe server: shout repeats words; size counts them."""

from __future__ import annotations

from pathlib import Path

from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.factory import ServerSpec


class Words(TypedDict):
    words_ls: list[str]


class Size(TypedDict):
    size: int


def shout(words: str, count: int) -> Words:
    """Repeat the words count times."""
    return {"words_ls": words.split() * count}


def size(words_ls: list[str]) -> Size:
    """How many words."""
    return {"size": len(words_ls)}


def check_words(value, *, parameter_file):
    if "!" in str(value):
        raise InputError(f"{parameter_file}:{value.line}: words must not hold '!'; write them without it")


SPEC = ServerSpec("probe", Path(__file__).parent, lambda: [shout, size],
                  setting_checks={"words": "probe.server:check_words"})
'''
MAIN = """from pathlib import Path

Path(__file__).with_name("started").write_text("started")  # what the test looks for
from probe.server import SPEC  # noqa: E402

SPEC.main()
"""
# A server that only speaks stdio: no server.py, so no SPEC to describe it without starting it.
STDIO_ONLY = """from pathlib import Path

from typing_extensions import TypedDict

from ultra_kit.factory import build_server

Path(__file__).with_name("started").write_text("started")


class Echo(TypedDict):
    echoed: str


def echo(text: str) -> Echo:
    \"\"\"Return the text.\"\"\"
    return {"echoed": text}


build_server("plain", [echo], package_dir=Path(__file__).parent).run()
"""
PIPELINE = """servers:
  probe: probe
  judge: servers/judge
pipeline:
  - probe.shout
  - probe.size
  - judge.umbrela_judge
"""
CAP = (
    "judge_llm.max_workers 100,000 is more than the cap caps.max_workers = 1,024 of the judge server; it multiplies "
    "the work of the call. Use a smaller value, or raise the cap in servers/judge/parameter.yaml"
)


def parameters(words: str = "a b", count: str = "2", workers: int = 8) -> str:
    return f"probe:\n  words: {words}\n  count: {count}\njudge:\n  judge_llm:\n    max_workers: {workers}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_server_package(tmp_path / "probe", server=SERVER, main=MAIN, parameters="words: a b\ncount: 1\n")
    (tmp_path / "p.yaml").write_text(PIPELINE)
    (tmp_path / "out").mkdir()  # the output folder: still empty after a refusal
    return tmp_path


def refused(project: Path, *args: str, code: int = 1) -> str:
    """Run ``ultra ARGS`` with and without ``--stdio``: both refuse with one same error line (returned), no
    traceback; with ``--stdio`` no server started. The output folder stays empty."""
    lines = []
    for extra in ([], ["--stdio"]):
        result = run_ultra(*args, *extra, cwd=project, env={"PROBE_COUNT": "many"})
        assert result.returncode == code, result.stderr
        assert "Traceback" not in result.stderr
        lines.append([line for line in result.stderr.splitlines() if line.startswith("error:")])
        assert list((project / "out").iterdir()) == []
    assert lines[0] == lines[1] and len(lines[1]) == 1, lines
    assert not (project / "probe" / "started").exists(), "a server process started before the refusal"
    return lines[1][0]


def test_a_shipped_servers_cap_is_refused_before_any_server_starts(project: Path) -> None:
    (project / "bad.yaml").write_text(parameters(workers=100_000))
    error = refused(project, "run", "p.yaml", "--param", "bad.yaml", "--output-dir", "out")
    assert error == f"error: judge.judge_llm: bad.yaml:6: {CAP}"


def test_a_custom_servers_own_setting_check_runs_before_it_starts(project: Path) -> None:
    (project / "bad.yaml").write_text(parameters(words="'a b!'"))
    error = refused(project, "run", "p.yaml", "--param", "bad.yaml", "--output-dir", "out")
    assert error == "error: probe.words: bad.yaml:2: words must not hold '!'; write them without it"


def test_a_typed_setting_whose_variable_holds_a_word_is_refused_before_any_server_starts(project: Path) -> None:
    (project / "bad.yaml").write_text(parameters(count="${PROBE_COUNT}"))
    error = refused(project, "run", "p.yaml", "--param", "bad.yaml", "--output-dir", "out")
    assert error.startswith("error: probe.count: bad.yaml:3: ") and "${PROBE_COUNT}" in error
    assert "many" not in error  # the variable's value is never shown


def test_an_unset_variable_is_refused_before_any_server_starts(project: Path) -> None:
    (project / "bad.yaml").write_text(parameters(words="${PROBE_UNSET}"))
    error = refused(project, "run", "p.yaml", "--param", "bad.yaml", "--output-dir", "out")
    unset = "environment variable PROBE_UNSET is not set; export PROBE_UNSET=... before running"
    assert error == f"error: bad.yaml: {unset}"


def test_a_missing_variable_in_the_dataflow_is_refused_before_any_server_starts(project: Path) -> None:
    (project / "p.yaml").write_text(PIPELINE.replace("  - probe.shout\n", ""))
    (project / "good.yaml").write_text(parameters())
    error = refused(project, "run", "p.yaml", "--param", "good.yaml", "--output-dir", "out")
    assert error.startswith("error: p.yaml:5: ") and "words_ls" in error


def test_a_gate_on_a_variable_no_step_produces_is_refused_before_any_server_starts(project: Path) -> None:
    (project / "p.yaml").write_text(PIPELINE + "gate:\n  - {metric: sizes.total, min: 1}\n")
    (project / "good.yaml").write_text(parameters())
    error = refused(project, "run", "p.yaml", "--param", "good.yaml", "--output-dir", "out", code=2)
    assert error.startswith("error: p.yaml:9: gate metric sizes.total: no step of the pipeline produces")


def test_estimate_refuses_before_any_server_starts(project: Path) -> None:
    (project / "bad.yaml").write_text(parameters(workers=100_000))
    error = refused(project, "run", "p.yaml", "--param", "bad.yaml", "--estimate")
    assert error == f"error: judge.judge_llm: bad.yaml:6: {CAP}"


def test_build_refuses_before_any_server_starts_and_leaves_the_file_as_it_was(project: Path) -> None:
    (project / "parameters").mkdir()
    written = project / "parameters" / "p_parameter.yaml"
    written.write_text(parameters(workers=100_000))
    error = refused(project, "build", "p.yaml")
    assert error == f"error: judge.judge_llm: parameters/p_parameter.yaml:6: {CAP}"
    assert written.read_text() == parameters(workers=100_000)


def test_sweep_refuses_before_any_server_starts_and_writes_no_log(project: Path) -> None:
    (project / "bad.yaml").write_text(parameters(workers=100_000))
    (project / "s.yaml").write_text("sweep:\n  pipeline: p.yaml\n  grid:\n    probe.count: [1, 2]\n")
    result = run_ultra("sweep", "s.yaml", "--param", "bad.yaml", "--output-dir", "out/sw", "--stdio", cwd=project)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == f"error: judge.judge_llm: bad.yaml:6: {CAP}"
    assert not (project / "probe" / "started").exists()
    assert list((project / "out").rglob("*")) == [project / "out" / "sw"]  # the sweep folder, no server's log


def test_a_server_without_spec_starts_every_server_first_as_before(project: Path) -> None:
    (project / "plain").mkdir()
    (project / "plain" / "__init__.py").write_text("")
    (project / "plain" / "__main__.py").write_text(STDIO_ONLY)
    (project / "plain" / "parameter.yaml").write_text("text: hi\n")
    (project / "p.yaml").write_text(PIPELINE.replace("  judge:", "  plain: plain\n  judge:"))
    (project / "bad.yaml").write_text(parameters(workers=100_000))
    result = run_ultra("run", "p.yaml", "--param", "bad.yaml", "--output-dir", "out", "--stdio", cwd=project)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == f"error: judge.judge_llm: bad.yaml:6: {CAP}"
    assert (project / "probe" / "started").exists() and (project / "plain" / "started").exists()
    assert list((project / "out").iterdir()) == []
