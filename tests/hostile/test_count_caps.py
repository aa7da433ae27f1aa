"""The counts that multiply requests, concurrency or memory and had no cap (issue 40, "every other count that
multiplies requests or work"): ``rubric_top_logprobs``, ``hhem_batch_size``, a jury member's ``max_workers`` (and the
members' sum), the retriever's ``dense.max_workers`` and ``dense.max_retries``, the target's ``max_workers`` and
``max_retries``. Each is refused before any work starts, naming the value, the cap and the file that sets it, through
the real CLI and a real MCP stdio client; a value that is not a count (``1.5``, ``true``) is refused too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import clear_error
from tests.hostile.test_caps import caps, refused_in_background, refused_over_mcp, spare_mcp
from tests.support.background import Finished, spare_ultra
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


def spare_call(tool: str, *arguments: str | Callable[[Path], str], save: bool = True) -> pytest.MarkDecorator:
    """``call(tmp_path, TOOL, *ARGUMENTS)`` as a spare background run (tests/support/background.py), ``tmp_path`` the
    run's folder; an argument may be a function of that folder."""

    def command(tmp_path: Path) -> tuple[str, ...]:
        saved = (f"save_path={tmp_path / 'out'}",) if save else ()
        return ("call", tool, *(a(tmp_path) if callable(a) else a for a in arguments), *saved)

    return spare_ultra(command, cwd=ROOT, env=OUTSIDE)


# --- judge ---


@spare_call(
    "judge.rubric_judge",
    'pred_ls=["a"]',
    f"rubrics={json.dumps([RUBRIC])}",
    f"rubric_top_logprobs={over('judge', 'top_logprobs')}",
    "judge_cache=",
    f"judge_llm={json.dumps(NO_LLM)}",
)
def test_rubric_top_logprobs_over_the_cap_through_ultra_call(background_run: Finished) -> None:
    value = over("judge", "top_logprobs")
    done = background_run.done
    clear_error(done, message("rubric_top_logprobs", value, "judge", "top_logprobs"), "servers/judge/parameter.yaml")


def test_rubric_top_logprobs_over_the_cap_over_mcp(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        refused_over_mcp(tmp_path, "judge", "rubric_judge",
                         {"pred_ls": ["a"], "rubrics": [RUBRIC], "rubric_top_logprobs": 10**6, "judge_cache": "",
                          "save_path": str(tmp_path / "j"), "judge_llm": {"api_key": "", "base_url": stub.base_url}},
                         message("rubric_top_logprobs", 10**6, "judge", "top_logprobs"))  # fmt: skip
        assert stub.request_count == 0


@spare_call("judge.hallucination_judge", 'q_ls=["q"]', 'pred_ls=["a"]', 'ret_psg=[["p"]]', "hhem_batch_size=1000000000",
            "judge_cache=", f"judge_llm={json.dumps(NO_LLM)}")  # fmt: skip
def test_hhem_batch_size_over_the_cap_through_ultra_call(background_run: Finished) -> None:
    done = background_run.done
    clear_error(done, message("hhem_batch_size", 10**9, "judge", "hhem_batch_size"), "servers/judge/parameter.yaml")


@spare_mcp("judge", "hallucination_judge", lambda tmp_path: {
    "q_ls": ["q"], "pred_ls": ["a"], "ret_psg": [["p"]], "hhem_batch_size": 10**9, "judge_cache": "",
    "save_path": str(tmp_path / "j"), "judge_llm": NO_LLM})  # fmt: skip
def test_hhem_batch_size_over_the_cap_over_mcp(background_run: Finished) -> None:
    refused_in_background(background_run, message("hhem_batch_size", 10**9, "judge", "hhem_batch_size"))


@spare_call("judge.idk_judge", 'q_ls=["q"]', 'pred_ls=["a"]', "judge_cache=", f"judge_llm={json.dumps(jury(10**6, 1))}")
def test_a_jury_members_max_workers_over_the_cap_through_ultra_call(background_run: Finished) -> None:
    done = background_run.done
    clear_error(done, message("judge_llm.jury[0].max_workers", 10**6, "judge", "max_workers"))


@spare_mcp("judge", "idk_judge", lambda tmp_path: {
    "q_ls": ["q"], "pred_ls": ["a"], "judge_cache": "", "save_path": str(tmp_path / "j"),
    "judge_llm": jury(caps("judge")["max_workers"], caps("judge")["max_workers"])})  # fmt: skip
def test_a_jurys_max_workers_summed_over_the_cap_over_mcp(background_run: Finished) -> None:
    """Each member within the cap, their sum over it: together they would keep that many requests in flight."""
    each = caps("judge")["max_workers"]
    refused_in_background(background_run, message(SUM, 2 * each, "judge", "max_workers"))


@spare_call("judge.idk_judge", 'q_ls=["q"]', 'pred_ls=["a"]', "judge_cache=", f"judge_llm={json.dumps(jury(4, 4))}")
def test_a_jury_within_the_cap_is_not_refused_for_its_workers(background_run: Finished) -> None:
    done = background_run.done
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


def dense_index(dense: str) -> pytest.MarkDecorator:
    return spare_call("retriever.retriever_index", "backend=dense", f"dense={dense}",
                      lambda tmp_path: f"index_path={tmp_path / 'index'}", save=False)  # fmt: skip


@pytest.mark.parametrize("name", [pytest.param(name, marks=dense_index(f'{{"{name}": {over("retriever", name)}}}'))
                                  for name in ("max_workers", "max_retries")])  # fmt: skip
def test_dense_retrieval_limits_over_the_cap_through_ultra_call(background_run: Finished, name: str) -> None:
    value = over("retriever", name)
    done, tmp_path = background_run.done, background_run.folder
    clear_error(done, message(f"dense.{name}", value, "retriever", name), "servers/retriever/parameter.yaml")
    assert not (tmp_path / "index").exists()


@spare_mcp("retriever", "retriever_search", lambda tmp_path: {
    "backend": "dense", "dense": {"max_workers": 10**9}, "q_ls": ["q"], "index_path": str(tmp_path / "index"),
    "save_path": str(tmp_path / "r")})  # fmt: skip
def test_dense_max_workers_over_the_cap_over_mcp(background_run: Finished) -> None:
    refused_in_background(background_run, message("dense.max_workers", 10**9, "retriever", "max_workers"))


@pytest.mark.parametrize(("value", "shown"), [pytest.param(*case, marks=dense_index(f'{{"max_workers": {case[0]}}}'))
                                              for case in [("1.5", "1.5"), ("true", "true")]])  # fmt: skip
def test_dense_counts_must_be_whole_numbers(background_run: Finished, value: str, shown: str) -> None:
    done = background_run.done
    clear_error(done, f"dense.max_workers must be a whole number >= 1, got {shown}")


# --- target ---

TARGET = {"kind": "http", "url": "http://127.0.0.1:9/ask"}


@pytest.mark.parametrize("name", [pytest.param(name, marks=spare_call("target.ask", 'q_ls=["q"]',
                                  f"target={json.dumps({**TARGET, name: over('target', name)})}"))
                                  for name in ("max_workers", "max_retries")])  # fmt: skip
def test_target_limits_over_the_cap_through_ultra_call(background_run: Finished, name: str) -> None:
    value = over("target", name)
    done = background_run.done
    clear_error(done, message(f"target.{name}", value, "target", name), "servers/target/parameter.yaml")


@spare_mcp("target", "ask", lambda tmp_path: {
    "q_ls": ["q"], "target": {"max_workers": 10**9}, "save_path": str(tmp_path / "t")})  # fmt: skip
def test_target_max_workers_cannot_be_raised_over_mcp(background_run: Finished) -> None:
    """Over MCP the target's runner limits come from the parameter file only (which the cap bounds in turn)."""
    refused_in_background(background_run, "target.max_workers may be set only in a parameter file")


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


@spare_call("target.ask", 'q_ls=["q"]', f"target={json.dumps({**TARGET, 'max_workers': 2.5})}")
def test_target_max_workers_must_be_a_whole_number(background_run: Finished) -> None:
    done = background_run.done
    clear_error(done, "target.max_workers must be a whole number >= 1, got 2.5")


# --- generation ---


@pytest.mark.parametrize(("key", "cap"), [("max_tokens", "max_tokens"), ("max_completion_tokens", "max_tokens"),
                                          ("n", "completions"), ("best_of", "completions")])  # fmt: skip
def test_sampling_params_that_multiply_cost_over_the_cap_through_ultra_call(tmp_path: Path, key: str, cap: str) -> None:
    with OpenAIStub() as stub:
        llm = json.dumps({"backend": "openai", "api_key": "", "base_url": stub.base_url, "model_id": "m"})
        value = over("generation", cap)
        done = call(tmp_path, "generation.generate", 'prompt_ls=["hi"]', f"generation_llm={llm}",
                    f'sampling_params={{"{key}": {value}}}', "generation_cache=")  # fmt: skip
        assert stub.request_count == 0
    clear_error(done, message(f"sampling_params.{key}", value, "generation", cap), "servers/generation/parameter.yaml")


def test_sampling_params_n_over_the_cap_over_mcp(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        refused_over_mcp(tmp_path, "generation", "generate",
                         {"prompt_ls": ["hi"], "sampling_params": {"n": 10**6, "max_tokens": 8}, "generation_cache": "",
                          "generation_llm": {"backend": "openai", "api_key": "", "base_url": stub.base_url,
                                             "model_id": "m"},
                          "save_path": str(tmp_path / "g")},
                         message("sampling_params.n", 10**6, "generation", "completions"))  # fmt: skip
        assert stub.request_count == 0


def test_sampling_params_within_the_caps_are_sent(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        llm = json.dumps({"backend": "openai", "api_key": "", "base_url": stub.base_url, "model_id": "m"})
        done = call(tmp_path, "generation.generate", 'prompt_ls=["hi"]', f"generation_llm={llm}",
                    'sampling_params={"max_tokens": 8, "n": 1, "temperature": 0}', "generation_cache=")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert stub.request_count == 1 and stub.chat_requests()[0]["max_tokens"] == 8


# --- every numeric setting: capped, or why it multiplies nothing ---

CAPPED = {  # setting -> its cap (caps.<name> of the same server)
    "evaluation": {"n_resamples": "n_resamples", "similarity_embeddings.max_retries": "max_retries",
                   "similarity_embeddings.max_workers": "max_workers"},
    "generation": {"generation_llm.max_retries": "max_retries", "generation_llm.max_workers": "max_workers",
                   "sampling_params.max_tokens": "max_tokens"},
    "judge": {"judge_llm.max_retries": "max_retries", "judge_llm.max_workers": "max_workers",
              "judge_llm.samples": "samples", "rubric_top_logprobs": "top_logprobs", "depth": "depth",
              "fill_depth": "fill_depth", "fill_resamples": "fill_resamples", "max_nuggets": "max_nuggets",
              "hhem_batch_size": "hhem_batch_size"},
    "report": {"bootstrap_resamples": "bootstrap_resamples"},
    "retriever": {"dense.max_workers": "max_workers", "dense.max_retries": "max_retries"},
    "synth": {"synth_llm.max_retries": "max_retries", "synth_llm.max_workers": "max_workers",
              "n_per_kind.grounded": "n_per_kind", "n_per_kind.off_topic": "n_per_kind",
              "n_per_kind.jailbreak": "n_per_kind"},
    "target": {"target.max_workers": "max_workers", "target.max_retries": "max_retries"},
}  # fmt: skip
TIME = "seconds, or a pace: waiting longer sends nothing more"
NOT_COUNTS = {  # setting -> why it multiplies no request, resample or memory
    "seed": "a seed", "benchmark.seed": "a seed", "benchmark.sample.seed": "a seed", "fill_seed": "a seed",
    "relevance_level": "a grade", "relevant_grade": "a grade", "min_judgment": "a grade",
    "bertscore_layer": "a layer of the model", "sampling_params.temperature": "a temperature (0 here)",
    "benchmark.limit": "keeps fewer records than the data holds", "benchmark.sample.n": "keeps fewer records",
    "benchmark.max_bytes": "the size of a data file read whole: the data the caller asked for, read once",
    "benchmark.traces.max_attribute_chars": "cuts text shorter",
    "benchmark.max_result_bytes": "moves a result to a file",
    "max_passage_words": "cuts passages shorter", "top_k": "at most the corpus's passages",
    "dense.batch_size": "texts per request: more means fewer requests", "dense.timeout": TIME,
    "similarity_embeddings.timeout": TIME, "generation_llm.timeout": TIME, "judge_llm.timeout": TIME,
    "synth_llm.timeout": TIME, "target.timeout": TIME, "generation_llm.cool_down": TIME, "judge_llm.cool_down": TIME,
    "synth_llm.cool_down": TIME, "judge_llm.batch_poll_interval": TIME, "target.rate_limit": TIME,
    "generation_llm.drain_after": "failures before an endpoint rests", "judge_llm.drain_after": "the same",
    "synth_llm.drain_after": "the same", "judge_llm.jury_min": "at most the jury's members (checked)",
    "judge_llm.batch_max_requests": "splits the call's requests into files: more per file, fewer files",
    "judge_llm.batch_max_bytes": "the same, in bytes", "fill_budget": "at most the holes (fill_depth is capped)",
    "nugget_top_k": "at most the nuggets (max_nuggets is capped)", "max_table_rows": "at most the items",
    "examples_per_metric": "at most the items", "max_scatter_points": "at most the items",
    "target.max_answer_chars": "cuts answers shorter; set in a parameter file only (not over MCP)",
    "target.max_response_bytes": "a reply's size limit; set in a parameter file only (not over MCP)",
    "target.max_json_depth": "a reply's depth limit (read without recursion); set in a parameter file only",
}  # fmt: skip


def numeric_settings(value: object, prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        return [name for key, item in value.items() for name in numeric_settings(item, f"{prefix}{key}.")]
    return [prefix[:-1]] if isinstance(value, int) and not isinstance(value, bool) else []  # a count is whole


def test_every_numeric_setting_is_capped_or_multiplies_nothing() -> None:
    """A numeric setting added later must be classified here: capped (and refused over its cap), or not a count."""
    from ultra_kit.settings import SERVERS_DIR, load_parameter_file

    for file in sorted(SERVERS_DIR.glob("*/parameter.yaml")):
        server = file.parent.name
        for name in numeric_settings(load_parameter_file(file)):
            if name in CAPPED.get(server, {}):
                assert CAPPED[server][name] in caps(server), (server, name)
            else:
                assert name in NOT_COUNTS, f"{server}: {name} is neither capped nor said to multiply nothing"


# --- evaluation: measures (ir_metrics over ks), each scored per query and resampled ---


@spare_call("evaluation.evaluate_trec", f"ks={json.dumps(list(range(1, over('evaluation', 'cutoffs') + 1)))}")
def test_more_cutoffs_than_the_cap_through_ultra_call(background_run: Finished) -> None:
    ks = list(range(1, over("evaluation", "cutoffs") + 1))
    done = background_run.done
    clear_error(done, message("ks (cutoffs)", len(ks), "evaluation", "cutoffs"), "servers/evaluation/parameter.yaml")


MEASURES = "ir_metrics expanded over ks (measures)"


@spare_mcp("evaluation", "evaluate_trec_pvalue", lambda tmp_path: {
    "ir_metrics": [f"P@{k}" for k in range(1, over("evaluation", "measures") + 1)], "ks": [], "n_resamples": 10,
    "save_path": str(tmp_path / "p.json")})  # fmt: skip
def test_more_measures_than_the_cap_over_mcp(background_run: Finished) -> None:
    names = [f"P@{k}" for k in range(1, over("evaluation", "measures") + 1)]
    refused_in_background(background_run, message(MEASURES, len(names), "evaluation", "measures"))


@spare_call("evaluation.evaluate_trec", "ir_metrics=[all_trec]")
def test_all_trec_is_within_the_measures_cap(background_run: Finished) -> None:
    done = background_run.done
    assert done.returncode == 0, done.stderr


# --- fill_qrels: every pair of runs tested on every measure ---


@spare_mcp("judge", "fill_qrels", lambda tmp_path: {
    "run_paths": [str(tmp_path / f"run{i}.trec") for i in range(over("judge", "fill_runs"))], "judge_llm": NO_LLM,
    "judge_cache": "", "save_path": str(tmp_path / "f")})  # fmt: skip
def test_fill_qrels_run_paths_over_the_cap_over_mcp(background_run: Finished) -> None:
    runs = over("judge", "fill_runs")
    refused_in_background(background_run, message("run_paths (runs tested pair by pair)", runs, "judge", "fill_runs"))


FILL_MEASURES = [f"P@{k}" for k in range(1, over("judge", "fill_measures") + 1)]


@spare_call("judge.fill_qrels", f"fill_measures={json.dumps(FILL_MEASURES)}", "judge_cache=",
            f"judge_llm={json.dumps(NO_LLM)}")  # fmt: skip
def test_fill_qrels_measures_over_the_cap_through_ultra_call(background_run: Finished) -> None:
    names = [f"P@{k}" for k in range(1, over("judge", "fill_measures") + 1)]
    done = background_run.done
    clear_error(done, message("fill_measures", len(names), "judge", "fill_measures"), "servers/judge/parameter.yaml")
