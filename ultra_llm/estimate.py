"""Estimate mode (``ultra run --estimate``): the client sends nothing and writes down what it would have sent.

With ``$ULTRA_LLM_ESTIMATE`` naming a ledger file, a request the answer cache cannot answer is not sent:
one JSON line is appended to the ledger (the cache key, the model, the prompt's name, the characters
of its messages, its reply budget ``max_tokens``, the cache the client reads and the kind of stand-in)
and the caller gets a stand-in reply (``ultra_llm.standins``), which is never cached, so that the
requests a tool makes from its replies are counted too. Cache hits are answered as usual. The ledger lines
are small single writes in append mode, so in-process tools and MCP subprocesses can share one file.
``chars_per_token`` and ``typical_reply`` calibrate the estimate on the answers a cache already holds.

The server kit's writer follows the mode without importing this module: ``result_path`` puts result files in
the scratch folder (the ledger's, removed when the estimate ends; ``ultra_base.write_hooks.estimate_scratch``),
and this module registers ``check_estimate_write`` with the writer (``ultra_base.write_hooks.on_write``) when it
is imported: a tool call that was handed stand-ins (``note_standin``, counted in the notes the kit keeps per
call) may not write outside the scratch folder, so the files a setting names (a synthetic test set, say) never
receive data an LLM did not give.
"""

from __future__ import annotations

import json
import os
import sqlite3
from functools import lru_cache
from pathlib import Path
from typing import Any

from ultra_base.environment import ESTIMATE_ENV
from ultra_base.errors import InputError
from ultra_base.file_limits import loads_limited
from ultra_base.line_limits import bounded_lines
from ultra_base.write_hooks import estimate_scratch, note, noted, on_write

__all__ = ["ESTIMATE_ENV"]  # where the mode's environment variable is named (ultra_base.errors, read by the kit too)
NOT_SENT = "not sent: ultra run --estimate asks no LLM"
DEFAULT_CHARS_PER_TOKEN = 4.0  # English text under the GPT tokenizers, when no cache says otherwise
STANDIN = "standin"  # the event a tool call's notes count (ultra_base.write_hooks)
LEDGER_LINE = "; each line of the estimate's ledger is one record: it was damaged, run the estimate again"


def ledger_path() -> str:
    """The ledger file of estimate mode, or "" when the client sends requests as usual."""
    return os.environ.get(ESTIMATE_ENV, "").strip()


def note_standin() -> None:
    """Record that the current tool call was handed a stand-in reply."""
    note(STANDIN)


def standins_in_call() -> int:
    """The stand-in replies the current tool call was handed so far."""
    return noted(STANDIN)


@on_write  # registered with the writer (ultra_kit.files) when this module is imported
def check_estimate_write(path: Path) -> None:
    """In estimate mode, refuse to write ``path`` outside the scratch folder from a call fed stand-in replies."""
    scratch = estimate_scratch()
    if scratch is None or not standins_in_call() or Path(os.path.abspath(path)).is_relative_to(scratch):
        return
    raise InputError(
        "ultra run --estimate does not write files from stand-in replies (no LLM answered this step's "
        "requests): the steps that read this file are estimated after a run has written it",
        path=str(path),
    )


def message_chars(messages: Any) -> int:
    """Characters of the text the messages carry (a chat's contents; an embeddings request's inputs)."""
    total = 0
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content", message.get("input", "")) if isinstance(message, dict) else message
        if isinstance(content, list):
            total += sum(message_chars([part]) if isinstance(part, dict) else len(str(part)) for part in content)
        else:
            total += len(str(content if isinstance(content, str) else (content or "")))
    return total


def unsent(client: Any) -> Unsent | None:
    """In estimate mode, where ``client``'s (an ``LLMClient``) cache misses go instead of an endpoint; else None."""
    return Unsent(client) if ledger_path() else None


class Unsent:
    """Where a client's cache misses go in estimate mode (as a batch pass's go to its collector): to the ledger."""

    def __init__(self, client: Any) -> None:
        self.client = client  # an LLMClient

    def defer(self, key: str, model: str, messages: Any, sampling: dict[str, Any], *, prompt: str) -> Any:
        """Write one request (``messages`` as a list or its JSON text) to the ledger; the stand-in reply it gets."""
        from ultra_llm.cache import encode
        from ultra_llm.completions import Completion
        from ultra_llm.standins import stand_in, stand_in_vectors

        client = self.client
        messages_json = messages if isinstance(messages, str) else encode(messages)
        messages = json.loads(messages) if isinstance(messages, str) else messages
        local = client.settings.backend == "local"
        tokens = None
        if local and prompt != "embeddings":
            tokens = local_prompt_tokens(client.settings.model_id, messages)
        elif client.settings.tokenizer and prompt != "embeddings":
            tokens = tokenizer_prompt_tokens(client.settings.tokenizer, messages)
        model = f"local:{model}" if local and not model.startswith("local:") else model
        cache = getattr(client.cache, "path", None)
        note_standin()
        if prompt == "embeddings":  # vectors drive no request count: any of the cache's length will do
            reply = Completion("ok", vectors=stand_in_vectors(cache, len(messages[0]["input"])), standin="vectors")
        else:
            found = stand_in(cache, messages_json, prompt)
            reply = Completion("ok", found.text, completion_tokens=found.completion_tokens, standin=found.kind)
        record_unsent(key, model=model, prompt=prompt, messages=messages, sampling=sampling, cache=cache,
                      tokens=tokens, standin=reply.standin)  # fmt: skip
        return reply


def local_prompt_tokens(model_id: str, messages: list[dict[str, Any]]) -> int:
    """The prompt tokens the local backend would feed its model: the chat template's text, tokenized as it is."""
    tokenizer = _local_tokenizer(model_id)
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def tokenizer_prompt_tokens(tokenizer: str, messages: list[dict[str, Any]]) -> int:
    """The tokens of the messages' contents under ``tokenizer`` (a ``tokenizer.json`` or its folder; a chat
    template's few tokens per message are not counted)."""
    encoder = _configured_tokenizer(tokenizer)
    texts = [str(m.get("content") or "") for m in messages if isinstance(m, dict)]
    return sum(len(encoding.ids) for encoding in encoder.encode_batch(texts, add_special_tokens=False))


@lru_cache(maxsize=4)
def _configured_tokenizer(tokenizer: str) -> Any:
    """The ``tokenizers`` tokenizer of a setting ``tokenizer``: its file, read once per process."""
    from ultra_base.errors import InputError, existing_file, require

    tokenizers = require("tokenizers", extra="tokenizer")
    path = Path(tokenizer).expanduser()
    path = path / "tokenizer.json" if path.is_dir() else path
    try:
        return tokenizers.Tokenizer.from_file(str(existing_file(path, what="tokenizer file")))
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - the library's own errors, said with the file
        raise InputError(f"the tokenizer could not be read as a tokenizers JSON file ({exc})", path=str(path)) from None


@lru_cache(maxsize=4)
def _local_tokenizer(model_id: str) -> Any:
    """The local chat model's tokenizer alone (not its weights), loaded once per process."""
    from ultra_llm.local.models import EXTRA, require, resolve_chat_model

    transformers = require("transformers", extra=EXTRA)
    folder, gguf = resolve_chat_model(model_id)
    kwargs = {"gguf_file": gguf} if gguf else {}
    return transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True, **kwargs)


def record_unsent(
    key: str,
    *,
    model: str,
    prompt: str,
    messages: Any,
    sampling: dict[str, Any],
    cache: Path | None,
    tokens: int | None,
    standin: str | None,
) -> None:
    """Append one unsent request to the ledger."""
    budget = sampling.get("max_completion_tokens") or sampling.get("max_tokens")
    line = {
        "key": key,
        "model": model,
        "prompt": prompt,
        "chars": message_chars(messages),
        "max_tokens": int(budget) if isinstance(budget, (int, float)) else None,
        "cache": str(cache) if cache else "",
        "tokens": tokens,  # counted with the local model's tokenizer, else None
        "standin": standin,  # the reply it got instead: "same", "like", "placeholder" or "vectors"
    }
    with open(ledger_path(), "a", encoding="utf-8") as ledger:
        ledger.write(json.dumps(line) + "\n")


def read_ledger(path: str | Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The ledger's records written from byte ``offset`` on, and the offset after them; read line by line, each
    line within ``MAX_LINE_CHARS`` bytes (one record) and the JSON depth limit."""
    records: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as ledger:
            ledger.seek(offset)
            for raw in bounded_lines(ledger, path, why=LEDGER_LINE, numbered=False):  # from the offset
                if not raw.endswith(b"\n"):
                    break  # a line still being written is read next time
                offset += len(raw)
                if raw.strip():
                    records.append(loads_limited(raw.decode("utf-8", errors="replace"), path=str(path)))
    except FileNotFoundError:
        pass
    return records, offset


def cache_rows(cache: str | Path, model: str | None) -> list[tuple[str, str, int, int]]:
    """(prompt, request JSON, prompt tokens, completion tokens) of the cache's answers for ``model`` (None: all)."""
    if not cache or not Path(cache).is_file():
        return []
    try:
        from ultra_llm.cache import read_only

        with read_only(cache) as db:
            query = "SELECT prompt, request, prompt_tokens, completion_tokens FROM answers"
            if model is None:
                return db.execute(query).fetchall()
            return db.execute(query + " WHERE model_id = ?", (model,)).fetchall()
    except sqlite3.DatabaseError:
        return []


def chars_per_token(rows: list[tuple[str, str, int, int]]) -> float | None:
    """Characters per prompt token over the cached requests that recorded their tokens, or None."""
    chars = tokens = 0
    for _, request, prompt_tokens, _ in rows:
        if prompt_tokens > 0:
            data = loads_limited(request, path="the answer cache")
            chars += message_chars(data.get("messages", [{"input": data.get("input", [])}]))
            tokens += prompt_tokens
    return chars / tokens if tokens else None


def typical_reply(rows: list[tuple[str, str, int, int]], prompt: str) -> float | None:
    """The mean completion tokens of the cached answers to ``prompt`` (its name, any version), or None."""
    name = prompt.split("@", 1)[0]
    counts = [out for p, _, _, out in rows if p.split("@", 1)[0] == name and out > 0]
    return sum(counts) / len(counts) if counts else None
