"""semantic_similarity: local MiniLM values against a direct transformers computation (mean pooling, cosine), and an
OpenAI-compatible embeddings endpoint (the local stub) against the stub's own vectors."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import numpy as np
import pytest

from servers.evaluation.server import SPEC
from tests.support.openai_stub import OpenAIStub, embed_text
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools
from ultra_llm.local.models import resolve_embedding_model

ANSWERS = ["The Eiffel Tower is in Paris.", "Water boils at 100 degrees Celsius at sea level.", "", "I like cats."]
REFERENCES = [
    "The Eiffel Tower stands in Paris, France.",
    ["Water boils at 90 degrees.", "At sea level water boils at 100 °C."],
    "Nothing",
    "Dogs are loyal animals.",
]


def call(**arguments):
    return anyio.run(call_local_tool, local_tools(SPEC)["semantic_similarity"], arguments)


def minilm_by_hand(texts: list[str]) -> np.ndarray:
    """all-MiniLM-L6-v2 as its model card defines it: mean of the token states over the mask, unit length."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    folder = resolve_embedding_model("")
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True).eval()
    encoded = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        states = model(**encoded).last_hidden_state
    mask = encoded["attention_mask"].unsqueeze(-1).float()
    pooled = (states * mask).sum(1) / mask.sum(1)
    return torch.nn.functional.normalize(pooled, dim=1).numpy().astype(np.float64)


def test_local_minilm_matches_a_direct_computation(tmp_path) -> None:
    result = call(pred_ls=ANSWERS, gt_ls=REFERENCES, id_ls=["a", "b", "c", "d"], save_path=str(tmp_path))
    values = result["eval_res"]["semantic_similarity"]
    vectors = minilm_by_hand([ANSWERS[0], REFERENCES[0], ANSWERS[1], *REFERENCES[1], ANSWERS[3], REFERENCES[3]])
    expected = [
        vectors[0] @ vectors[1],
        max(vectors[2] @ vectors[3], vectors[2] @ vectors[4]),
        None,  # empty answer: no value
        vectors[5] @ vectors[6],
    ]
    assert values[2] is None
    for got, want in zip(values, expected, strict=True):
        if want is not None:
            assert got == pytest.approx(float(want), abs=1e-5)
    assert values[0] > 0.8 and values[3] < 0.5  # paraphrase close, unrelated far
    eval_res = result["eval_res"]
    assert eval_res["num_empty"] == 1
    assert eval_res["avg_semantic_similarity"] == pytest.approx(sum(values[i] for i in (0, 1, 3)) / 3)
    saved = json.loads(Path(result["result_path"]).read_text())
    assert saved["id_ls"] == ["a", "b", "c", "d"] and saved["semantic_similarity"] == values
    assert saved["settings"]["similarity_embeddings"]["backend"] == "local"


def test_an_openai_compatible_endpoint(tmp_path) -> None:
    with OpenAIStub() as stub:
        result = call(
            pred_ls=["alpha", "beta"], gt_ls=["gamma", ["delta", "beta"]], save_path=str(tmp_path),
            similarity_embeddings={"backend": "openai", "base_url": stub.base_url, "model_id": "embedder"},
        )  # fmt: skip
        bodies = [s.body for s in stub.served]
    assert len(bodies) == 1 and bodies[0]["model"] == "embedder"
    assert sorted(bodies[0]["input"]) == ["alpha", "beta", "delta", "gamma"]  # each distinct text once
    first = float(np.dot(embed_text("alpha"), embed_text("gamma")))
    assert result["eval_res"]["semantic_similarity"] == [pytest.approx(first), pytest.approx(1.0)]


def test_failures_are_errors(tmp_path) -> None:
    with OpenAIStub() as stub:
        stub.add_fault("status", status=401, message="bad key")
        with pytest.raises(ToolFailure, match="embeddings request failed.*bad key"):
            call(
                pred_ls=["a"], gt_ls=["b"], save_path=str(tmp_path),
                similarity_embeddings={"backend": "openai", "base_url": stub.base_url, "model_id": "e"},
            )  # fmt: skip
    with pytest.raises(ToolFailure, match="pred_ls has 1 answers but gt_ls has 2;"):
        call(pred_ls=["a"], gt_ls=["b", "c"], save_path=str(tmp_path))
    with pytest.raises(ToolFailure, match="unknown keys"):
        call(pred_ls=["a"], gt_ls=["b"], save_path=str(tmp_path), similarity_embeddings={"modle_id": "x"})
    assert not list(tmp_path.iterdir())
