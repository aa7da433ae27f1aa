"""The counts that multiply requests, concurrency or memory and had no cap (issue 40, "every other count that
multiplies requests or work"): ``rubric_top_logprobs``, ``hhem_batch_size``, a jury member's ``max_workers`` (and the
members' sum), the retriever's ``dense.max_workers`` and ``dense.max_retries``, the target's ``max_workers`` and
``max_retries``. Each is refused before any work starts, naming the value, the cap and the file that sets it, through
the real CLI and a real MCP stdio client; a value that is not a count (``1.5``, ``true``) is refused too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import clear_error
from tests.hostile.test_caps import caps, refused_over_mcp
from tests.support.openai_stub import OpenAIStub

DEAD = "http://127.0.0.1:9/v1"  # nothing listens: a request sent would fail, not hang
NO_LLM = {"api_key": "", "base_url": DEAD}
RUBRIC = {"name": "clear", "criteria": "Is the answer clear?", "scale": [1, 5], "inputs": ["answer"]}
OUTSIDE = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}
SUM = "judge_llm.jury's max_workers (its members' sum)"


def over(server: str, name: str) -> int:
    return caps(server)[name] + 1


def message(setting: str, value: int, server: str, name: str) -> str:
    return f"{setting} {value:,} is more than the cap caps.{name} = {caps(server)[name]:,} of the {server} server"


def jury(*workers: int) -> dict:
    members = [{"model_id": f"m{i}", "base_url": DEAD, "api_key": "", "max_workers": w} for i, w in enumerate(workers)]
    return {**NO_LLM, "jury": members}


def call(tmp_path: Path, tool: str, *arguments: str, save: bool = True):
    saved = (f"save_path={tmp_path / 'out'}",) if save else ()
    return run_ultra("call", tool, *arguments, *saved, cwd=ROOT, env=OUTSIDE)


# --- judge ---


def test_rubric_top_logprobs_over_the_cap_through_ultra_call(tmp_path: Path) -> None:
    value = over("judge", "top_logprobs")
    done = call(tmp_path, "judge.rubric_judge", 'pred_ls=["a"]', f"rubrics={json.dumps([RUBRIC])}",
                f"rubric_top_logprobs={value}", "judge_cache=", f"judge_llm={json.dumps(NO_LLM)}")  # fmt: skip
    clear_error(done, message("rubric_top_logprobs", value, "judge", "top_logprobs"), "servers/judge/parameter.yaml")


def test_rubric_top_logprobs_over_the_cap_over_mcp(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        refused_over_mcp(tmp_path, "judge", "rubric_judge",
                         {"pred_ls": ["a"], "rubrics": [RUBRIC], "rubric_top_logprobs": 10**6, "judge_cache": "",
                          "save_path": str(tmp_path / "j"), "judge_llm": {"api_key": "", "base_url": stub.base_url}},
                         message("rubric_top_logprobs", 10**6, "judge", "top_logprobs"))  # fmt: skip
        assert stub.request_count == 0


def test_hhem_batch_size_over_the_cap_through_ultra_call(tmp_path: Path) -> None:
    done = call(tmp_path, "judge.hallucination_judge", 'q_ls=["q"]', 'pred_ls=["a"]', 'ret_psg=[["p"]]',
                "hhem_batch_size=1000000000", "judge_cache=", f"judge_llm={json.dumps(NO_LLM)}")  # fmt: skip
    clear_error(done, message("hhem_batch_size", 10**9, "judge", "hhem_batch_size"), "servers/judge/parameter.yaml")


def test_hhem_batch_size_over_the_cap_over_mcp(tmp_path: Path) -> None:
    refused_over_mcp(tmp_path, "judge", "hallucination_judge",
                     {"q_ls": ["q"], "pred_ls": ["a"], "ret_psg": [["p"]], "hhem_batch_size": 10**9,
                      "judge_cache": "", "save_path": str(tmp_path / "j"), "judge_llm": NO_LLM},
                     message("hhem_batch_size", 10**9, "judge", "hhem_batch_size"))  # fmt: skip


def test_a_jury_members_max_workers_over_the_cap_through_ultra_call(tmp_path: Path) -> None:
    done = call(tmp_path, "judge.idk_judge", 'q_ls=["q"]', 'pred_ls=["a"]', "judge_cache=",
                f"judge_llm={json.dumps(jury(10**6, 1))}")  # fmt: skip
    clear_error(done, message("judge_llm.jury[0].max_workers", 10**6, "judge", "max_workers"))


def test_a_jurys_max_workers_summed_over_the_cap_over_mcp(tmp_path: Path) -> None:
    """Each member within the cap, their sum over it: together they would keep that many requests in flight."""
    each = caps("judge")["max_workers"]
    refused_over_mcp(tmp_path, "judge", "idk_judge",
                     {"q_ls": ["q"], "pred_ls": ["a"], "judge_cache": "", "save_path": str(tmp_path / "j"),
                      "judge_llm": jury(each, each)},
                     message(SUM, 2 * each, "judge", "max_workers"))  # fmt: skip


def test_a_jury_within_the_cap_is_not_refused_for_its_workers(tmp_path: Path) -> None:
    done = call(tmp_path, "judge.idk_judge", 'q_ls=["q"]', 'pred_ls=["a"]', "judge_cache=",
                f"judge_llm={json.dumps(jury(4, 4))}")  # fmt: skip
    assert "caps.max_workers" not in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_jury_over_the_cap_in_a_parameter_file_is_refused_by_ultra_build(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("servers:\n  judge: servers/judge\npipeline:\n  - judge.umbrela_judge\n")
    (tmp_path / "parameters").mkdir()
    (tmp_path / "parameters" / "p_parameter.yaml").write_text(
        "judge:\n  judge_llm:\n    jury:\n"
        + "".join(f"      - {{model_id: m{i}, base_url: '{DEAD}', max_workers: 1000}}\n" for i in range(2))
    )
    done = run_ultra("build", str(tmp_path / "p.yaml"), cwd=ROOT)
    clear_error(done, "p_parameter.yaml:", message(SUM, 2000, "judge", "max_workers"))


# --- retriever ---


@pytest.mark.parametrize("name", ["max_workers", "max_retries"])
def test_dense_retrieval_limits_over_the_cap_through_ultra_call(tmp_path: Path, name: str) -> None:
    value = over("retriever", name)
    done = call(tmp_path, "retriever.retriever_index", "backend=dense", f'dense={{"{name}": {value}}}',
                f"index_path={tmp_path / 'index'}", save=False)  # fmt: skip
    clear_error(done, message(f"dense.{name}", value, "retriever", name), "servers/retriever/parameter.yaml")
    assert not (tmp_path / "index").exists()


def test_dense_max_workers_over_the_cap_over_mcp(tmp_path: Path) -> None:
    refused_over_mcp(tmp_path, "retriever", "retriever_search",
                     {"backend": "dense", "dense": {"max_workers": 10**9}, "q_ls": ["q"],
                      "index_path": str(tmp_path / "index"), "save_path": str(tmp_path / "r")},
                     message("dense.max_workers", 10**9, "retriever", "max_workers"))  # fmt: skip


@pytest.mark.parametrize(("value", "shown"), [("1.5", "1.5"), ("true", "True")])
def test_dense_counts_must_be_whole_numbers(tmp_path: Path, value: str, shown: str) -> None:
    done = call(tmp_path, "retriever.retriever_index", "backend=dense", f'dense={{"max_workers": {value}}}',
                f"index_path={tmp_path / 'index'}", save=False)  # fmt: skip
    clear_error(done, f"dense.max_workers must be a whole number >= 1, got {shown}")


# --- target ---

TARGET = {"kind": "http", "url": "http://127.0.0.1:9/ask"}


@pytest.mark.parametrize("name", ["max_workers", "max_retries"])
def test_target_limits_over_the_cap_through_ultra_call(tmp_path: Path, name: str) -> None:
    value = over("target", name)
    done = call(tmp_path, "target.ask", 'q_ls=["q"]', f"target={json.dumps({**TARGET, name: value})}")
    clear_error(done, message(f"target.{name}", value, "target", name), "servers/target/parameter.yaml")


def test_target_max_workers_cannot_be_raised_over_mcp(tmp_path: Path) -> None:
    """Over MCP the target's runner limits come from the parameter file only (which the cap bounds in turn)."""
    refused_over_mcp(tmp_path, "target", "ask",
                     {"q_ls": ["q"], "target": {"max_workers": 10**9}, "save_path": str(tmp_path / "t")},
                     "target.max_workers may be set only in a parameter file")  # fmt: skip


def test_target_max_retries_over_the_cap_in_a_pipeline_parameter_file(tmp_path: Path) -> None:
    """What a parameter file sets is capped too: ``ultra run`` refuses it before the first question is asked."""
    (tmp_path / "params.yaml").write_text(json.dumps({"target": {"target": {**TARGET, "max_retries": 10**6},
                                                                 "save_path": str(tmp_path / "t")}}))  # fmt: skip
    (tmp_path / "p.yaml").write_text(
        "servers:\n  benchmark: servers/benchmark\n  target: servers/target\npipeline:\n"
        "  - benchmark.get_data\n  - target.ask\n"
    )
    done = run_ultra("run", str(tmp_path / "p.yaml"), "--param", str(tmp_path / "params.yaml"),
                     "--output-dir", str(tmp_path / "runs"), cwd=ROOT, env=OUTSIDE)  # fmt: skip
    clear_error(done, message("target.max_retries", 10**6, "target", "max_retries"))


def test_target_max_workers_must_be_a_whole_number(tmp_path: Path) -> None:
    done = call(tmp_path, "target.ask", 'q_ls=["q"]', f"target={json.dumps({**TARGET, 'max_workers': 2.5})}")
    clear_error(done, "target.max_workers must be a whole number >= 1, got 2.5")
