"""Schema-constrained decoding of the local backend: the response_format forms, the local bounds, and the real
SmolLM2 writing schema-valid JSON for every judge's and synth's reply schema, row by row in one batch."""

from __future__ import annotations

import importlib.util
import json

import jsonschema
import pytest

from tests.support.background import Finished, in_background
from tests.support.local_probes import NEEDED, every_reply_schema, probe, result
from ultra_base.errors import InputError
from ultra_llm.local.schema import MAX_LIST_ITEMS, MAX_STRING_CHARS, bounded, schema_of
from ultra_llm.replies.schema import array, choice, obj, response_format, text
from ultra_llm.settings import LLMSettings


def test_response_format_forms() -> None:
    schema = obj(label=choice("a", "b"), notes=array(text()))
    assert schema_of(response_format("x", schema)) == schema
    assert schema_of({"type": "json_object"}) == {"type": "object"}
    assert schema_of(None) is None
    with pytest.raises(InputError, match="json_schema"):
        schema_of({"type": "json_schema", "json_schema": {"name": "x"}})
    sized = response_format("x", schema, length=3)["json_schema"]["schema"]["properties"]["notes"]
    assert sized["minItems"] == sized["maxItems"] == 3 and "minItems" not in schema["properties"]["notes"]


def test_the_local_backend_always_has_structured_output() -> None:
    limits = {"timeout": 5, "max_retries": 0, "max_workers": 1}
    local_llm = LLMSettings.from_mapping({"backend": "local", "model_id": "smollm2", "structured_output": False,
                                          **limits}, name="judge_llm")  # fmt: skip
    remote = {"base_url": "http://127.0.0.1:9/v1", "model_id": "m", **limits}
    assert local_llm.structured_output is True
    assert LLMSettings.from_mapping(remote, name="judge_llm").structured_output is False  # opt-in for endpoints
    assert LLMSettings.from_mapping({**remote, "structured_output": True}, name="judge_llm").structured_output


def test_local_bounds_close_open_strings_and_lists_only() -> None:
    schema = obj(label=choice("a", "b"), notes=array(text()), few={**array(text()), "maxItems": 2})
    limited = bounded(schema)
    notes = limited["properties"]["notes"]
    assert notes["maxItems"] == MAX_LIST_ITEMS and notes["items"] == {"type": "string", "maxLength": MAX_STRING_CHARS}
    assert limited["properties"]["few"]["maxItems"] == 2  # the schema's own limit stays
    assert limited["properties"]["label"] == {"type": "string", "enum": ["a", "b"]}
    assert "maxLength" not in schema["properties"]["notes"]["items"]  # a copy


@pytest.mark.slow
@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in (*NEEDED, "lmformatenforcer")),
    reason="the local-llm extra is not installed",
)
@in_background(probe("schema_rows"))
def test_smollm2_replies_follow_every_schema_row_by_row(background_run: Finished) -> None:
    """SmolLM2 (tests/support/local_probes.py: schema_rows) answers every reply schema's row and a free row in one
    batch of 400 tokens at most."""
    assert background_run.done.returncode == 0, background_run.done.stderr[-2000:]
    got = result(background_run.folder, "schema_rows")
    cases = every_reply_schema()
    assert got["names"] == [name for name, _, _ in cases]
    for (name, _, schema), (reply, _, tokens) in zip(cases, got["rows"][:-1], strict=True):
        value = json.loads(reply)  # always parses
        jsonschema.validate(value, bounded(schema))
        assert tokens < 400, name  # the JSON closed before the cap
    assert got["rows"][-1][0].startswith(got["alone"])  # the free row is not constrained by its neighbours
