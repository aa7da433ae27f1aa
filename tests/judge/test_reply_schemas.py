"""Judges' reply schemas: declared in the registry, sent as response_format with structured output (and only
then), sized to the statements (or claims) for verdicts, and each one a schema OpenAI's strict mode accepts."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from servers.judge.answers.registry import JUDGES, judge_of_kind
from servers.judge.answers.run import build_items, run_answer_judge
from servers.judge.common.asking import last_json
from servers.judge.common.prompting import load_prompt
from tests.judge.conftest import llm_settings
from tests.support.openai_stub import OpenAIStub, content_of

pytestmark = pytest.mark.anyio


def strict_objects(schema: dict) -> list[dict]:
    """Every object schema inside ``schema``."""
    found = [schema] if schema.get("type") == "object" else []
    for value in schema.get("properties", {}).values():
        found += strict_objects(value)
    if isinstance(schema.get("items"), dict):
        found += strict_objects(schema["items"])
    return found


def test_every_declared_schema_is_valid_and_strict() -> None:
    for judge in JUDGES:  # a reply without a schema (a '##final score: N' line) brings its reader and repair text
        for name, reply in judge.replies.items():
            if reply.schema is None:
                assert reply.read_with is not None and reply.repair_with, (judge.name, name)
                assert "JSON" not in reply.repair(), (judge.name, name)
    assert judge_of_kind("rag").reply_schemas == {}
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
        save_path=str(tmp_path / "judge"), max_failed_fraction=0.0, prompt_file={}, language="en",
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


def between(text: str, start: str, end: str) -> str:
    return re.search(rf"{re.escape(start)}(.*?){re.escape(end)}", text, re.DOTALL).group(1)


def citation_and_claims_reply(request: dict) -> str:
    """Citations: full when the passage holds the sentence's first word, else partial. Claims: the text split at ';'.
    Claim verdicts, as the schema asks ({"verdicts": [...]}): entailment when the premise holds the claim."""
    text = content_of(request)
    if '{"support"' in text:
        first = between(text, "\n\nSentence: ", "\n\nPassage").split()[0]
        return json.dumps({"support": "full" if first in between(text, "\n\nPassage: ", "\n\nYour") else "partial"})
    if '{"claims"' in text:
        return json.dumps({"claims": between(text, "\n\nText: ", "\n\nYour JSON").split(";")})
    premise = between(text, "\n\nPremise: ", "\n\nClaims (")
    claims = [line.split(". ", 1)[1] for line in between(text, "):\n", "\n\nVerdicts").splitlines()]
    return json.dumps({"verdicts": ["entailment" if c.strip() in premise else "neutral" for c in claims]})


async def run_two(stub: OpenAIStub, tmp_path, **llm) -> tuple[dict, dict]:
    """citation_judge on two cited sentences, then factual_correctness on two answer claims and one reference claim."""
    settings = {"judge_llm": llm_settings(stub, max_retries=0, **llm), "judge_cache": "",
                "save_path": str(tmp_path / "judge"), "max_failed_fraction": 0.0, "prompt_file": {},
                "language": "en"}  # fmt: skip
    cited = build_items(["Who decides?"], ["Clerks decide [1]. Fees are waived [2]."],
                        ret_psg=[["Clerks decide on waivers.", "A waiver is possible."]])  # fmt: skip
    citation = await run_answer_judge("citation", cited, **settings)
    golden = build_items(["Where is Paris?"], ["Paris is in France; Paris is in Spain"], gt_ls=["Paris is in France"],
                         need_reference=True)  # fmt: skip
    factual = await run_answer_judge("factual_correctness", golden, **settings)
    return citation, factual


async def test_citation_and_factual_correctness_send_their_schemas(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    with OpenAIStub(citation_and_claims_reply) as stub:
        citation, factual = await run_two(stub, tmp_path, structured_output=True)
        requests = stub.chat_requests()
    (cited,), (golden,) = citation["items"], factual["items"]
    assert (cited["citation_precision"], cited["citation_recall"]) == (0.75, 0.75)  # full 1, partial 0.5
    assert (golden["factual_precision"], golden["factual_recall"]) == (0.5, 1.0)  # the verdict object's list read
    formats = {}
    for request in requests:
        sent = request["response_format"]
        assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
        formats.setdefault(sent["json_schema"]["name"], []).append(sent["json_schema"]["schema"])
    assert sorted((name, len(sent)) for name, sent in formats.items()) == [
        ("citation_v1", 2), ("claim_verdicts_v1", 2), ("claims_v1", 2),
    ]  # fmt: skip
    citation_schemas, factual_schemas = judge_of_kind("citation").reply_schemas, judge_of_kind("factual_correctness")
    assert formats["citation_v1"] == [citation_schemas["citation_v1"]] * 2
    assert citation_schemas["citation_v1"]["properties"]["support"]["enum"] == ["full", "partial", "none"]
    assert formats["claims_v1"] == [factual_schemas.reply_schemas["claims_v1"]] * 2
    verdict_lists = [schema["properties"]["verdicts"] for schema in formats["claim_verdicts_v1"]]
    assert sorted((v["minItems"], v["maxItems"]) for v in verdict_lists) == [(1, 1), (2, 2)]  # one per claim
    assert all(v["items"]["enum"] == ["entailment", "contradiction", "neutral"] for v in verdict_lists)
    assert "minItems" not in factual_schemas.reply_schemas["claim_verdicts_v1"]["properties"]["verdicts"]


async def test_citation_and_factual_correctness_send_no_schema_without_structured_output(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    with OpenAIStub(citation_and_claims_reply) as stub:
        citation, factual = await run_two(stub, tmp_path)  # parameter.yaml: structured_output false
        requests = stub.chat_requests()
    assert citation["items"][0]["citation_f1"] == 0.75 and factual["items"][0]["factual_recall"] == 1.0
    assert len(requests) == 6 and all("response_format" not in r for r in requests)


def test_each_prompt_shows_the_reply_it_declares() -> None:
    """The prompt's own example of the reply reads under the declared ``Reply`` (a JSON object with exactly
    its properties), and a prompt asking for a list of labels names each of them: the two cannot drift apart."""
    checked = 0
    for judge in JUDGES:
        for name, reply in judge.replies.items():
            if reply.schema is None:
                continue
            text = "\n".join(body for _, body in load_prompt(name).sections)
            if reply.listed:
                (wanted,) = reply.schema["properties"].values()
                shown = [
                    json.dumps(label) if isinstance(label, str) else str(label) for label in wanted["items"]["enum"]
                ]
                assert all(label in text for label in shown), (name, shown)
            else:
                (line,) = [line for line in text.splitlines() if line.startswith("Reply with one JSON object")]
                example = last_json(line, dict)
                assert set(example) == set(reply.schema["properties"]), name
                reply.read(json.dumps(example))  # raises Unreadable if the prompt's example does not read
            checked += 1
    assert checked == sum(len(judge.reply_schemas) for judge in JUDGES)
