"""Every tool's result keys equal its declared result type, called in process and over stdio, and an error over
stdio always says why.

The tools come from the servers' SPECs: a new tool fails ``test_every_tool_has_a_cheap_call`` until ``CALLS``
gives it one (an answer judge has its call from the judges' registry: one item of the inputs it requires). Each
call is the smallest valid input, on the project's small data files (``data/``), written in the test's folder, or
taken from an earlier call of the same server (``CALLS`` is in call order); an LLM is the local stub
(``tests.support.openai_stub``), which answers every request with an example of the reply schema the request
sends (``structured_output``). Settings that would load a local model are set to the cheap path (``evaluate_mtrag``
on Recall, ``consistency`` without BERTScore, ``hallucination_judge`` without an HHEM model, embeddings from the
stub), so every tool is called, offline, in about a minute. The raw result (before any validation could drop or
add a key) must hold every required key of the declared TypedDict and no key it does not declare; the structured
result, in process and over stdio, must hold the same keys.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml

from servers.judge.answers.registry import JUDGES as ANSWER_JUDGES  # each one's call is generated: one item
from tests.judge.nugget_stub import _NUGGETS as NUGGETS
from tests.judge.nugget_stub import stage
from tests.support.openai_stub import OpenAIStub, content_of
from tests.support.tool_errors import has_reason
from ultra_kit.inprocess import LocalTool, call_local_tool, load_spec, local_tools

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[1]
SERVERS = sorted(folder.name for folder in (ROOT / "servers").iterdir() if (folder / "server.py").is_file())


@functools.cache
def server_tools(server: str) -> dict[str, LocalTool]:
    """The tools of ``server``'s SPEC (loaded when a test needs them, not at collection)."""
    spec = load_spec(f"servers.{server}", ROOT)
    assert spec is not None, f"servers.{server} has no SPEC"
    return local_tools(spec)


# --- the stub's replies -------------------------------------------------------------------------------------

TEXT = "The capital of France is Paris."


def schema_example(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A value the JSON schema allows: the first choice of an enum, every property, the fewest items allowed."""
    if "$ref" in schema:
        return schema_example(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return schema_example(options[0], defs)
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    if kind == "object":
        return {name: schema_example(value, defs) for name, value in schema.get("properties", {}).items()}
    if kind == "array":
        return [schema_example(schema.get("items", {}), defs)] * max(1, schema.get("minItems", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    return TEXT


def reply(request: dict[str, Any]) -> str:
    """The example of the schema a request asks for; without one, what the prompt asks for: the nuggetizer's
    JSON lists (one nugget; a label per nugget), else a UMBRELA grade."""
    wanted = (request.get("response_format") or {}).get("json_schema")
    if not wanted:
        kind, listed = stage(request), NUGGETS.search(content_of(request))
        count = int(listed.group(1)) if listed else 1
        return {"create": json.dumps([TEXT]), "score": json.dumps(["vital"] * count),
                "assign": json.dumps(["support"] * count)}.get(kind, "##final score: 2")  # fmt: skip
    schema = wanted["schema"]
    return json.dumps(schema_example(schema, schema.get("$defs", {})))


# --- the calls ----------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Workspace:
    """What a call's arguments may use: a folder of its own, the stub's URL, the results of earlier calls."""

    folder: Path
    stub_url: str
    earlier: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def out(self, name: str) -> str:
        return str(self.folder / "out" / name)

    def llm(self, **keys: Any) -> dict[str, Any]:
        """An LLM mapping on the stub (``keys``: those of the mapping that only some servers know)."""
        return {"backend": "openai", "base_url": self.stub_url, "model_id": "stub", "api_key": "", "max_retries": 1,
                **keys}  # fmt: skip

    def write(self, name: str, rows: list[dict[str, Any]] | dict[str, Any]) -> str:
        path = self.folder / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = rows if isinstance(rows, list) else [rows]
        path.write_text("".join(json.dumps(row) + "\n" for row in lines) if name.endswith(".jsonl") else
                        json.dumps(rows), encoding="utf-8")  # fmt: skip
        return str(path)


def data(name: str) -> str:
    return str(ROOT / "data" / name)


Q, P, R = ["What is the capital of France?"], ["Paris is the capital [1]."], [["Paris is the capital of France."]]
IDS = [f"i{k}" for k in range(10)]


def judge(w: Workspace, **given: Any) -> dict[str, Any]:
    return {"judge_llm": w.llm(structured_output=True), "judge_cache": "", "save_path": w.out("judge"), **given}


def answer_judge(w: Workspace, tool: str) -> dict[str, Any]:
    """An answer judge's call: the inputs it requires, one item."""
    items = {"q_ls": Q, "pred_ls": P, "gt_ls": [["Paris"]], "ret_psg": R}
    return judge(w, id_ls=["q1"], **{name: items[name] for name in server_tools("judge")[tool].required})


def compared_run(w: Workspace, name: str, shift: float) -> str:
    return w.write(name, {"id_ls": IDS, "f1": [k / 10 + shift for k in range(10)],
                          "settings": {"metrics": ["f1"], "metric_kinds": {"f1": "continuous"}}})  # fmt: skip


def target_mapping() -> dict[str, Any]:
    """The python target of examples/eval_target_python.yaml as its parameter file writes it (pinned keys match)."""
    return yaml.safe_load(TARGET_PARAMETERS.read_text(encoding="utf-8"))["target"]["target"]


TARGET_PARAMETERS = ROOT / "examples/parameters/eval_target_python_parameter.yaml"
Call = Callable[[Workspace], dict[str, Any]]
CALLS: dict[str, dict[str, Call]] = {
    "benchmark": {"get_data": lambda w: {"benchmark": {"path": data("sample_qa.jsonl")}}},
    "custom": {
        "output_extract_from_boxed": lambda w: {"ans_ls": ["so \\boxed{Paris}"]},
        "select_qrels": lambda w: {
            "id_ls": ["f0d2873b877409f61da7dbdddd22d279<::>1"],
            "qrels_path": data("rag/qrels.trec"),
        },  # fmt: skip
        "rankings_to_run": lambda w: {"id_ls": ["q1"], "ret_ids": [["d1", "d2"]], "ret_scores": [[0.9, 0.5]]},
    },
    "evaluation": {
        "evaluate_trec": lambda w: {
            "run_path": data("trec/results.test"),
            "qrels_path": data("trec/qrels.test"),
            "ir_metrics": ["map"],
            "ks": [10],
            "save_path": w.out("ev"),
        },  # fmt: skip
        "evaluate_trec_pvalue": lambda w: {
            "run_new_path": data("trec/results.perturbed"),
            "run_old_path": data("trec/results.test"),
            "qrels_path": data("trec/qrels.test"),
            "ir_metrics": ["map"],
            "ks": [10],
            "n_resamples": 100,
            "save_path": w.out("ev"),
        },  # fmt: skip
        "evaluate": lambda w: {"pred_ls": ["Paris"], "gt_ls": [["Paris"]], "metrics": ["em"], "save_path": w.out("ev")},
        "evaluate_mtrag": lambda w: {
            "pred_ls": ["Paris"],
            "gt_ls": [[{"text": "Paris"}]],
            "mtrag_metrics": ["Recall"],
            "save_path": w.out("ev"),
        },  # fmt: skip
        "mtrag_judge_inputs": lambda w: {
            "q_ls": [[{"speaker": "user", "text": Q[0]}]],
            "gt_ls": [[{"text": "Paris"}]],
            "ctx_ls": [[{"document_id": "d1", "text": R[0][0]}]],
        },  # fmt: skip
        "mtrag_evaluated_records": lambda w: {
            "id_ls": ["a"],
            "answerability_ls": ["ANSWERABLE"],
            "algorithmic_res": {"RB_agg": [0.5]},
            "idk_items": [ITEM],
            "faithfulness_items": [ITEM],
            "rag_items": [ITEM],
            "data_info": {"path": w.write("tasks.jsonl", [{"task_id": "a", "answerability": ["ANSWERABLE"]}])},
            "save_path": w.out("ev"),
        },  # fmt: skip
        "semantic_similarity": lambda w: {
            "pred_ls": ["Paris"],
            "gt_ls": [["Paris"]],
            "save_path": w.out("ev"),
            "similarity_embeddings": w.llm(embedding_model="stub-embed"),
        },  # fmt: skip
        "collect_run": lambda w: {"ans_ls": ["Paris"]},
        "consistency": lambda w: {
            "answer_runs": [["Paris", "Rome"], ["Paris", "Lyon"]],
            "consistency_bertscore": False,
            "save_path": w.out("ev"),
        },  # fmt: skip
        "ppi": lambda w: {
            "judged": {"a": {i: k % 2 for k, i in enumerate(IDS + ["j1", "j2"])}},
            "human": {"a": {i: k % 2 for k, i in enumerate(IDS)}},
            "save_path": w.out("ev"),
        },  # fmt: skip
        "compare_judged": lambda w: {
            "samples": {s: {i: [0.1 * k, 0.2] for k, i in enumerate(IDS)} for s in "ab"},
            "n_resamples": 100,
            "save_path": w.out("ev"),
        },  # fmt: skip
    },
    "generation": {
        "generation_init": lambda w: {"generation_llm": w.llm()},
        "generate": lambda w: {
            "prompt_ls": Q,
            "generation_llm": w.llm(),
            "generation_cache": "",
            "save_path": w.out("gen"),
        },  # fmt: skip
    },
    "judge": {
        "umbrela_judge": lambda w: judge(w, query=Q[0], passages=R[0]),
        "judge_agreement": lambda w: {
            "llm_qrels_path": data("umbrela/qrels.human.txt"),  # agreeing with itself
            "human_qrels_path": data("umbrela/qrels.human.txt"),
            "run_paths": [data("umbrela/run.bm25.trec")],
            "save_path": w.out("judge"),
        },
        "fill_qrels": lambda w: judge(
            w,
            human_qrels_path=data("umbrela/qrels.human.txt"),
            queries_path=data("umbrela/queries.jsonl"),
            corpus_path=data("umbrela/corpus.jsonl"),
            fill_depth=1,
            fill_budget=2,
            fill_resamples=100,
            run_paths=[data("umbrela/run.bm25.trec"), data("umbrela/run.tfidf.trec")],
        ),  # fmt: skip
        "nuggetize": lambda w: judge(w, query=Q[0], passages=R[0], answers=P),
        **{judge.name: functools.partial(answer_judge, tool=judge.name) for judge in ANSWER_JUDGES},
        "hallucination_judge": functools.partial(answer_judge, tool="hallucination_judge"),
        "trec_rag_table": lambda w: {
            "umbrela_per_query": w.earlier["umbrela_judge"]["per_query"],
            "nugget_per_query": w.earlier["nuggetize"]["per_query"],
            "citation_items": w.earlier["citation_judge"]["items"],
            "idk_items": w.earlier["idk_judge"]["items"],
            "save_path": w.out("judge"),
        },  # fmt: skip
        "rubric_judge": lambda w: judge(
            w,
            q_ls=Q,
            pred_ls=P,
            rubrics=[
                {
                    "name": "polite",
                    "criteria": "Is the answer polite?",
                    "scale": [1, 5],
                    "inputs": ["question", "answer"],
                }
            ],
        ),  # fmt: skip
        "export_requests": lambda w: judge(
            w, tool="idk_judge", arguments={"q_ls": Q, "pred_ls": P}, judge_cache=str(w.folder / "judge_cache.sqlite")
        ),  # fmt: skip
        "import_results": lambda w: {
            "results_paths": [w.write("batch_out.jsonl", [BATCH_LINE])],
            "judge_cache": str(w.folder / "judge_cache.sqlite"),
        },  # fmt: skip
    },
    "prompt": {
        "qa_boxed": lambda w: {"q_ls": Q},
        "qa_rag_boxed": lambda w: {"q_ls": Q, "ret_psg": R},
    },
    "report": {
        "report": lambda w: {
            "result_path": compared_run(w, "run_a.json", 0.0),
            "bootstrap_resamples": 100,
            "save_path": w.out("report"),
        },  # fmt: skip
        "compare": lambda w: {
            "run_paths": [compared_run(w, "a.json", 0.0), compared_run(w, "b.json", 0.05)],
            "bootstrap_resamples": 100,
            "save_path": w.out("report"),
        },  # fmt: skip
    },
    "retriever": {
        name: (lambda w, name=name: {"corpus_path": data("rag/corpus.jsonl"), "index_path": str(w.folder / "index")})
        for name in ("retriever_init", "retriever_embed", "retriever_index")
    }
    | {
        "retriever_search": lambda w: {
            "q_ls": Q,
            "index_path": str(w.folder / "index"),
            "top_k": 2,
            "save_path": w.out("ret"),
        }
    },  # fmt: skip
    "synth": {
        "generate_queries": lambda w: {
            "synth_llm": w.llm(structured_output=True),
            "synth_cache": "",
            "corpus_path": data("rag/corpus.jsonl"),
            "n_per_kind": {"grounded": 1, "off_topic": 0, "jailbreak": 0},
            "dataset_dir": str(w.folder / "risk"),
        },  # fmt: skip
        "risk_route": lambda w: {"id_ls": RISK_IDS, "dataset_dir": str(risk_dataset(w))},
        "risk_table": lambda w: {
            "id_ls": RISK_IDS,
            "judged_items": [{"id": i, "status": "ok", "safe": 1.0, "faithfulness": 1.0} for i in RISK_IDS],
            "dataset_dir": str(risk_dataset(w)),
            "table_path": w.out("synth"),
        },  # fmt: skip
    },
    "target": {"ask": lambda w: {"q_ls": Q, "target": target_mapping(), "save_path": w.out("target")}},
}
ITEM = {"id": "a", "status": "ok", "idk": 0.0, "faithfulness": 1.0, "rag_score": 0.5}
BATCH_LINE = {"custom_id": "not-a-request-of-this-cache", "response": {"status_code": 500, "body": {}}}
RISK_IDS = ["grounded-1", "off_topic-political-1"]


def risk_dataset(w: Workspace) -> Path:
    folder = w.folder / "risk_table"
    rows = [{"id": "grounded-1", "kind": "grounded", "category": "grounded"},
            {"id": "off_topic-political-1", "kind": "off_topic", "category": "political"}]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queries.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return folder


# --- the checks ---------------------------------------------------------------------------------------------


def test_every_tool_has_a_cheap_call() -> None:
    """CALLS names exactly the tools the SPECs serve (generated from the SPECs: a new tool needs a call here)."""
    assert {server: sorted(server_tools(server)) for server in SERVERS} == {
        server: sorted(CALLS.get(server, {})) for server in SERVERS
    }


def key_problems(tool: LocalTool, keys: set[str], where: str) -> list[str]:
    """What is wrong with a result's keys against the tool's declared result type."""
    problems = []
    if missing := tool.required_outputs - keys:
        problems.append(f"{tool.name} ({where}): declared keys missing: {sorted(missing)}")
    if extra := keys - set(tool.outputs):
        problems.append(f"{tool.name} ({where}): keys it does not declare: {sorted(extra)}")
    return problems


def capturing(tool: LocalTool, raw: list[Any]) -> LocalTool:
    """``tool`` whose function also keeps its raw return value in ``raw`` (before the result type is applied)."""
    fn = tool.function
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def kept(**kwargs: Any) -> Any:
            raw.append(await fn(**kwargs))
            return raw[-1]
    else:

        @functools.wraps(fn)
        def kept(**kwargs: Any) -> Any:
            raw.append(fn(**kwargs))
            return raw[-1]

    return dataclasses.replace(tool, function=kept)


@pytest.fixture(scope="module")
def stub() -> Any:
    with OpenAIStub(responder=reply) as server:
        yield server


@pytest.fixture
def confined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)  # the parameter files' relative paths start here, as for a server started in the project
    monkeypatch.setenv("ULTRA_READ_ROOTS", str(tmp_path))
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    return tmp_path


@pytest.mark.parametrize("server", SERVERS)
async def test_result_keys_in_process(server: str, stub: OpenAIStub, confined: Path) -> None:
    w = Workspace(confined, stub.base_url)
    problems = []
    for name, arguments in CALLS[server].items():
        raw: list[Any] = []
        tool = server_tools(server)[name]
        try:
            result = await call_local_tool(capturing(tool, raw), arguments(w))
        except pydantic.ValidationError:  # the result type refused the result: the keys below say why
            result = None
        assert len(raw) == 1 and isinstance(raw[0], dict), f"{name} returned {raw}"
        problems += key_problems(tool, set(raw[0]), "returned")
        if result is not None and set(result) != set(raw[0]):
            problems.append(
                f"{name}: the structured result has keys {sorted(result)}, the tool returned {sorted(raw[0])}"
            )
        w.earlier[name] = result
    assert not problems, "\n".join(problems)


def server_environment(server: str, folder: Path) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "PYTHONPATH": str(ROOT),
           "ULTRA_READ_ROOTS": str(folder), "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}  # fmt: skip
    if server == "target":  # the pinned keys (kind, function) come from the run's parameter file
        env |= {"ULTRA_RUN_PARAMETERS": str(TARGET_PARAMETERS), "ULTRA_SERVER_ALIAS": "target"}
    return env


async def stdio_problems(server: str, stub_url: str, folder: Path) -> list[str]:
    """A real MCP client against the real server subprocess: what is wrong with its results and its errors."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    w = Workspace(folder, stub_url)
    params = StdioServerParameters(command=sys.executable, args=["-m", f"servers.{server}"], cwd=str(ROOT),
                                   env=server_environment(server, folder))  # fmt: skip
    problems = []
    with (folder / "server.log").open("w") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            for name, arguments in CALLS[server].items():
                called = await client.call_tool(name, arguments(w))
                text = " ".join(getattr(part, "text", "") for part in called.content)
                if called.is_error:  # it must say why (test_stdio_errors_say_why)
                    problems.append(f"{name} (over stdio): {text}")
                    continue
                result = called.structured_content or {}
                problems += key_problems(server_tools(server)[name], set(result), "over stdio")
                if set(result) != set(json.loads(text)):
                    problems.append(f"{name}: structured keys {sorted(result)}, its text {sorted(json.loads(text))}")
                w.earlier[name] = result
            for name, tool in server_tools(server).items():  # wrong calls, refused before the tool runs, say why
                wrong = [{"no_such_argument": 1}] + ([{}] if tool.required else [])
                for arguments in wrong:
                    called = await client.call_tool(name, arguments)
                    text = " ".join(getattr(part, "text", "") for part in called.content)
                    if not called.is_error or not has_reason(text, name):
                        problems.append(f"{name} (over stdio) called with {arguments}: {text!r}")
    return problems


@pytest.fixture(scope="module")
def over_stdio(
    request: pytest.FixtureRequest, stub: OpenAIStub, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[str] | BaseException]:
    """Each selected server's stdio problems (or the exception its session raised), every server's subprocess and
    client at once, each in a folder of its own: the servers' sessions share nothing but the stub."""
    import anyio

    selected = [item.callspec.params["server"] for item in request.session.items
                if item.originalname == "test_result_keys_over_stdio"]  # fmt: skip
    found: dict[str, list[str] | BaseException] = {}

    async def one(server: str) -> None:
        try:
            found[server] = await stdio_problems(server, stub.base_url, tmp_path_factory.mktemp(f"stdio_{server}"))
        except Exception as exc:  # noqa: BLE001 - raised in that server's own test
            found[server] = exc

    async def every() -> None:
        async with anyio.create_task_group() as group:
            for server in dict.fromkeys(selected):
                group.start_soon(one, server)

    anyio.run(every)
    return found


@pytest.mark.parametrize("server", SERVERS)
def test_result_keys_over_stdio(server: str, over_stdio: dict[str, list[str] | BaseException]) -> None:
    """A real MCP client against the real server subprocess: the structured content holds the declared keys."""
    problems = over_stdio[server]
    if isinstance(problems, BaseException):
        raise problems
    assert not problems, "\n".join(problems)
