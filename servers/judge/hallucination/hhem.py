"""HHEM-style factual consistency: a cross-encoder scores (passages, answer) pairs, batched, on CPU or GPU.

The model is any ``transformers`` ``AutoModelForSequenceClassification`` (a local folder, or a model id the
user's Hugging Face cache or hub access provides; extra ``hhem``). The premise is the item's passages joined
by blank lines, the hypothesis the answer; the pair is truncated longest-first to the model's length. The
score is the probability of "consistent": the sigmoid of a single logit, else the softmax probability of
the label whose name says consistent / entailment / supported, else, with two unnamed labels, of label 1
(HHEM's convention). Everything heavy is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, require

EXTRA = "hhem"
CONSISTENT_NAMES = ("consistent", "entail", "support", "faithful", "factual")
MAX_LENGTH = 512


@dataclass
class CrossEncoder:
    """A loaded model: tokenizer, model, device, and how a row of logits becomes a consistency score."""

    tokenizer: Any
    model: Any
    device: str
    label: int | None  # the "consistent" label's index; None = a single logit (sigmoid)
    max_length: int

    def describe(self) -> dict[str, Any]:
        config = self.model.config
        name = "sigmoid of the single logit" if self.label is None else f"label {self.label}"
        labels = {int(k): v for k, v in (getattr(config, "id2label", None) or {}).items()}
        return {"architecture": type(self.model).__name__, "score": name, "labels": labels, "device": self.device}


def consistent_label(id2label: dict[int, str], num_labels: int) -> int | None:
    """The index whose probability is the consistency score (None for one logit); an error when it is unclear."""
    if num_labels == 1:
        return None
    names = {int(i): str(name).lower() for i, name in id2label.items()}
    found = [i for i, n in names.items() if any(w in n for w in CONSISTENT_NAMES) and not n.startswith(("in", "not"))]
    if len(found) == 1:
        return found[0]
    if num_labels == 2 and all(n.startswith("label_") for n in names.values()):
        return 1
    raise InputError(
        f"hhem_model has {num_labels} labels {sorted(names.values())} and none is clearly 'consistent' "
        f"(a name containing one of {list(CONSISTENT_NAMES)}); use a model with 1 logit, 2 labels, or named labels"
    )


def pick_device(device: str) -> str:
    """'auto' -> cuda when available, else cpu; anything else as given ('cpu', 'cuda', 'cuda:1', 'mps')."""
    torch = require("torch", extra=EXTRA)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"hhem_device is {device!r} but torch sees no CUDA device; use 'cpu' or 'auto'")
    return device


def load_cross_encoder(model: str, device: str) -> CrossEncoder:
    """Load ``model`` (a folder, or a model id) on ``device`` for inference."""
    transformers = require("transformers", extra=EXTRA)
    device = pick_device(device)
    local = Path(model).expanduser()
    source, options = (str(local), {"local_files_only": True}) if local.is_dir() else (model, {})
    if not local.is_dir() and (model.startswith((".", "/", "~")) or local.exists()):
        raise InputError(f"hhem_model {model!r} is not a model folder (a folder with config.json)")
    transformers.utils.logging.disable_progress_bar()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, **options)
        loaded = transformers.AutoModelForSequenceClassification.from_pretrained(source, **options)
    except (OSError, ValueError) as exc:  # no such model / no config or tokenizer files in the folder
        raise InputError(f"hhem_model {model!r} could not be loaded: {str(exc).strip().splitlines()[0]}") from None
    loaded = loaded.to(device).eval()
    config = loaded.config
    label = consistent_label(getattr(config, "id2label", None) or {}, int(config.num_labels))
    limit = getattr(config, "max_position_embeddings", MAX_LENGTH) or MAX_LENGTH
    max_length = min(int(tokenizer.model_max_length), int(limit), MAX_LENGTH)
    return CrossEncoder(tokenizer, loaded, device, label, max_length)


def consistency_scores(
    encoder: CrossEncoder,
    pairs: list[tuple[str, str]],
    batch_size: int,
    on_batch: Callable[[int, int], None] | None = None,
) -> list[float]:
    """The consistency score of each (premise, hypothesis) pair, ``batch_size`` pairs per forward pass;
    ``on_batch(pairs scored, pairs)`` after each pass."""
    import torch

    if batch_size < 1:
        raise InputError(f"hhem_batch_size must be at least 1, got {batch_size}")
    scores: list[float] = []
    for start in range(0, len(pairs), batch_size):
        batch = pairs[start : start + batch_size]
        encoded = encoder.tokenizer(
            [p for p, _ in batch],
            [h for _, h in batch],
            padding=True,
            truncation="longest_first",
            max_length=encoder.max_length,
            return_tensors="pt",
        ).to(encoder.device)
        with torch.inference_mode():
            logits = encoder.model(**encoded).logits.float()
        if encoder.label is None:
            values = torch.sigmoid(logits[:, 0])
        else:
            values = torch.softmax(logits, dim=-1)[:, encoder.label]
        scores.extend(float(v) for v in values.cpu())
        if on_batch is not None:
            on_batch(len(scores), len(pairs))
    return scores
