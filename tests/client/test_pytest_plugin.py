"""The pytest plugin (``ultra_client.pytest_plugin``, entry point ``pytest11``): ``ultra_run`` and ``ultra_gate``
used by a test suite of its own, run with pytest's ``pytester``."""

from __future__ import annotations

import json
import re
from importlib.metadata import entry_points

import pytest

from tests.conftest import ROOT

pytest_plugins = ["pytester"]
PLUGIN = "ultra_client.pytest_plugin"

SUITE = f"""
import json
PIPELINE = {str(ROOT / "examples" / "eval_trec.yaml")!r}

def test_results(ultra_run):
    run = ultra_run(PIPELINE, params={{"evaluation": {{"ks": [5, 10], "save_path": "evaluation"}}}})
    memory = json.loads((run.folder / "memory.json").read_text())
    assert run.results["eval_res.ndcg@10"] == memory["eval_res"]["ndcg@10"]
    assert "eval_res.ndcg@20" not in run.results  # params replaced ks
    print("MAP", run.results["eval_res.map"])

def test_gate_passes(ultra_run, ultra_gate):
    run = ultra_run(PIPELINE)
    verdicts = ultra_gate(run, [{{"metric": "eval_res.map", "min": 0.1}}, {{"metric": "failed_fraction", "max": 0}}])
    assert [v.status for v in verdicts] == ["pass", "pass"]

def test_gate_fails(ultra_run, ultra_gate):
    run = ultra_run(PIPELINE)
    ultra_gate(run, [{{"metric": "eval_res.map", "min": 0.9}}, {{"metric": "eval_res.ndcg@10", "max": 1}}])

def test_gate_typo(ultra_run, ultra_gate):
    ultra_gate(ultra_run(PIPELINE), [{{"metric": "eval_res.mapp", "min": 0.1}}])
"""


def plugin_options() -> list[str]:
    """``-p`` the plugin unless the installed package's entry point already loads it."""
    installed = any(point.value == PLUGIN for point in entry_points(group="pytest11"))
    return [] if installed else ["-p", PLUGIN]


def test_fixtures_in_a_test_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makepyfile(test_eval=SUITE)
    pytester.chdir()
    (pytester.path / "data").symlink_to(ROOT / "data")
    result = pytester.runpytest_subprocess(*plugin_options(), "-p", "no:cacheprovider", "-s", timeout=600)
    result.assert_outcomes(passed=2, failed=2)
    text = result.stdout.str()
    (value,) = re.findall(r"\bMAP (\S+)", text)
    assert 0 < float(value) < 1
    assert "ultra_gate: 1 of 2 condition(s) did not pass" in text
    assert "eval_res.map >= 0.9" in text and "FAIL" in text and "below 0.9" in text
    assert "the run has no scalar result eval_res.mapp; did you mean 'eval_res.map'?" in text
    assert "Traceback" not in text  # failures read as verdicts, not stack traces


def test_pyproject_declares_the_entry_point() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["pytest11"] == {"ultra": PLUGIN}
    assert json.dumps(project["project"]["optional-dependencies"]["mlflow"])
