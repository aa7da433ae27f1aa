"""Parameter-file typos and missing optional packages, through the real CLI (issue 15, item 4)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.client.conftest import write_pipeline
from tests.conftest import ROOT, run_ultra

RAG_INSTALL = "pip install -e '.[rag]'"


def test_a_setting_typo_is_an_error_at_its_line_with_the_closest_name(toy_project: Path) -> None:
    pipeline = write_pipeline(toy_project, "typo", "  - toy.make_items\n  - toy.append_mark\n")
    params = toy_project / "pipes" / "parameters" / "typo_parameter.yaml"
    params.parent.mkdir()
    text = "toy:\n  words: a bb\n  mrak: '?'\n"
    params.write_text(text, encoding="utf-8")
    ran = run_ultra("run", str(pipeline), cwd=toy_project)
    assert ran.returncode == 1, ran.stderr
    assert ran.stderr == f"error: {params}:3: server 'toy' has no setting 'mrak'; did you mean mark?\n"
    assert not (toy_project / "output").exists()  # refused before any server started or folder was made

    built = run_ultra("build", str(pipeline), cwd=toy_project)
    assert built.returncode == 1
    assert f"{params}:3: server 'toy' has no setting 'mrak'; did you mean mark?" in built.stderr
    assert params.read_text(encoding="utf-8") == text  # the user's value is not dropped by a rebuild

    params.write_text("toy:\n  words: a bb\n  zzzzzz: 1\n", encoding="utf-8")
    far = run_ultra("run", str(pipeline), cwd=toy_project)
    assert far.returncode == 1
    assert (
        f"{params}:3: server 'toy' has no setting 'zzzzzz'; its settings: api_key, directory, mark, seconds, target, "
        "words" in far.stderr
    )


@pytest.fixture
def without_bm25s(tmp_path: Path) -> dict[str, str]:
    """An environment in which ``import bm25s`` fails as on a core install (a module that raises on import)."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "bm25s.py").write_text('raise ModuleNotFoundError("No module named \'bm25s\'", name="bm25s")\n')
    return {"PYTHONPATH": os.pathsep.join([str(shadow), str(ROOT)])}


def test_a_missing_optional_package_is_named_with_its_extra_over_stdio(tmp_path: Path, without_bm25s) -> None:
    pipeline = tmp_path / "rag.yaml"
    pipeline.write_text("servers:\n  retriever: servers/retriever\npipeline:\n  - retriever.retriever_init\n")
    params = tmp_path / "parameters" / "rag_parameter.yaml"
    params.parent.mkdir()
    params.write_text(
        json.dumps({"retriever": {"corpus_path": str(ROOT / "data/rag/corpus.jsonl"), "index_path": "output/idx"}})
    )
    result = run_ultra("run", str(pipeline), cwd=tmp_path, env=without_bm25s)
    assert result.returncode == 1
    assert (
        f"error: {pipeline}:4: step 'retriever.retriever_init' failed: Error executing tool retriever_init: "
        f"this needs the optional package 'bm25s' (No module named 'bm25s'); install it with: {RAG_INSTALL}"
    ) in result.stderr


@pytest.mark.parametrize("transport", [[], ["--stdio"]])
def test_a_missing_optional_package_in_ultra_call(tmp_path: Path, without_bm25s, transport: list[str]) -> None:
    corpus = f"corpus_path={ROOT / 'data/rag/corpus.jsonl'}"
    result = run_ultra("call", "retriever.retriever_init", *transport, corpus, cwd=tmp_path, env=without_bm25s)
    assert result.returncode == 1
    assert result.stderr == (
        "error: retriever.retriever_init failed: Error executing tool retriever_init: this needs the optional "
        f"package 'bm25s' (No module named 'bm25s'); install it with: {RAG_INSTALL}\n"
    )
