"""Schema-constrained decoding for the local backend: a reply that must follow a JSON schema always does.

A request whose ``response_format`` is ``{"type": "json_schema", "json_schema": {"schema": ...}}`` (the
OpenAI form) is decoded under that schema: at each step only the tokens that keep the reply a valid
prefix of a schema-conforming JSON value may be chosen (lm-format-enforcer's ``TokenEnforcer``, MIT,
part of the ``local-llm`` extra). Every row of a left-padded batch has its own constraint (or none).
lm-format-enforcer's transformers integration module does not import under transformers 5, so the
small token table and the logits processor are written here against its core API.

A small model may ramble inside a string or a list until its token cap cuts the JSON short; the local
backend therefore bounds strings and lists that the schema leaves open (``bounded``).
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from ultra_base.errors import InputError, require

EXTRA = "local-llm"
MAX_STRING_CHARS = 120  # a string the schema leaves open: at most this many characters (30 to 120 tokens)
MAX_LIST_ITEMS = 5  # a list the schema leaves open: at most this many items (statements, opinions)
MAX_WHITESPACE = 2  # whitespace characters in a row between JSON tokens (a small model may emit newlines forever)

_tables: dict[int, Any] = {}
_tables_lock = threading.Lock()


def schema_of(response_format: Any) -> dict[str, Any] | None:
    """The JSON schema of an OpenAI ``response_format`` (None for none, ``json_object`` = any JSON object)."""
    if not response_format:
        return None
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "json_object":
        return {"type": "object"}
    schema = (response_format.get("json_schema") or {}).get("schema") if kind == "json_schema" else None
    if not isinstance(schema, dict):
        raise InputError(
            'response_format must be {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}} '
            'or {"type": "json_object"}'
        )
    return schema


def bounded(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``maxLength`` on every open string and ``maxItems`` on every open list (a copy)."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and "enum" not in node and "const" not in node:
                node.setdefault("maxLength", MAX_STRING_CHARS)
            if node.get("type") == "array":
                node.setdefault("maxItems", MAX_LIST_ITEMS)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


def _table(tokenizer: Any) -> Any:
    """lm-format-enforcer's token table of ``tokenizer`` (each regular token's text), built once per tokenizer."""
    lmfe = require("lmformatenforcer", extra=EXTRA)
    with _tables_lock:
        table = _tables.get(id(tokenizer))
        if table is None:
            zero = tokenizer.encode("0")[-1]
            special = set(tokenizer.all_special_ids)
            regular = []
            for token in range(len(tokenizer)):
                if token in special:
                    continue
                # decoded after "0" keeps a word-initial space that decoding alone would drop
                after_zero = tokenizer.decode([zero, token])[1:]
                regular.append((token, after_zero, len(after_zero) > len(tokenizer.decode([token]))))
            table = lmfe.TokenEnforcerTokenizerData(
                regular, lambda ids: tokenizer.decode(ids).rstrip("\ufffd"), tokenizer.eos_token_id, False,
                len(tokenizer),
            )  # fmt: skip
            _tables[id(tokenizer)] = table
    return table


def enforcer(tokenizer: Any, schema: dict[str, Any]) -> Any:
    """A fresh ``TokenEnforcer`` for one reply under ``bounded(schema)``."""
    lmfe = require("lmformatenforcer", extra=EXTRA)
    try:
        parser = lmfe.JsonSchemaParser(bounded(schema))
    except Exception as exc:  # noqa: BLE001 - the library raises plain exceptions for schemas it cannot follow
        raise InputError(f"the local backend cannot decode under this JSON schema: {exc}") from None
    enforcing = lmfe.TokenEnforcer(_table(tokenizer), parser)
    parser.config.max_consecutive_whitespaces = MAX_WHITESPACE  # TokenEnforcer set a fresh config
    return enforcing


def logits_processor(tokenizer: Any, schemas: list[dict[str, Any] | None], prompt_width: int) -> Any:
    """A transformers logits processor that keeps row i of the batch within ``schemas[i]`` (None: free)."""
    import torch
    from transformers import LogitsProcessor

    enforcers = [None if schema is None else enforcer(tokenizer, schema) for schema in schemas]
    ends = {tokenizer.eos_token_id, tokenizer.pad_token_id}

    class SchemaRows(LogitsProcessor):
        def __call__(self, input_ids: Any, scores: Any) -> Any:
            for row, enforcing in enumerate(enforcers):
                if enforcing is None:
                    continue
                generated = input_ids[row, prompt_width:].tolist()
                if generated and generated[-1] in ends:  # the row has ended: the rest is padding
                    continue
                allowed = enforcing.get_allowed_tokens(generated).allowed_tokens
                keep = torch.full_like(scores[row], float("-inf"))
                keep[allowed] = 0.0
                scores[row] = scores[row] + keep
            return scores

    return SchemaRows()
