"""Counts that multiply a call's work are capped by the server's parameter.yaml (issue 40, majors 1 and 4; M7-M9,
M18, M19), through a real MCP stdio client, the real CLI and ``ultra run --estimate``.

Each repro of the issue took gigabytes before a request was sent; here each is refused at once, naming the value,
the cap (``caps.<name>``) and the file that sets it, and no request reaches the local stub.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import clear_error
from tests.hostile.test_keys_hosts import server_env, text_of
from tests.support.background import Finished, in_background, spare_ultra
from tests.support.mcp_probe import outcome, over_mcp
from tests.support.openai_stub import OpenAIStub
from ultra_kit.settings import CAPS_KEY, SERVERS_DIR, load_caps

SAMPLED = {"api_key": "", "temperature": 0.7}


def caps(server: str) -> dict[str, int]:
    return load_caps(SERVERS_DIR / server / "parameter.yaml")


async def call_over_mcp(tmp_path: Path, server: str, tool: str, arguments: dict) -> Any:
    """Start ``python -m servers.<server>`` over stdio (reading and writing in tmp_path), call ``tool``; the result."""
    env = {**server_env(tmp_path, key=False), "ULTRA_READ_ROOTS": str(tmp_path)}
    params = StdioServerParameters(command=sys.executable, args=["-m", f"servers.{server}"], cwd=str(ROOT), env=env)
    with (tmp_path / f"{server}.stderr.log").open("w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            return await client.call_tool(tool, arguments)


def refused_over_mcp(tmp_path: Path, server: str, tool: str, arguments: dict, *fragments: str) -> None:
    result = anyio.run(call_over_mcp, tmp_path, server, tool, arguments)
    refused_result(bool(result.is_error), text_of(result), *fragments)


def refused_result(is_error: bool, text: str, *fragments: str) -> None:
    assert is_error, text
    assert "Traceback" not in text and "Unable to allocate" not in text, text
    for fragment in fragments:
        assert fragment in text, text


def spare_mcp(server: str, tool: str, arguments: Callable[[Path], dict]) -> pytest.MarkDecorator:
    """The call ``refused_over_mcp`` makes, with ``arguments(folder)``, made in a spare background run by
    tests/support/mcp_probe.py (no stub server: nothing of the test's own); ``refused_in_background`` checks it."""
    return in_background(over_mcp(server, tool, arguments), spare=True)


def refused_in_background(finished: Finished, *fragments: str) -> None:
    refused_result(*outcome(finished), *fragments)


LLM = ("max_retries", "max_workers")  # of every server's LLM mapping (ultra_kit.llm_mapping.settings_for)


def test_every_cap_is_a_documented_whole_number() -> None:
    """The caps are set once, in each server's parameter.yaml, with a comment, and no tool takes them."""
    expected = {
        "judge": {"samples", "jury_members", "rubrics", "fill_resamples", "depth", "max_nuggets", "fill_depth", *LLM,
                  "top_logprobs", "hhem_batch_size", "fill_runs", "fill_measures"},
        "evaluation": {"n_resamples", "cutoffs", "measures", *LLM},
        "report": {"bootstrap_resamples"},
        "synth": {"n_per_kind", "categories", *LLM},
        "generation": {*LLM, "max_tokens", "completions"},
        "retriever": {*LLM},
        "target": {*LLM},
    }  # fmt: skip
    for server, names in expected.items():
        assert set(caps(server)) == names
        assert all(isinstance(v, int) and v >= 1 for v in caps(server).values())
        text = (SERVERS_DIR / server / "parameter.yaml").read_text()
        assert all(f"  {name}: {caps(server)[name]}" in text and "#" in text.split(f"  {name}:")[1].splitlines()[0]
                   for name in names)  # fmt: skip
        card = (ROOT / "docs" / "tools" / f"{server}.md").read_text()
        assert all(f"caps.{name}" in card for name in names), server


def test_idk_judge_samples_a_billion_over_mcp(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        llm = {**SAMPLED, "base_url": stub.base_url, "samples": 1_000_000_000}
        refused_over_mcp(tmp_path, "judge", "idk_judge",
                         {"q_ls": ["q"], "pred_ls": ["a"], "judge_llm": llm, "judge_cache": "",
                          "save_path": str(tmp_path / "j")},
                         "judge_llm.samples 1,000,000,000 is more than the cap caps.samples = "
                         f"{caps('judge')['samples']}",
                         "servers/judge/parameter.yaml")  # fmt: skip
        assert stub.request_count == 0


BILLION = json.dumps({**SAMPLED, "base_url": "http://127.0.0.1:9/v1", "samples": 1_000_000_000})


@spare_ultra(lambda tmp_path: ("call", "judge.idk_judge", 'q_ls=["q"]', 'pred_ls=["a"]', f"judge_llm={BILLION}",
                               "judge_cache=", f"save_path={tmp_path / 'j'}"))  # fmt: skip
def test_idk_judge_samples_a_billion_through_ultra_call(background_run: Finished) -> None:
    done = background_run.done
    clear_error(done, "judge_llm.samples 1,000,000,000 is more than the cap caps.samples")


def sampled_estimate(samples: str) -> pytest.MarkDecorator:
    """``ultra run examples/umbrela.yaml --estimate`` with ``samples`` in its parameter file: a spare background run."""

    def arguments(tmp_path: Path) -> tuple[str, ...]:
        text = (ROOT / "examples" / "parameters" / "umbrela_parameter.yaml").read_text()
        params = tmp_path / "params.yaml"
        params.write_text(
            text.replace(
                "    max_workers: 8\n", f"    max_workers: 8\n    temperature: 0.7\n    samples: {samples}\n", 1
            )
        )
        return ("run", "examples/umbrela.yaml", "--param", str(params), "--estimate")

    return spare_ultra(arguments, cwd=ROOT, timeout=300)


@pytest.mark.parametrize(("samples", "expected"), [pytest.param(*case, marks=sampled_estimate(case[0])) for case in [
    ("1000000000", "judge_llm.samples 1,000,000,000 is more than the cap caps.samples"),
    ("1e9", "judge_llm.samples must be a whole number, got '1e9'"),  # YAML 1.1 reads 1e9 as a string
]])  # fmt: skip
def test_umbrela_estimate_with_samples_a_billion(background_run: Finished, samples: str, expected: str) -> None:
    params, done = background_run.folder / "params.yaml", background_run.done
    clear_error(done, f"{params}:", expected)


def test_rubric_judge_samples_ten_to_the_18_over_mcp(tmp_path: Path) -> None:
    rubric = {"name": "clear", "criteria": "Is the answer clear?", "scale": [1, 5], "inputs": ["answer"]}
    with OpenAIStub() as stub:
        refused_over_mcp(tmp_path, "judge", "rubric_judge",
                         {"pred_ls": ["a"], "rubrics": [rubric], "judge_cache": "", "save_path": str(tmp_path / "j"),
                          "judge_llm": {**SAMPLED, "base_url": stub.base_url, "samples": 10**18}},
                         "judge_llm.samples 1,000,000,000,000,000,000 is more than the cap")  # fmt: skip
        assert stub.request_count == 0


MEMBERS = [{"model_id": f"m{i}", "base_url": "http://127.0.0.1:9/v1", "api_key": ""} for i in range(50)]


@spare_mcp("judge", "idk_judge", lambda tmp_path: {
    "q_ls": ["q"], "pred_ls": ["a"], "judge_cache": "", "save_path": str(tmp_path / "j"),
    "judge_llm": {"api_key": "", "base_url": "http://127.0.0.1:9/v1", "jury": MEMBERS}})  # fmt: skip
def test_a_jury_larger_than_the_cap_over_mcp(background_run: Finished) -> None:
    refused_in_background(background_run, "judge_llm.jury (its members) 50 is more than the cap caps.jury_members")


def jury_min_call(value: object) -> pytest.MarkDecorator:
    members = [{"model_id": f"m{i}", "base_url": "http://127.0.0.1:9/v1", "api_key": ""} for i in range(2)]
    llm = json.dumps({"api_key": "", "base_url": "http://127.0.0.1:9/v1", "jury": members, "jury_min": value})
    return spare_ultra(lambda tmp_path: ("call", "judge.idk_judge", 'q_ls=["q"]', 'pred_ls=["a"]', f"judge_llm={llm}",
                                         "judge_cache=", f"save_path={tmp_path / 'j'}"))  # fmt: skip


@pytest.mark.parametrize(("value", "shown"), [pytest.param(*case, marks=jury_min_call(case[0]))
                                              for case in [(1.5, "1.5"), (True, "true"), ("2", "'2'")]])  # fmt: skip
def test_jury_min_must_be_a_whole_number(background_run: Finished, value: object, shown: str) -> None:
    done = background_run.done
    clear_error(done, f"judge_llm.jury_min must be a whole number, got {shown}")


def test_5000_rubrics_in_one_file_are_refused(tmp_path: Path) -> None:
    rubric = "- {{name: r{i}, criteria: 'Is it clear', scale: [1, 5], inputs: [answer]}}\n"
    (tmp_path / "rubrics.yaml").write_text("".join(rubric.format(i=i) for i in range(5000)))
    with OpenAIStub() as stub:
        refused_over_mcp(tmp_path, "judge", "rubric_judge",
                         {"pred_ls": ["a"], "rubrics_path": str(tmp_path / "rubrics.yaml"), "judge_cache": "",
                          "save_path": str(tmp_path / "j"), "judge_llm": {"api_key": "", "base_url": stub.base_url}},
                         "rubrics.yaml", "rubrics (declarations in one call) 5,000 is more than the cap "
                         f"caps.rubrics = {caps('judge')['rubrics']}")  # fmt: skip
        assert stub.request_count == 0


def rubric_worth_call(worth: str) -> pytest.MarkDecorator:
    def arguments(tmp_path: Path) -> tuple[str, ...]:
        (tmp_path / "rubrics.yaml").write_text(
            f"- {{name: ok, criteria: 'Is it ok', scale: {{pass: {worth}, fail: 0}}, inputs: [answer]}}\n"
        )
        return ("call", "judge.rubric_judge", 'pred_ls=["a"]', f"rubrics_path={tmp_path / 'rubrics.yaml'}",
                "judge_cache=", f"save_path={tmp_path / 'j'}", 'judge_llm={"api_key": ""}')  # fmt: skip

    return spare_ultra(arguments)


@pytest.mark.parametrize("worth", [pytest.param(worth, marks=rubric_worth_call(worth)) for worth in (".nan", ".inf")])
def test_a_rubric_label_worth_nan_is_refused(background_run: Finished, worth: str) -> None:
    done = background_run.done
    clear_error(done, "rubrics.yaml:1:", "scale label 'pass' must be a non-empty label with a finite number")


def write_samples(tmp_path: Path) -> dict:
    return {s: {f"q{i}": [0.1 * (i % 3), 0.2] for i in range(20)} for s in ("a", "b")}


@pytest.mark.parametrize("n", [pytest.param(n, marks=spare_mcp("evaluation", "compare_judged", lambda tmp_path, n=n: {
    "samples": write_samples(tmp_path), "n_resamples": n, "save_path": str(tmp_path / "c.json")}))
    for n in (10_000_000, 10**12)])  # fmt: skip
def test_compare_judged_n_resamples_over_the_cap(background_run: Finished, n: int) -> None:
    refused_in_background(background_run,
                          f"n_resamples {n:,} is more than the cap caps.n_resamples = "
                          f"{caps('evaluation')['n_resamples']:,}", "servers/evaluation/parameter.yaml")  # fmt: skip


def test_a_fractional_count_is_shown_as_given(tmp_path: Path) -> None:
    """``n_resamples=100000.5`` was refused as "got a number (100000)": the value shown must be the one given."""
    done = run_ultra("call", "evaluation.compare_judged", f"samples={json.dumps(write_samples(tmp_path))}",
                     "n_resamples=100000.5", "save_path=output/c.json", cwd=tmp_path)  # fmt: skip
    clear_error(done, "`n_resamples` must be an integer, got a number (100000.5)")


def test_compare_judged_at_the_cap_stays_small(tmp_path: Path) -> None:
    """At the cap the bootstrap is drawn in chunks: the process stays far below the 3 GB the issue measured.

    The peak is the child's own (VmHWM of /proc/self/status, which starts afresh at exec); ru_maxrss would
    carry the forking pytest process's size over exec, gigabytes late in a full suite."""
    import subprocess
    import sys

    script = (
        "import anyio, json, re, sys\n"
        "from servers.evaluation.server import SPEC\n"
        "from ultra_kit.inprocess import call_local_tool, local_tools\n"
        "args = json.loads(sys.argv[1])\n"
        "anyio.run(call_local_tool, local_tools(SPEC)['compare_judged'], args)\n"
        "status = open('/proc/self/status').read()\n"
        "print(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1))\n"
    )
    arguments = {"samples": write_samples(tmp_path), "n_resamples": caps("evaluation")["n_resamples"],
                 "save_path": str(tmp_path / "c.json")}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script, json.dumps(arguments)], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"},
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) < 1_000_000  # KiB: under 1 GB


@spare_ultra(lambda tmp_path: ("call", "judge.fill_qrels", "fill_budget=true", "judge_cache=",
                               f"save_path={tmp_path / 'f'}", 'judge_llm={"api_key": "", "base_url": '
                               '"http://127.0.0.1:9/v1"}'), cwd=ROOT)  # fmt: skip
def test_fill_budget_true_is_not_one(background_run: Finished) -> None:
    done = background_run.done
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "fill_budget" in done.stderr and "integer" in done.stderr


@spare_ultra(lambda tmp_path: ("call", "judge.fill_qrels", "fill_resamples=1000000000000", "judge_cache=",
                               f"save_path={tmp_path / 'f'}", 'judge_llm={"api_key": "", "base_url": '
                               '"http://127.0.0.1:9/v1"}'),
             cwd=ROOT, env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"})  # fmt: skip
def test_fill_resamples_over_the_cap(background_run: Finished) -> None:
    done = background_run.done
    clear_error(done, "fill_resamples 1,000,000,000,000 is more than the cap caps.fill_resamples")


NO_LLM = 'judge_llm={"api_key": "", "base_url": "http://127.0.0.1:9/v1"}'  # nothing may be sent: refused first


def depth_call(tool: str, setting: str, cap: str) -> pytest.MarkDecorator:
    limit = caps("judge")[cap]
    return spare_ultra(lambda tmp_path: ("call", f"judge.{tool}", f"{setting}={limit + 1}", "judge_cache=",
                                         f"save_path={tmp_path / 'j'}", NO_LLM),
                       cwd=ROOT, env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"})  # fmt: skip


DEPTHS = [
    ("umbrela_judge", "depth", "depth"),
    ("nuggetize", "depth", "depth"),
    ("nuggetize", "max_nuggets", "max_nuggets"),
    ("fill_qrels", "fill_depth", "fill_depth"),
]


@pytest.mark.parametrize(("tool", "setting", "cap"), [pytest.param(*case, marks=depth_call(*case)) for case in DEPTHS])
def test_umbrela_depths_and_nuggets_over_the_cap(background_run: Finished, tool: str, setting: str, cap: str) -> None:
    limit = caps("judge")[cap]
    done = background_run.done
    clear_error(done, f"{setting} {limit + 1:,} is more than the cap caps.{cap} = {limit:,} of the judge server",
                "servers/judge/parameter.yaml")  # fmt: skip


def depth_value_call(value: str) -> pytest.MarkDecorator:
    return spare_ultra(lambda _: ("call", "judge.umbrela_judge", f"depth={value}", "judge_cache=", NO_LLM), cwd=ROOT)


@pytest.mark.parametrize("value", [pytest.param(v, marks=depth_value_call(v)) for v in ("true", "2.5", "0")])
def test_umbrela_depth_must_be_a_count(background_run: Finished, value: str) -> None:
    done = background_run.done
    clear_error(done, "depth")


@spare_mcp("judge", "umbrela_judge", lambda tmp_path: {
    "depth": 10**9, "judge_llm": {"api_key": "", "base_url": "http://127.0.0.1:9/v1"}, "judge_cache": "",
    "save_path": str(tmp_path / "j")})  # fmt: skip
def test_umbrela_depth_over_the_cap_over_mcp(background_run: Finished) -> None:
    refused_in_background(background_run, "depth 1,000,000,000 is more than the cap caps.depth")


LLM_TOOLS = [
    ("judge.umbrela_judge", "judge_llm", "judge_cache="),
    ("generation.generate", "generation_llm", "prompt_ls=[hi]"),
]


def llm_call(tool: str, setting: str, extra: str, key: str) -> pytest.MarkDecorator:
    mapping = f'{{"api_key": "", "base_url": "http://127.0.0.1:9/v1", "{key}": {caps(tool.split(".")[0])[key] + 1}}}'
    return spare_ultra(lambda tmp_path: ("call", tool, f"{setting}={mapping}", extra, f"save_path={tmp_path / 'x'}"),
                       cwd=ROOT, env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"})  # fmt: skip


LLM_CASES = [pytest.param(*tool, key, marks=llm_call(*tool, key), id=f"{key}-{'-'.join(tool)}")
             for key in ("max_retries", "max_workers") for tool in LLM_TOOLS]  # fmt: skip


@pytest.mark.parametrize(("tool", "setting", "extra", "key"), LLM_CASES)
def test_llm_retries_and_workers_over_the_cap(background_run: Finished, tool: str, setting: str, extra: str, key: str):
    server = tool.split(".")[0]
    limit = caps(server)[key]
    done = background_run.done
    expected = f"{setting}.{key} {limit + 1:,} is more than the cap caps.{key} = {limit:,} of the {server} server"
    clear_error(done, expected, f"servers/{server}/parameter.yaml")


@spare_mcp(
    "report",
    "compare",
    lambda tmp_path: {
        "run_paths": [str(ROOT / "tests" / "data")] * 2,
        "bootstrap_resamples": 10**12,
        "save_path": str(tmp_path / "r"),
    },
)
def test_report_bootstrap_resamples_over_the_cap(background_run: Finished) -> None:
    refused_in_background(
        background_run, "bootstrap_resamples 1,000,000,000,000 is more than the cap caps.bootstrap_resamples"
    )


@spare_mcp("evaluation", "evaluate_trec_pvalue", lambda tmp_path: {
    "n_resamples": 10**12, "save_path": str(tmp_path / "p.json")})  # fmt: skip
def test_evaluate_trec_pvalue_n_resamples_over_the_cap(background_run: Finished) -> None:
    refused_in_background(background_run, "n_resamples 1,000,000,000,000 is more than the cap caps.n_resamples")


@spare_mcp("synth", "generate_queries", lambda tmp_path: {
    "n_per_kind": {"grounded": 10**9}, "synth_llm": {"api_key": "", "base_url": "http://127.0.0.1:9/v1"},
    "synth_cache": "", "dataset_dir": str(tmp_path / "d")})  # fmt: skip
def test_n_per_kind_over_the_cap(background_run: Finished) -> None:
    refused_in_background(background_run, "n_per_kind.grounded 1,000,000,000 is more than the cap caps.n_per_kind")


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"categories": {f"c{i}": "x" for i in range(20_000)}},
         "categories (off-topic categories) 20,004 is more than the cap caps.categories"),  # with the 4 defaults
        ({"techniques": ["context_switch"] * 10_000}, "techniques names a technique more than once"),
    ],
)  # fmt: skip
def test_off_topic_categories_and_techniques_cannot_multiply_the_requests(
    tmp_path: Path, arguments: dict, expected: str
) -> None:
    """20,000 categories (and the 4 of parameter.yaml) made 20,004 requests, and a technique named 10,000 times
    as many: each is refused at once, over MCP, with no request sent."""
    with OpenAIStub() as stub:
        refused_over_mcp(tmp_path, "synth", "generate_queries",
                         {**arguments, "synth_llm": {"api_key": "", "base_url": stub.base_url}, "synth_cache": "",
                          "dataset_dir": str(tmp_path / "d")}, expected)  # fmt: skip
        assert stub.request_count == 0


@spare_mcp("evaluation", "compare_judged", lambda tmp_path: {
    "samples": write_samples(tmp_path), CAPS_KEY: {"n_resamples": 10**12}})  # fmt: skip
def test_a_caller_cannot_pass_the_caps(background_run: Finished) -> None:
    refused_in_background(background_run, "caps")
