"""``ultra run --estimate``: the ledger and calibration, and the estimate against actual runs on the local stub."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from subprocess import CompletedProcess

import pytest
import yaml

from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, llm_settings
from tests.judge.test_trec_rag_example import kind, responder
from tests.support.background import Finished, in_background
from tests.support.local_probes import NEEDED, probe, result
from tests.support.openai_stub import OpenAIStub, content_of
from tests.support.together import at_once
from ultra_llm.cache import AnswerCache, CachedAnswer
from ultra_llm.estimate import chars_per_token, read_ledger, typical_reply

SYNTH_MARKS = (
    "Give the final answer inside",
    '"label"',
    '"opinions"',
    '"statements"',
    "Verdicts (JSON array",
    '"noncommittal"',
)  # what the generator and the judges are asked; the rest is the synth's
STEP_OF = {"citation": "judge.citation_judge", "idk": "judge.idk_judge", "create": "judge.nuggetize",
           "score": "judge.nuggetize", "assign": "judge.nuggetize"}  # fmt: skip


def test_the_ledger_is_read_line_by_line_and_calibration_comes_from_the_cache(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text('{"key": "a"}\n{"key": "b"}\n{"key": "c", "cha')  # a line still being written
    records, offset = read_ledger(ledger)
    assert [r["key"] for r in records] == ["a", "b"] and offset == len('{"key": "a"}\n{"key": "b"}\n')
    with ledger.open("a") as handle:
        handle.write('rs": 3}\n')
    assert read_ledger(ledger, offset)[0] == [{"key": "c", "chars": 3}]
    cache = AnswerCache(tmp_path / "cache.sqlite")
    for i, (text, tokens_in, tokens_out) in enumerate([("x" * 30, 10, 4), ("y" * 50, 10, 8)]):
        request = {"messages": [{"role": "user", "content": text}], "sampling": {}}
        cache.put(f"k{i}", model_id="m", prompt="umbrela@abc", request=request, answer=CachedAnswer("", None, tokens_in,
                  tokens_out))  # fmt: skip
    cache.close()
    from ultra_llm.estimate import cache_rows

    rows = cache_rows(tmp_path / "cache.sqlite", "m")
    assert chars_per_token(rows) == pytest.approx(80 / 20)  # 80 characters for 20 prompt tokens
    assert typical_reply(rows, "umbrela@other-version") == pytest.approx(6.0)
    assert typical_reply(rows, "idk@abc") is None and cache_rows(tmp_path / "cache.sqlite", "other") == []


def flat(text: str) -> str:
    """``text`` with its notes unwrapped (every run of white space one space)."""
    return " ".join(text.split())


def estimate_rows(stdout: str) -> dict[str, list[str]]:
    table = stdout.split("estimate (nothing was sent")[1].split("notes:")[0]
    return {line.split()[0]: line.split() for line in table.splitlines() if "." in line.split(" ", 1)[0]}


def names_in(folder: Path) -> set[str]:
    return {path.name for path in folder.glob("*")} if folder.is_dir() else set()


def test_the_estimate_of_trec_rag_against_the_actual_runs(tmp_path: Path) -> None:
    """examples/trec_rag.yaml estimated twice, each against the run that follows it on the stub.

    From an empty cache: UMBRELA, citations and IDK ask one request per pair, sentence or answer, so their
    counts are exact; nuggetize rests on UMBRELA's placeholder grades (the top grade: every passage) and its
    own placeholder lists (as long as allowed), so its count is marked a guess and bounds the actual one.
    After that run, with the judge switched to another model: every reply is stood in by the first model's
    answer to the same request, so every step's requests, nuggetize's three stages included, equal the
    actual ones exactly, and tokens in are within 25 %. The stub receives nothing from either estimate
    (in-process or over stdio) and no file is written."""
    cache = str(tmp_path / "cache.sqlite")
    with OpenAIStub(responder=responder()) as stub:
        params = yaml.safe_load((ROOT / "examples" / "parameters" / "trec_rag_parameter.yaml").read_text())
        params["judge"].update(judge_llm={**llm_settings(stub), "api_key": "x"}, judge_cache=cache,
                               save_path=str(tmp_path / "judge"))  # fmt: skip
        param_file = tmp_path / "trec_rag.yaml"
        param_file.write_text(yaml.safe_dump(params))
        run = ("run", "examples/trec_rag.yaml", "--param", str(param_file))
        out = ("--output-dir", str(tmp_path / "runs"))

        def estimate_then_run(*beside: tuple[str, ...]) -> tuple[str, dict[str, list[int]], list[CompletedProcess]]:
            """The estimate, then the run; ``beside``: the options of estimates made at the same time (returned)."""
            stub.served.clear()
            folders = names_in(tmp_path / "runs")
            made = at_once(
                {i: (lambda o=o: run_ultra(*run, "--estimate", *o, cwd=ROOT)) for i, o in enumerate(((), *beside))}
            )
            estimate, *others = made.values()
            assert estimate.returncode == 0, estimate.stderr[-2000:]
            assert stub.served == [] and names_in(tmp_path / "judge") == written  # nothing sent, nothing written
            assert names_in(tmp_path / "runs") == folders  # and no run folder
            done = run_ultra(*run, *out, cwd=ROOT)
            assert done.returncode == 0, done.stderr[-2000:]
            actual: dict[str, list[int]] = {}
            for request in stub.chat_requests():
                counts = actual.setdefault(STEP_OF.get(kind(request), "judge.umbrela_judge"), [0, 0])
                counts[0] += 1
                counts[1] += len(content_of(request).split())  # the stub counts words as tokens
            return estimate.stdout, actual, others

        written: set[str] = set()
        cold, actual, _ = estimate_then_run()
        rows = estimate_rows(cold)
        for step in ("judge.umbrela_judge", "judge.citation_judge", "judge.idk_judge"):
            assert int(rows[step][2]) == actual[step][0], (step, rows[step], actual)
        guess = rows["judge.nuggetize"][2]
        assert guess.startswith("~") and int(guess[1:]) >= actual["judge.nuggetize"][0], (guess, actual)
        why = "judge.nuggetize: requests are a guess: its inputs rest on placeholder replies of judge.umbrela_judge"
        assert why in flat(cold) and max(len(line) for line in cold.splitlines()) <= 100, cold
        written = names_in(tmp_path / "judge")
        params["judge"]["judge_llm"]["model_id"] = "stub-judge-2"
        param_file.write_text(yaml.safe_dump(params))
        switched, actual, (over_stdio,) = estimate_then_run(("--stdio",))  # MCP subprocesses send nothing either
        assert over_stdio.returncode == 0, over_stdio.stderr[-2000:]
    rows = estimate_rows(switched)
    assert estimate_rows(over_stdio.stdout) == rows
    assert set(actual) == {"judge.umbrela_judge", "judge.nuggetize", "judge.citation_judge", "judge.idk_judge"}
    for step, (requests, tokens) in actual.items():
        assert rows[step][2] == str(requests), (step, rows[step], actual)  # exact, and not marked a guess
        assert abs(int(rows[step][3].lstrip("~")) / tokens - 1) <= 0.25, (step, rows[step], actual)
    print(switched, actual)  # the figures of the closing note (pytest -s)
    assert "same request's cached answer from another model" in flat(switched) and "a guess" not in switched


@pytest.mark.slow
@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in NEEDED), reason="the local-llm extra is not installed"
)
@in_background(probe("estimate_then_send"))
def test_a_local_model_s_prompt_tokens_are_counted_with_its_tokenizer_exactly(background_run: Finished) -> None:
    """Estimate mode counts a local model's prompt with its own tokenizer: the count the model then reports
    (tests/support/local_probes.py: estimate_then_send asks SmolLM2 once under estimate mode, then for real)."""
    assert background_run.done.returncode == 0, background_run.done.stderr[-2000:]
    got = result(background_run.folder, "estimate_then_send")
    (record,) = got["records"]
    assert got["unsent_standin"] == record["standin"] == "placeholder" and record["model"] == "local:smollm2"
    assert record["max_tokens"] == 2
    assert got["sent_status"] == "ok" and record["tokens"] == got["sent_prompt_tokens"] > 20


def test_batch_mode_sends_no_batch_either(tmp_path: Path, monkeypatch) -> None:
    """A judge in ``mode: batch`` under estimate mode uploads nothing: every request is written to the ledger once,
    answered by a placeholder (nothing is cached), and the result goes to the estimate's scratch folder."""
    import asyncio
    import json

    from servers.judge.relevance.run import run_umbrela
    from tests.judge.conftest import call_job
    from tests.llm.test_batch import UNIQUE, arguments
    from tests.support.batch_server import BatchStub
    from ultra_llm.estimate import ESTIMATE_ENV

    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(ESTIMATE_ENV, str(ledger))
    with BatchStub(max_requests=1000, max_bytes=10**6) as server:
        result = asyncio.run(call_job(run_umbrela, **arguments(server, tmp_path), backoff_base=0.01))
        assert server.files == {} and server.batches == {} and server.served == []
    records = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len({r["key"] for r in records}) == UNIQUE and {r["standin"] for r in records} == {"placeholder"}
    assert result["counts"]["ok"] == result["counts"]["pairs"] and result["usage"]["requests"] == 0
    assert Path(result["result_path"]).parent == tmp_path / "results"  # the ledger's scratch folder, not save_path


def test_the_estimate_of_risk_suite_against_the_actual_runs(tmp_path: Path) -> None:
    """examples/risk_suite.yaml on the stub. From empty caches the synthetic questions are counted, but the
    test set they would make is not written from stand-ins, so the steps reading it are "not estimated".
    After a run, with the generator and the judge switched to other models: generation, both stages of
    faithfulness, answer_relevancy, the guardrail judge and bias ask exactly what the estimate predicted,
    tokens in within 25 %, and the synthetic questions come from the cache (0 requests)."""
    from tests.synth.test_risk_suite import PIPELINE, params_for, reply

    with OpenAIStub(reply) as stub:
        param_file = params_for(tmp_path, stub.base_url)
        params = yaml.safe_load(param_file.read_text())
        for server in ("synth", "generation", "judge"):
            params[server][f"{server}_cache"] = str(tmp_path / f"{server}_cache.sqlite")
        param_file.write_text(yaml.safe_dump(params))
        run = ("run", str(PIPELINE), "--param", str(param_file))
        env = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}
        cold = run_ultra(*run, "--estimate", cwd=ROOT, env=env)
        assert cold.returncode == 0, cold.stderr[-2000:]
        assert stub.served == [] and not list((tmp_path / "output").rglob("*.*"))  # the test set was not written
        assert re.search(r"synth\.generate_queries: stopped: .*queries\.jsonl: ultra run --estimate does not write "
                         r"files from stand-in replies", flat(cold.stdout)), cold.stdout  # fmt: skip
        assert "generation.generate: not estimated" in cold.stdout
        synth_estimate = int(estimate_rows(cold.stdout)["synth.generate_queries"][2].lstrip("~"))
        assert run_ultra(*run, "--output-dir", str(tmp_path / "runs"), cwd=ROOT, env=env, timeout=300).returncode == 0
        synth_sent = [r for r in stub.chat_requests() if not any(mark in content_of(r) for mark in SYNTH_MARKS)]
        assert synth_estimate == len(synth_sent) > 0  # what the synth then asked
        for server in ("generation", "judge"):
            params[server][f"{server}_llm"] = {**params[server][f"{server}_llm"], "model_id": f"stub-{server}-2"}
        param_file.write_text(yaml.safe_dump(params))
        stub.served.clear()
        estimate = run_ultra(*run, "--estimate", cwd=ROOT, env=env)
        assert estimate.returncode == 0, estimate.stderr[-2000:]
        assert stub.served == []
        done = run_ultra(*run, "--output-dir", str(tmp_path / "runs"), cwd=ROOT, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        sent = stub.chat_requests()
    rows = estimate_rows(estimate.stdout)
    assert rows["synth.generate_queries"][2] == "0"  # all in the cache
    actual: dict[str, list[int]] = {}
    for request in sent:
        text = content_of(request)
        step = ("judge.guardrail_judge" if '"label"' in text else "judge.bias" if '"opinions"' in text
                else "judge.answer_relevancy" if '"noncommittal"' in text
                else "generation.generate" if "Give the final answer inside" in text
                else "judge.faithfulness")  # fmt: skip
        counts = actual.setdefault(step, [0, 0])
        counts[0] += 1
        counts[1] += len(text.split())
    stages = {"Verdicts (JSON array" in content_of(r) for r in sent if '"statements"' in content_of(r) or
              "Verdicts (JSON array" in content_of(r)}  # fmt: skip
    assert len(actual) == 5 and stages == {True, False}  # both of faithfulness's stages were asked and estimated
    for step, (requests, tokens) in actual.items():
        assert rows[step][2] == str(requests), (step, rows[step], actual)  # exact, and not marked a guess
        assert abs(int(rows[step][3].lstrip("~")) / tokens - 1) <= 0.25, (step, rows[step], actual)
    print(estimate.stdout, actual)  # the figures of the closing note (pytest -s)


def word_tokenizer(path: Path) -> Path:
    """A tokenizers JSON file built here: one token per run of non-space characters (how the stub counts)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "the": 1}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(path))
    return path


def test_a_configured_tokenizer_counts_the_prompt_tokens_exactly(tmp_path: Path) -> None:
    """judge_llm.tokenizer names the model's tokenizer.json: examples/umbrela.yaml's tokens in are then counted,
    not approximated, and equal the prompt tokens the endpoint reports for the run that follows."""
    pytest.importorskip("tokenizers")
    with OpenAIStub(responder=responder()) as stub:
        params = yaml.safe_load((ROOT / "examples" / "parameters" / "umbrela_parameter.yaml").read_text())
        llm = {**llm_settings(stub), "api_key": "x", "tokenizer": str(word_tokenizer(tmp_path / "tokenizer.json"))}
        params["judge"].update(judge_llm=llm, judge_cache=str(tmp_path / "cache.sqlite"),
                               save_path=str(tmp_path / "judge"))  # fmt: skip
        params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
        param_file = tmp_path / "umbrela.yaml"
        param_file.write_text(yaml.safe_dump(params))
        run = ("run", "examples/umbrela.yaml", "--param", str(param_file))
        estimate = run_ultra(*run, "--estimate", cwd=ROOT)
        assert estimate.returncode == 0 and stub.served == [], estimate.stderr[-2000:]
        assert run_ultra(*run, "--output-dir", str(tmp_path / "runs"), cwd=ROOT).returncode == 0
        sent = stub.chat_requests()
    row = estimate_rows(estimate.stdout)["judge.umbrela_judge"]
    assert row[2] == str(len(sent)) and row[3] == str(sum(len(content_of(r).split()) for r in sent))  # no "~"
    (total,) = [line.split() for line in estimate.stdout.splitlines() if line.startswith("total")]
    assert total[1:3] == row[2:4]  # the only step: the total is counted too, not approximated


def test_a_tokenizer_that_is_not_there_is_named(tmp_path: Path) -> None:
    from ultra_base.errors import InputError
    from ultra_llm.estimate import tokenizer_prompt_tokens

    with pytest.raises(InputError, match="tokenizer file"):
        tokenizer_prompt_tokens(str(tmp_path / "missing.json"), [{"role": "user", "content": "x"}])
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(InputError, match="could not be read as a tokenizers JSON file"):
        tokenizer_prompt_tokens(str(tmp_path / "bad.json"), [{"role": "user", "content": "x"}])
    assert tokenizer_prompt_tokens(str(word_tokenizer(tmp_path / "t.json")), [{"content": "a b  c"}, {}]) == 3


def test_a_jury_step_is_priced_member_by_member(tmp_path: Path) -> None:
    """A step whose requests go to two models (a jury) is counted and priced per model, then added up; a member
    without a price makes the step's cost unknown, never $0. Hand-computed: no cache, so 4 characters a token."""
    from ultra_client.estimate import step_estimate

    def record(key: str, model: str, chars: int) -> dict:
        return {"key": key, "model": model, "prompt": "umbrela@v1", "chars": chars, "max_tokens": 10,
                "cache": str(tmp_path / "none.sqlite"), "tokens": None, "standin": "placeholder"}  # fmt: skip

    records = [record("a", "gpt-4o", 400), record("b", "gpt-4o", 400), record("c", "gpt-4o-mini", 800)]
    step = step_estimate("judge.umbrela_judge", [], records)
    assert (step.model, step.requests, step.tokens_in, step.tokens_out_low, step.tokens_out_high) == (
        "gpt-4o + gpt-4o-mini",
        3,
        400,
        3,
        30,
    )
    low = (160 * 2.50 + 2 * 10.00 + 160 * 0.15 + 1 * 0.60) / 1e6  # tokens in at -20 %, a reply of 1 token each
    high = (250 * 2.50 + 20 * 10.00 + 250 * 0.15 + 10 * 0.60) / 1e6  # tokens in at +25 %, the max_tokens budget
    assert step.cost_low == pytest.approx(low) and step.cost_high == pytest.approx(high)
    unknown = step_estimate("judge.umbrela_judge", [], [*records, record("d", "no-such-model", 40)])
    assert unknown.cost_low is None and unknown.cost_high is None and unknown.requests == 4
