"""``ultra run --estimate``: the ledger and calibration, and the estimate against actual runs on the local stub."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, llm_settings
from tests.judge.test_trec_rag_example import kind, responder
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_llm.cache import AnswerCache, CachedAnswer
from ultra_llm.estimate import chars_per_token, read_ledger, typical_reply

STEP_KIND = {"judge.umbrela_judge": "umbrela", "judge.citation_judge": "citation", "judge.idk_judge": "idk"}


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


def estimate_rows(stdout: str) -> dict[str, list[str]]:
    table = stdout.split("estimate (nothing was sent")[1].split("notes:")[0]
    return {line.split()[0]: line.split() for line in table.splitlines() if "." in line.split(" ", 1)[0]}


def test_the_estimate_of_trec_rag_against_the_actual_run(tmp_path: Path) -> None:
    """A cache holding an earlier run (examples/umbrela.yaml, same judge model) calibrates the estimate; then
    examples/trec_rag.yaml is estimated (the stub receives nothing) and run. UMBRELA (every pair already in the
    cache), citations and IDK: requests equal the actual ones exactly, tokens in within 25 %. nuggetize's
    later stages depend on the nuggets its first stage creates: only that first stage is counted, and said so."""
    cache = str(tmp_path / "cache.sqlite")
    with OpenAIStub(responder=responder()) as stub:
        judge = {"judge_llm": {**llm_settings(stub), "api_key": "x"}, "judge_cache": cache,
                 "save_path": str(tmp_path / "judge")}  # fmt: skip
        files = {}
        for name in ("umbrela", "trec_rag"):
            params = yaml.safe_load((ROOT / "examples" / "parameters" / f"{name}_parameter.yaml").read_text())
            params["judge"].update(judge)
            if "evaluation" in params:
                params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
            files[name] = tmp_path / f"{name}.yaml"
            files[name].write_text(yaml.safe_dump(params))
        out = ("--output-dir", str(tmp_path / "runs"))
        first = run_ultra("run", "examples/umbrela.yaml", "--param", str(files["umbrela"]), *out, cwd=ROOT)
        assert first.returncode == 0, first.stderr[-2000:]
        stub.served.clear()
        estimate = run_ultra("run", "examples/trec_rag.yaml", "--param", str(files["trec_rag"]), "--estimate", cwd=ROOT)
        assert estimate.returncode == 0, estimate.stderr[-2000:]
        assert stub.served == []  # nothing was sent
        args = ("run", "examples/trec_rag.yaml", "--param", str(files["trec_rag"]), "--estimate", "--stdio")
        over_stdio = run_ultra(*args, cwd=ROOT)  # MCP subprocesses: their clients send nothing either
        assert over_stdio.returncode == 0, over_stdio.stderr[-2000:]
        assert stub.served == [] and estimate_rows(over_stdio.stdout) == estimate_rows(estimate.stdout)
        assert not list((tmp_path / "runs").glob("trec_rag_*"))  # no run folder either
        done = run_ultra("run", "examples/trec_rag.yaml", "--param", str(files["trec_rag"]), *out, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-2000:]
        actual: dict[str, list[int]] = {}
        for request in stub.chat_requests():
            counts = actual.setdefault(kind(request), [0, 0])
            counts[0] += 1
            counts[1] += len(content_of(request).split())  # the stub counts words as tokens
    rows = estimate_rows(estimate.stdout)
    assert rows["judge.umbrela_judge"][2:4] == ["0", "~0"]  # every pair is in the cache: nothing to send
    assert "umbrela" not in actual
    for step in ("judge.citation_judge", "judge.idk_judge"):
        requests, tokens = int(rows[step][2]), int(rows[step][3].lstrip("~"))
        assert requests == actual[STEP_KIND[step]][0], (step, requests, actual)
        assert abs(tokens / actual[STEP_KIND[step]][1] - 1) <= 0.25, (step, tokens, actual)
    assert (
        int(rows["judge.nuggetize"][2])
        == actual["create"][0]
        < sum(actual[s][0] for s in ("create", "score", "assign"))
    )
    assert re.search(r"judge\.nuggetize: the tool stopped on its unanswered requests", estimate.stdout)


@pytest.mark.slow
def test_a_local_model_s_prompt_tokens_are_counted_with_its_tokenizer_exactly(tmp_path: Path, monkeypatch) -> None:
    """Estimate mode counts a local model's prompt with its own tokenizer: the count the model then reports."""
    pytest.importorskip("transformers")
    import asyncio
    import json

    from ultra_llm.client import LLMClient
    from ultra_llm.estimate import ESTIMATE_ENV
    from ultra_llm.settings import LLMSettings

    settings = LLMSettings.from_mapping(
        {"backend": "local", "model_id": "smollm2", "timeout": 600, "max_retries": 0, "max_workers": 1}, name="llm"
    )
    messages = [
        {"role": "system", "content": "You judge answers."},
        {"role": "user", "content": "Is the sky blue? Answer yes or no, with a reason in one sentence."},
    ]

    async def ask() -> object:
        async with LLMClient(settings) as client:
            return await client.chat(messages, {"max_tokens": 2, "temperature": 0}, prompt="p")

    monkeypatch.setenv(ESTIMATE_ENV, str(tmp_path / "ledger.jsonl"))
    unsent = asyncio.run(ask())
    (record,) = [json.loads(line) for line in (tmp_path / "ledger.jsonl").read_text().splitlines()]
    assert unsent.status == "error" and record["model"] == "local:smollm2" and record["max_tokens"] == 2
    monkeypatch.delenv(ESTIMATE_ENV)
    sent = asyncio.run(ask())
    assert sent.status == "ok" and record["tokens"] == sent.prompt_tokens > 20


def test_batch_mode_sends_no_batch_either(tmp_path: Path, monkeypatch) -> None:
    """A judge in ``mode: batch`` under estimate mode uploads nothing: every request is written to the ledger once."""
    import asyncio
    import json

    from servers.judge.relevance.run import run_umbrela
    from tests.judge.conftest import call_job
    from tests.llm.test_batch import UNIQUE, arguments
    from tests.support.batch_server import BatchStub
    from ultra_kit.errors import InputError
    from ultra_llm.estimate import ESTIMATE_ENV

    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(ESTIMATE_ENV, str(ledger))
    with BatchStub(max_requests=1000, max_bytes=10**6) as server:
        with pytest.raises(InputError, match="failed"):  # every judgment failed: not sent
            asyncio.run(call_job(run_umbrela, **arguments(server, tmp_path), backoff_base=0.01))
        assert server.files == {} and server.batches == {} and server.served == []
    keys = [json.loads(line)["key"] for line in ledger.read_text().splitlines()]
    assert len(set(keys)) == UNIQUE


def test_the_estimate_of_risk_suite_judged_by_a_new_model(tmp_path: Path) -> None:
    """examples/risk_suite.yaml after a run (synthetic questions and answers cached), its judge switched to another
    model: the estimate sends nothing, predicts 0 requests for synth and generation, and for the judges what they
    then send, except faithfulness's statement checks (its second stage, which needs the statements)."""
    from tests.synth.test_risk_suite import PIPELINE, params_for, reply

    with OpenAIStub(reply) as stub:
        param_file = params_for(tmp_path, stub.base_url)
        params = yaml.safe_load(param_file.read_text())
        for server in ("synth", "generation", "judge"):
            params[server][f"{server}_cache"] = str(tmp_path / f"{server}_cache.sqlite")
        param_file.write_text(yaml.safe_dump(params))
        run = ("run", str(PIPELINE), "--param", str(param_file), "--output-dir", str(tmp_path / "runs"))
        env = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}
        assert run_ultra(*run, cwd=ROOT, env=env, timeout=300).returncode == 0
        params["judge"]["judge_llm"]["model_id"] = "stub-judge-2"
        param_file.write_text(yaml.safe_dump(params))
        stub.served.clear()
        estimate = run_ultra("run", str(PIPELINE), "--param", str(param_file), "--estimate", cwd=ROOT, env=env)
        assert estimate.returncode == 0, estimate.stderr[-2000:]
        assert stub.served == []
        done = run_ultra(*run, cwd=ROOT, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        sent = stub.chat_requests()
    rows = {
        line.split()[0]: line.split() for line in estimate.stdout.splitlines() if line.startswith(("synth.", "gen"))
    }
    rows.update(estimate_rows(estimate.stdout))
    assert rows["synth.generate_queries"][2] == rows["generation.generate"][2] == "0"  # all in the caches
    actual: dict[str, list[int]] = {}
    for request in sent:
        text = content_of(request)
        step = ("judge.guardrail_judge" if '"label"' in text else "judge.bias" if '"opinions"' in text
                else "judge.answer_relevancy" if '"noncommittal"' in text else "judge.faithfulness")  # fmt: skip
        counts = actual.setdefault(step, [0, 0])
        counts[0] += 1
        counts[1] += len(text.split())
    for step in ("judge.guardrail_judge", "judge.bias", "judge.answer_relevancy"):
        requests, tokens = int(rows[step][2]), int(rows[step][3].lstrip("~"))
        assert requests == actual[step][0], (step, requests, actual)
        assert abs(tokens / actual[step][1] - 1) <= 0.25, (step, tokens, actual)
    assert int(rows["judge.faithfulness"][2]) * 2 == actual["judge.faithfulness"][0]  # the first of its 2 stages
