"""The answer-judge registry: one declaration per judge makes its tool, its schema and its docs row."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import pytest
from mcp import Client

from servers.judge.answers import judges as judge_modules
from servers.judge.answers.declare import SCALES, AnswerJudge, declared
from servers.judge.answers.judges.basic import IDK, judge_idk
from servers.judge.answers.registry import JUDGES, registry_markdown
from servers.judge.answers.run import items_for, run_answer_judge
from servers.judge.common.prompting import PROMPT_DIR
from servers.judge.server import SPEC
from servers.judge.tools.answers import FAILING, answer_tool
from servers.judge.tools.answers import SETTINGS as TOOL_SETTINGS
from servers.judge.tools.answers import TOOLS as ANSWER_TOOLS
from tests.judge.conftest import ROOT, declared_reply, llm_settings
from tests.support.openai_stub import OpenAIStub
from ultra_base.registry import Registry, RegistryError
from ultra_kit.inprocess import local_tools
from ultra_kit.settings import defaults

pytestmark = pytest.mark.anyio

RESULT_FIELDS = {"result_path", "aggregate", "items", "counts", "failed", "warnings", "usage", "prompt", "reliability"}
SETTINGS = list(TOOL_SETTINGS)  # judge_llm, judge_cache, save_path, ... as the tools declare them


def test_declarations_are_complete_and_unique() -> None:
    names = [j.name for j in JUDGES]
    assert names and len(set(names)) == len(names) and len({j.kind for j in JUDGES}) == len(JUDGES)
    # every @answer_judge of answers/judges/ is collected, module by module in name order, in writing order
    modules = sorted(m.name for m in pkgutil.iter_modules(judge_modules.__path__))
    written = [
        declared(value).name
        for name in modules
        for value in vars(importlib.import_module(f"{judge_modules.__name__}.{name}")).values()
        if declared(value) is not None
    ]
    assert names == written
    assert [tool.__name__ for tool in ANSWER_TOOLS] == names  # one tool per declaration, nothing else
    cards = (ROOT / "docs" / "tools" / "judge.md").read_text()
    for judge in JUDGES:
        assert judge.metrics and judge.requests and judge.summary
        assert f"<!-- generated: tool judge.{judge.name} -->" in cards, f"docs/tools/judge.md: add a ## {judge.name}"
        for name in judge.prompts:
            assert (PROMPT_DIR / f"{name}.txt").is_file(), (judge.name, name)
    with pytest.raises(RegistryError, match="field .inputs. must start with q_ls"):
        dataclasses.replace(JUDGES[0], inputs=("pred_ls", "q_ls"))


async def test_every_json_judge_reads_replies_made_from_its_declaration(tmp_path) -> None:
    """The stub answers each request with the example of the reply its prompt declares (structured output
    names the prompt); every judge whose replies all have a schema comes out ok."""
    json_judges = [j for j in JUDGES if j.replies and all(r.schema is not None for r in j.replies.values())]
    assert json_judges
    lists = {"q_ls": ["Who decides?"], "pred_ls": ["The clerk decides [1]."], "gt_ls": ["The clerk."],
             "ret_psg": [["The clerk decides on fee waivers."]]}  # fmt: skip
    for judge in json_judges:
        with OpenAIStub(responder=declared_reply(judge)) as stub:
            llm = llm_settings(stub, structured_output=True, max_retries=0)
            result = await run_answer_judge(
                judge, items_for(judge, lists, None), judge_llm=llm, judge_cache="", save_path=str(tmp_path),
                max_failed_fraction=0.0, prompt_file={}, language="en",
            )  # fmt: skip
        assert result["counts"] == {"items": 1, "ok": 1}, (judge.name, result["items"])
        assert all(result["aggregate"][f"num_{metric}"] == 1 for metric in judge.metrics), judge.name


def test_generated_signatures() -> None:
    for judge, tool in zip(JUDGES, ANSWER_TOOLS, strict=True):
        signature = inspect.signature(tool)
        assert tool.__name__ == judge.name and tool.__doc__ == judge.description + FAILING
        assert list(signature.parameters) == [*judge.inputs, "id_ls", *SETTINGS, "ctx"]  # ctx: MCP progress
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in signature.parameters.values())
        assert signature.parameters["ctx"].default is None  # injected by the MCP server; None in process
        no_default = [n for n, p in signature.parameters.items() if p.default is inspect.Parameter.empty]
        assert no_default == [*judge.inputs, *SETTINGS]  # the settings' defaults come from parameter.yaml only
        assert inspect.iscoroutinefunction(tool)


async def test_mcp_listing_and_in_process_tools_agree_with_the_declarations() -> None:
    async with Client(SPEC.create_app()) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    local = local_tools(SPEC)
    judge_llm = defaults("judge")["judge_llm"]
    for judge in JUDGES:
        tool = listed[judge.name]
        properties = tool.input_schema["properties"]
        assert list(properties) == [*judge.inputs, "id_ls", *SETTINGS]
        assert tool.input_schema["required"] == list(judge.inputs)
        assert properties["judge_llm"]["default"] == judge_llm
        assert tool.description == judge.description + FAILING
        assert properties["max_failed_fraction"]["default"] == defaults("judge")["max_failed_fraction"] == 0.1
        assert set(tool.output_schema["properties"]) == RESULT_FIELDS
        assert tool.annotations.open_world_hint and tool.annotations.idempotent_hint
        assert local[judge.name].parameters == list(properties)
        assert local[judge.name].required == set(judge.inputs)
        assert local[judge.name].description == judge.description + FAILING


def test_registry_markdown_has_a_row_per_judge() -> None:
    table = registry_markdown().splitlines()
    assert table[0].startswith("| tool | inputs | metrics | prompt files | requests per item |")
    assert len(table) == 2 + len(JUDGES)
    for judge, row in zip(JUDGES, table[2:], strict=True):
        assert row.startswith(f"| `{judge.name}` |") and row.count(" | ") == 5
        assert all(f"`prompts/{name}.txt`" in row for name in judge.prompts)
    assert "`faithfulness_statements_v1`" not in registry_markdown()  # prompt names are shown as files


async def test_a_new_declaration_is_a_working_tool(tmp_path) -> None:
    """A judge declared outside JUDGES (here: IDK under another name) works as a tool as it is."""
    declared = AnswerJudge(
        name="refusal_judge",
        inputs=("q_ls", "pred_ls"),
        metrics=("idk",),
        judge=judge_idk,
        requests="1",
        description="Refusals only.",
        replies={"idk_v1": IDK},
    )
    tool = answer_tool(declared)
    with OpenAIStub(responder=lambda request: json.dumps({"attempted": "no", "idk": "yes"})) as stub:
        result = await tool(
            q_ls=["q"], pred_ls=["I don't know"], judge_llm=llm_settings(stub), judge_cache="", save_path=str(tmp_path),
            max_failed_fraction=0.1, prompt_file={}, language="en", recorded_judgments="",
        )  # fmt: skip
    assert result["aggregate"]["idk"] == 1.0 and list(result["aggregate"])[:2] == ["idk", "num_idk"]
    assert json.loads(Path(result["result_path"]).read_text())["tool"] == "refusal_judge"
    with pytest.raises(TypeError, match="judge_llm"):
        await tool(q_ls=["q"], pred_ls=["x"], judge_cache="", save_path=str(tmp_path), max_failed_fraction=0.1,
                   prompt_file={})  # fmt: skip


async def test_in_process_and_mcp_calls_give_the_same_result(tmp_path) -> None:
    from ultra_kit.inprocess import call_local_tool

    reply = json.dumps({"attempted": "yes", "idk": "partial"})
    with OpenAIStub(responder=lambda request: reply) as stub:
        arguments = {"q_ls": ["a", "b"], "pred_ls": ["x", "y"], "judge_llm": llm_settings(stub), "judge_cache": ""}
        local = await call_local_tool(local_tools(SPEC)["idk_judge"], {**arguments, "save_path": str(tmp_path / "l")})
        async with Client(SPEC.create_app()) as client:
            remote = await client.call_tool("idk_judge", {**arguments, "save_path": str(tmp_path / "r")})
    assert not remote.is_error, remote.content
    remote_result = dict(remote.structured_content)
    assert local.pop("result_path").startswith(str(tmp_path / "l"))
    assert remote_result.pop("result_path").startswith(str(tmp_path / "r"))
    assert local == remote_result and local["aggregate"]["idk"] == 0.5


def test_a_metric_is_charted_and_combined_by_its_one_scale() -> None:
    """``scales`` is the one declaration: a metric's level (how a jury combines it) and its kind (how the
    report charts it) both come from its scale (``SCALES``); a metric not named is on the interval scale."""
    for judge in JUDGES:
        for metric in judge.metrics:
            level, kind = SCALES[judge.scales.get(metric, "interval")]
            assert (judge.levels[metric], judge.metric_kinds[metric]) == (level, kind), (judge.name, metric)
    assert SCALES["probability"] == ("nominal", "continuous")  # a 0 / 1 label charted as a probability
    with pytest.raises(RegistryError, match=r"answer judge 'idk_judge': field 'scales' is 'ordnial' for 'idk'"):
        dataclasses.replace(next(j for j in JUDGES if j.name == "idk_judge"), scales={"idk": "ordnial"})
    with pytest.raises(RegistryError, match=r"answer judge 'idk_judge': field 'name' is declared twice"):
        Registry("answer judge", [*JUDGES, next(j for j in JUDGES if j.name == "idk_judge")])
