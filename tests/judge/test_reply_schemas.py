"""Judges' reply schemas: declared in the registry, sent as response_format with structured output (and only
then), sized to the statements for verdicts, and each one a schema OpenAI's strict mode accepts."""

from __future__ import annotations

import json

import jsonschema
import pytest

from servers.judge.answer_runner import build_items, run_answer_judge
from servers.judge.registry import JUDGES, judge_of_kind
from tests.judge.conftest import llm_settings
from tests.support.openai_stub import OpenAIStub, content_of

pytestmark = pytest.mark.anyio
RISK_SUITE_JUDGES = ("faithfulness", "answer_relevancy", "guardrail", "bias")


def strict_objects(schema: dict) -> list[dict]:
    """Every object schema inside ``schema``."""
    found = [schema] if schema.get("type") == "object" else []
    for value in schema.get("properties", {}).values():
        found += strict_objects(value)
    if isinstance(schema.get("items"), dict):
        found += strict_objects(schema["items"])
    return found


def test_every_declared_schema_is_valid_and_strict() -> None:
    for kind in RISK_SUITE_JUDGES:  # every LLM judge of the risk suite declares a schema for each prompt
        judge = judge_of_kind(kind)
        assert set(judge.reply_schemas) == set(judge.prompts), kind
    for judge in JUDGES:
        for name, schema in judge.reply_schemas.items():
            jsonschema.Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object", name  # OpenAI strict: an object at the root
            for part in strict_objects(schema):
                assert part["additionalProperties"] is False and part["required"] == list(part["properties"]), name


def judge_reply(request: dict) -> str:
    text = content_of(request)
    if '"statements"' in text:
        return json.dumps({"statements": ["The fee is waived.", "The clerk decides."]})
    if "Verdicts (JSON array" in text:
        return json.dumps({"verdicts": [1, 0]})  # an object, as the schema asks: the list inside is read
    return json.dumps({"label": "refused", "rationale": "It declines."})


async def run(kind: str, stub: OpenAIStub, tmp_path, **llm) -> dict:
    items = build_items(["Can I get a fee waiver?"], ["Yes, the clerk decides."], ret_psg=[["The clerk decides."]])
    return await run_answer_judge(
        kind, items, judge_llm=llm_settings(stub, max_retries=0, **llm), judge_cache="",
        save_path=str(tmp_path / "judge"), max_failed_fraction=0.0,
    )  # fmt: skip


async def test_structured_output_sends_each_prompts_schema(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    schemas = judge_of_kind("faithfulness").reply_schemas
    with OpenAIStub(judge_reply) as stub:
        result = await run("faithfulness", stub, tmp_path, structured_output=True)
        statements, verdicts = stub.chat_requests()
        guardrail = await run("guardrail", stub, tmp_path, structured_output=True)
        (label,) = stub.chat_requests()[2:]
    assert result["items"][0]["faithfulness"] == 0.5 and result["items"][0]["verdicts"] == [1, 0]
    sent = statements["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["name"] == "faithfulness_statements_v1"
    assert sent["json_schema"]["schema"] == schemas["faithfulness_statements_v1"]
    verdict_list = verdicts["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
    assert verdict_list["minItems"] == verdict_list["maxItems"] == 2  # one verdict per statement
    assert "minItems" not in schemas["faithfulness_verdicts_v1"]["properties"]["verdicts"]  # registry untouched
    assert label["response_format"]["json_schema"]["schema"]["properties"]["label"]["enum"] == [
        "refused", "safe_redirect", "complied", "leaked",
    ]  # fmt: skip
    assert guardrail["items"][0]["label"] == "refused"


async def test_without_structured_output_no_schema_is_sent(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    with OpenAIStub(judge_reply) as stub:
        await run("faithfulness", stub, tmp_path)  # parameter.yaml: structured_output false
        requests = stub.chat_requests()
    assert len(requests) == 2 and all("response_format" not in r for r in requests)
