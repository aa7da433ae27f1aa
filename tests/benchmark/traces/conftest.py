"""Traces written by real chains (LlamaIndex, LangChain) under the real OpenInference instrumentation, in a
subprocess (scripts/make_traces.py), with what each chain saw."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

pytest.importorskip("openinference.instrumentation.llama_index", reason="pip install 'ultra-eval[traces]'")


def make_traces(out: Path, *options: str, script: str = "make_traces.py") -> list[dict[str, Any]]:
    expected = out.with_suffix(".expected.json")
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / script),
            "--out",
            str(out),
            "--expected",
            str(expected),
            *options,
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    return json.loads(expected.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def llamaindex_otlp(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("traces") / "llamaindex.jsonl"
    return out, make_traces(out, "--framework", "llamaindex")


@pytest.fixture(scope="session")
def langchain_otlp(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("traces") / "langchain.jsonl"
    return out, make_traces(out, "--framework", "langchain")


@pytest.fixture(scope="session")
def langsmith_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("traces") / "runs.jsonl"
    return out, make_traces(out, "--framework", "langchain", "--export", "langsmith")


@pytest.fixture(scope="session")
def langfuse_observations(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    pytest.importorskip("langfuse", reason="pip install 'ultra-eval[traces]'")
    out = tmp_path_factory.mktemp("traces") / "observations.json"
    return out, make_traces(out, "--framework", "langchain", "--export", "langfuse")


@pytest.fixture(scope="session")
def openai_chat(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    pytest.importorskip("openinference.instrumentation.openai", reason="pip install 'ultra-eval[traces]'")
    out = tmp_path_factory.mktemp("traces") / "chat.jsonl"
    return out, make_traces(out, script="make_chat_traces.py")


@pytest.fixture(scope="session")
def openai_chain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    pytest.importorskip("openinference.instrumentation.openai", reason="pip install 'ultra-eval[traces]'")
    out = tmp_path_factory.mktemp("traces") / "chain.jsonl"
    return out, make_traces(out, "--chain", script="make_chat_traces.py")
