"""Fixtures of the LLM-library tests: the local OpenAI-compatible stub server and settings pointing at it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.openai_stub import OpenAIStub
from ultra_llm.settings import LLMSettings

SECRET = "sk-test-DO-NOT-LEAK-4f9c2a7e1b"


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as server:
        yield server


def stub_settings(stub: OpenAIStub, **overrides: Any) -> LLMSettings:
    """Settings for the stub with short limits and fast retries (``overrides``: mapping keys)."""
    mapping = {"model_id": "stub-judge", "base_url": stub.base_url, "api_key": SECRET}
    mapping |= {"max_retries": 3, "max_workers": 4, "timeout": 5.0}
    return LLMSettings.from_mapping({**mapping, **overrides}, name="test_llm", backoff_base=0.01, backoff_max=0.05)
