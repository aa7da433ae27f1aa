"""docs/ci.md's GitHub Actions workflow, its ``run:`` commands run in order end to end against the local test
server: a push to main, a pull request gated against it (cache and baseline restored), and a regression.

The ``uses:`` steps are played by this test: ``actions/cache`` keeps ``output/judge_cache.sqlite`` between
jobs, ``upload-artifact`` / ``download-artifact`` copy folders to and from an artifact store.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT
from tests.support.openai_stub import OpenAIStub
from tests.support.together import at_once

CACHE = "output/judge_cache.sqlite"


def workflow() -> dict:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(name: rag-eval\n.*?)```", text, re.DOTALL)
    return yaml.safe_load(block)


def condition_holds(expression: str | None, event: str) -> bool:
    """The few ``if:`` expressions the workflow uses."""
    ref = "refs/heads/main" if event == "push" else "refs/pull/1/merge"
    if expression is None or expression == "always()":
        return True
    found = re.fullmatch(r"github\.(event_name|ref) == '([^']*)'", expression)
    assert found, f"the test does not know the expression {expression!r}"
    return (event if found[1] == "event_name" else ref) == found[2]


class Job:
    """One run of the workflow's job in a fresh checkout (symlinks to the repository's folders)."""

    def __init__(self, root: Path, event: str, stub: OpenAIStub, store: Path) -> None:
        self.root, self.event, self.store = root, event, store
        root.mkdir()
        for name in ("examples", "data", "servers"):
            (root / name).symlink_to(ROOT / name)
        bin_dir = root.parent / "bin"
        bin_dir.mkdir(exist_ok=True)
        shim = bin_dir / "ultra"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "ultra.py"}" "$@"\n')
        shim.chmod(0o755)
        self.github_env = root.parent / f"{event}_{root.name}.env"
        self.github_env.write_text("")
        job = workflow()["jobs"]["evaluate"]
        self.steps = job["steps"]
        self.env = {
            **os.environ,
            **job["env"],
            "OPENAI_API_KEY": "ci-test-key",
            "JUDGE_BASE_URL": stub.base_url,
            "PYTHONPATH": str(ROOT),
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_ENV": str(self.github_env),
            "GITHUB_EVENT_NAME": event,
        }
        self.outcomes: dict[str, int] = {}

    def exported(self) -> dict[str, str]:
        pairs = (line.split("=", 1) for line in self.github_env.read_text().splitlines() if "=" in line)
        return dict(pairs)

    def run(self) -> None:
        for index, step in enumerate(self.steps):
            if not condition_holds(step.get("if"), self.event) or step.get("id") == "install":
                continue
            if self.outcomes and any(self.outcomes.values()) and step.get("if") != "always()":
                continue  # a failed step skips the rest, as on GitHub
            if "uses" in step:
                self.use(step)
                continue
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=self.root,
                env={**self.env, **self.exported()},
                capture_output=True,
                text=True,
                timeout=300,
            )
            self.outcomes[step.get("id", str(index))] = done.returncode
            self.log = getattr(self, "log", "") + done.stdout + done.stderr
        if (self.root / CACHE).exists():  # actions/cache saves at the end of the job
            (self.store / "cache").mkdir(exist_ok=True)
            shutil.copy(self.root / CACHE, self.store / "cache" / "judge_cache.sqlite")

    def use(self, step: dict) -> None:
        action, inputs = step["uses"].split("@")[0], step.get("with", {})
        if action == "actions/cache":
            assert inputs["path"] == CACHE
            saved = self.store / "cache" / "judge_cache.sqlite"
            if saved.exists():
                (self.root / CACHE).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(saved, self.root / CACHE)
        elif action == "dawidd6/action-download-artifact":
            saved = self.store / inputs["name"]
            if saved.exists():
                shutil.copytree(saved, self.root / inputs["path"])
        elif action == "actions/upload-artifact":
            path = inputs["path"].replace("${{ env.RUN }}", self.exported().get("RUN", ""))
            shutil.rmtree(self.store / inputs["name"], ignore_errors=True)
            shutil.copytree(self.root / path, self.store / inputs["name"])
        elif action == "mikepenz/action-junit-report":
            assert list(self.root.glob(inputs["report_paths"]))


def test_the_workflow_gates_a_pull_request_against_main(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    with OpenAIStub() as stub:
        main = Job(tmp_path / "main", "push", stub, store)
        main.run()
        assert main.outcomes == {"evaluate": 0, "report": 0, "verdict": 0}, main.log
        first_requests = stub.request_count
        assert first_requests > 0 and (store / "cache" / "judge_cache.sqlite").exists()
        assert (store / "eval-report" / "report.html").exists() and (store / "eval-run" / "memory.json").exists()
        per_query = (store / "eval-report" / "per_query.csv").read_text().splitlines()
        assert len(per_query) > 18  # the report has each query's scores (18 queries)
        assert not (main.root / "reports" / "baseline.xml").exists()  # no baseline on main

        # the pull request and the regression are independent jobs: each restores main's cache and run from a store
        # of its own, and both run at once
        worse_store = tmp_path / "worse_store"
        shutil.copytree(store, worse_store)
        memory = json.loads((worse_store / "eval-run" / "memory.json").read_text())
        memory["eval_res"]["ndcg@10"] += 0.05  # main's run was better than this branch's
        (worse_store / "eval-run" / "memory.json").write_text(json.dumps(memory))
        pull = Job(tmp_path / "pull", "pull_request", stub, store)
        worse = Job(tmp_path / "worse", "pull_request", stub, worse_store)
        at_once({"pull": pull.run, "worse": worse.run})
        assert pull.outcomes == {"evaluate": 0, "report": 0, "verdict": 0}, pull.log
        assert stub.request_count == first_requests  # every judge request (of both jobs) came from the restored cache
        baseline_xml = (pull.root / "reports" / "baseline.xml").read_text()
        assert 'tests="2" failures="0" errors="0"' in baseline_xml
    assert worse.outcomes == {"evaluate": 0, "report": 0, "verdict": 1}, worse.log
    assert "eval_res.ndcg@10 >= baseline - 0.01" in worse.log and "FAIL" in worse.log
    assert 'failures="1"' in (worse.root / "reports" / "baseline.xml").read_text()
    assert (worse_store / "eval-report" / "report.html").exists()
