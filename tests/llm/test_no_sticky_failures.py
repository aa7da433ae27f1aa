"""No sticky failures: an unreadable reply an earlier run left in the answer cache is asked for again, so
switching to a working endpoint with the same model_id works at once; a parse error from the cache says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from servers.judge.relevance.run import run_umbrela
from tests.judge.conftest import SAMPLE, call_job, llm_settings, oracle
from tests.judge.test_umbrela import sample_grades
from tests.llm.conftest import stub_settings
from tests.llm.test_asking import ask, graded
from tests.support.batch_server import BatchStub
from tests.support.openai_stub import OpenAIStub
from ultra_llm.cache import AnswerCache
from ultra_llm.client import LLMClient

pytestmark = pytest.mark.anyio
GARBAGE = "I am sorry, I cannot grade this."


def umbrela_settings(tmp_path: Path, *, depth: int) -> dict:
    """umbrela_judge on the sample at ``depth``, its cache and results under ``tmp_path``."""
    return {
        "queries_path": str(SAMPLE / "queries.jsonl"),
        "run_path": str(SAMPLE / "run.bm25.trec"),
        "corpus_path": str(SAMPLE / "corpus.jsonl"),
        "depth": depth,
        "judge_cache": str(tmp_path / "cache.sqlite"),
        "save_path": str(tmp_path / "out"),
    }


async def ask_once(stub: OpenAIStub, cache_path: Path, *, retries: int = 1):
    cache = AnswerCache(cache_path)
    try:
        async with LLMClient(stub_settings(stub), cache) as client:
            return await ask(client, retries=retries)
    finally:
        cache.close()


async def test_a_fixed_endpoint_with_the_same_model_gets_the_requests(tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite"
    with OpenAIStub(lambda request: GARBAGE) as bad:
        failed = await ask_once(bad, cache)
    assert (failed.status, failed.raw, bad.request_count) == ("parse_error", GARBAGE, 2)
    assert "answer cache" not in failed.error  # both replies were fresh
    with OpenAIStub(graded) as good:  # same model_id, another endpoint
        fixed = await ask_once(good, cache)
        assert (fixed.status, fixed.value, fixed.cached) == ("ok", 2, False)
        assert good.request_count == 1  # the stored unreadable reply was not replayed
        again = await ask_once(good, cache)  # the fresh answer replaced the stored one
        assert (again.status, again.value, again.cached, good.request_count) == ("ok", 2, True, 1)


async def test_a_readable_repaired_exchange_is_replayed_but_its_unreadable_first_reply_is_asked_again(
    tmp_path: Path,
) -> None:
    with OpenAIStub(graded) as stub:
        stub.add_fault("reply", text="no JSON here", times=1)
        first = await ask_once(stub, tmp_path / "answers.sqlite", retries=2)
        assert (first.status, first.value, first.requests, stub.request_count) == ("ok", 2, 2, 2)
        second = await ask_once(stub, tmp_path / "answers.sqlite", retries=2)
        # the stored "no JSON here" is asked for again (1 request, now readable); nothing else is sent
        assert (second.status, second.value, second.requests, stub.request_count) == ("ok", 2, 1, 3)
        third = await ask_once(stub, tmp_path / "answers.sqlite", retries=2)
        assert (third.status, third.value, third.cached, stub.request_count) == ("ok", 2, True, 3)


async def test_a_parse_error_that_came_from_the_cache_says_so_and_how_to_bypass_it(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "answers.sqlite")
    with OpenAIStub(lambda request: GARBAGE) as bad:
        async with LLMClient(stub_settings(bad), cache) as client:
            fresh = await ask(client, retries=1)
            # the same item again in the same run: this run's own answers are used, not asked for again
            replayed = await ask(client, retries=1)
        assert bad.request_count == 2
    cache.close()
    assert "answer cache" not in fresh.error
    assert (replayed.status, replayed.cached, replayed.requests) == ("parse_error", True, 0)
    assert replayed.error == (
        "unreadable after 2 replies: no JSON dict in the reply (the reply came from the answer cache "
        f"{tmp_path / 'answers.sqlite'}; to ask the endpoint instead, set the tool's cache path, "
        "e.g. judge_cache, to '')"
    )


async def test_a_run_at_the_same_broken_endpoint_asks_again_and_fails_again(tmp_path: Path) -> None:
    with OpenAIStub(lambda request: GARBAGE) as bad:
        await ask_once(bad, tmp_path / "answers.sqlite")
        again = await ask_once(bad, tmp_path / "answers.sqlite")
        # the first request is sent again (refreshed); the repair request's reply is this run's: sent once more too
        assert bad.request_count == 4
    assert again.status == "parse_error" and "answer cache" not in again.error


async def test_umbrela_after_a_broken_endpoint_grades_every_pair_at_a_working_one(tmp_path: Path) -> None:
    settings = umbrela_settings(tmp_path, depth=2)
    with OpenAIStub(lambda request: GARBAGE) as bad, pytest.raises(Exception, match="parse_error"):
        await call_job(run_umbrela, **settings, judge_llm=llm_settings(bad, max_retries=0), backoff_base=0.01)
    grades = oracle(sample_grades(), default=1)
    with OpenAIStub(grades) as good:
        result = await call_job(run_umbrela, **settings, judge_llm=llm_settings(good, max_retries=0))
        assert good.request_count > 0
    assert result["counts"]["ok"] == result["counts"]["pairs"] and result["failed"]["count"] == 0


async def test_batch_mode_after_a_broken_endpoint_asks_again_and_ends(tmp_path: Path) -> None:
    """In batch mode an earlier run's unreadable reply goes into the next batch; the passes still end
    (answers this run's batches brought are used, even when a repeated passage asks for one twice)."""
    settings = umbrela_settings(tmp_path, depth=10)
    with OpenAIStub(lambda request: GARBAGE) as bad, pytest.raises(Exception, match="parse_error"):
        await call_job(run_umbrela, **settings, judge_llm=llm_settings(bad, max_retries=0), backoff_base=0.01)
    batch = {"mode": "batch", "batch_max_requests": 1000, "batch_max_bytes": 10**6, "batch_poll_interval": 0.05}
    with BatchStub(oracle(sample_grades(), default=1), max_requests=1000, max_bytes=10**6) as server:
        result = await call_job(run_umbrela, **settings, judge_llm=llm_settings(server, max_retries=0, **batch))
        assert server.uploads == 1 and sum(server.batch_lines) == 171  # the 171 unique requests, once
    assert result["counts"]["ok"] == 180 and result["failed"]["count"] == 0


async def test_an_unreadable_reply_a_batch_brought_stays_final_and_the_error_names_the_cache(tmp_path: Path) -> None:
    """Asking again would cost another batch round: the earlier batch's reply is replayed, and the error says so."""
    settings = umbrela_settings(tmp_path, depth=1)
    batch = {"mode": "batch", "batch_max_requests": 1000, "batch_max_bytes": 10**6, "batch_poll_interval": 0.05}
    for run, responder in enumerate([lambda request: GARBAGE, oracle(sample_grades(), default=1)]):
        with BatchStub(responder, max_requests=1000, max_bytes=10**6) as server:
            with pytest.raises(Exception, match="parse_error") as failed:
                await call_job(run_umbrela, **settings, judge_llm=llm_settings(server, max_retries=0, **batch))
            assert server.uploads == (1 - run)
        assert ("answer cache" in str(failed.value)) == (run == 1)
        assert "judge_cache" in str(failed.value) or run == 0
