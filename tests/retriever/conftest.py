"""Fixtures of the retriever tests: a tiny corpus written to a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TINY = [
    {"id": "d1", "title": "Cats", "text": "The cat sat on the mat. A cat likes milk."},
    {"id": "d2", "title": "Dogs", "text": "The dog barks at the mailman."},
    {"id": "d3", "title": "Pets", "text": "Cats and dogs are common pets; a dog needs walks."},
    {"id": "d4", "title": "Birds", "text": "Parrots can imitate human speech."},
]


def write_corpus(folder: Path, rows: list[dict], name: str = "corpus.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path, TINY)
