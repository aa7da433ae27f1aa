"""The http kind against a real local service: replies read with JMESPath, and every injected fault recorded
with its reason (never a crash, never a retry where none is due)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.target.conftest import ask, failing, records
from tests.target.faults import Service
from ultra_kit.inprocess import ToolFailure

READ = {"answer": "answer", "contexts": "contexts", "context_text": "text", "context_id": "id",
        "context_score": "score"}  # fmt: skip
BODY = {"question": "{{ question }}", "id": "{{ id }}", "history": "{{ history }}", "k": "{{ settings.top_k }}"}


@pytest.fixture(autouse=True)
def _short_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without Retry-After wait 0.01 s before the first retry, not 0.5 s (as the LLM tests pace their client):
    the tests count attempts and reasons, never the wait (a Retry-After is still waited as given)."""
    monkeypatch.setattr("servers.target.runner.calls.BACKOFF_FIRST", 0.01)


def target(url: str, **more):
    return {"kind": "http", "url": url, "body": BODY, "settings": {"top_k": 3}, "max_failed_fraction": 1.0,
            "max_retries": 2, **READ, **more}  # fmt: skip


def test_answers_passages_run_and_what_the_service_received(tmp_path, service):
    result = ask(tmp_path, ["what is x?", 'a "quoted" one'], target(f"{service.url}/ask"), id_ls=["q1", "q2"])
    assert result["pred_ls"] == ["A:what is x?", 'A:a "quoted" one']
    assert result["ret_ids"] == [["q1-d1", "q1-d2"], ["q2-d1", "q2-d2"]]
    assert result["ret_psg"][0] == ["passage one for what is x?", "passage two"]
    bodies = sorted((s["body"] for s in service.seen), key=lambda b: b["id"])
    assert bodies[1] == {"question": 'a "quoted" one', "id": "q2", "history": [], "k": 3}  # native values
    run = Path(result["run_path"]).read_text().splitlines()
    assert run[:2] == ["q1 Q0 q1-d1 1 2 target", "q1 Q0 q1-d2 2 1 target"]
    rows = records(result)
    assert rows[0]["usage"] == {"prompt_tokens": 7, "completion_tokens": 3}
    assert rows[0]["contexts"][0] == {"text": "passage one for what is x?", "id": "q1-d1", "score": 2.5}
    assert result["latency"]["count"] == 2 and result["latency"]["max"] >= result["latency"]["p50"] > 0
    assert result["failed"]["count"] == 0 and result["answered_id_ls"] == ["q1", "q2"]


def test_429_with_retry_after_and_500_are_retried(tmp_path, service):
    for path in ("flaky429", "flaky500"):
        result = ask(tmp_path, ["q"], target(f"{service.url}/{path}"), id_ls=[path])
        assert result["pred_ls"] == ["A:q"]
        assert records(result)[0]["attempts"] == 2
        assert service.count(f"/{path}") == 2


@pytest.mark.parametrize(
    ("path", "reason", "attempts"),
    [
        ("always500", "http_status", 3),  # retried max_retries times
        ("junk", "unreadable", 1),  # not retried
        ("truncated", "connection", 3),
        ("drop", "connection", 3),
        ("sse_cut", "unreadable", 3),
        ("big", "unreadable", 1),
        ("deep", "unreadable", 1),
        ("nowhere", "http_status", 1),  # 404
    ],
)
def test_faults_are_recorded_with_their_reason(tmp_path, service, path, reason, attempts):
    stream = {"stream": True, "stream_delta": "delta"} if path.startswith("sse") else {}
    settings = target(f"{service.url}/{path}", max_response_bytes=10_000_000, **stream)
    result = ask(tmp_path, ["q", "r"], settings, id_ls=["ok", "bad"], conv_ls=["a", "b"])  # "ok" asks /ask below
    rows = records(result)
    assert [r["status"] for r in rows] == ["ok", "error"]
    assert rows[1]["reason"] == reason and rows[1]["attempts"] == attempts
    assert result["pred_ls"] == ["Hello q" if stream else "A:q", None]
    assert result["failed"]["reasons"] == {reason: 1} and result["failed"]["ids"] == ["bad"]
    assert result["answered_id_ls"] == ["ok"] and "bad" not in Path(result["run_path"]).read_text()


def test_slow_replies_time_out(tmp_path, service):
    service.slow_seconds = 2.0
    _, rows = failing(tmp_path, ["q"], target(f"{service.url}/slow", timeout=0.3, max_retries=0))
    assert rows[0]["reason"] == "timeout"


def test_a_stream_is_read_to_the_end(tmp_path, service):
    read = {"stream": True, "stream_delta": "delta", "contexts": "contexts", "answer": ""}
    result = ask(tmp_path, ["world"], target(f"{service.url}/sse", **read))
    assert result["pred_ls"] == ["Hello world"]
    assert result["ret_ids"] == [["s1"]]


def test_a_redirect_to_another_host_drops_the_headers(tmp_path, service):
    with Service("localhost") as other:
        service.other_url = other.url
        headers = {"Authorization": "Bearer sekrit-key", "X-Tenant": "t1"}
        result = ask(tmp_path, ["q"], target(f"{service.url}/redirect", headers=headers))
        assert result["pred_ls"] == ["A:q"]
        (first,) = [s for s in service.seen if s["path"] == "/redirect"]
        assert first["headers"]["Authorization"] == "Bearer sekrit-key"
        (arrived,) = other.seen
        assert "Authorization" not in arrived["headers"] and "X-Tenant" not in arrived["headers"]
        assert arrived["body"]["question"] == "q"  # 307 keeps the method and the body


def test_empty_and_too_long_answers_are_flagged(tmp_path, service):
    result = ask(tmp_path, ["a", "b", "c"], target(f"{service.url}/refusal", max_answer_chars=10),
                 id_ls=["none", "good", "full"])  # fmt: skip
    rows = records(result)
    assert [r["flags"] for r in rows] == [["empty"], [], ["too_long"]]
    assert result["pred_ls"] == ["", "fine", "y" * 10] and rows[2]["answer_chars"] == 50
    assert result["target_info"]["empty"] == 1 and result["target_info"]["too_long"] == 1


def test_past_max_failed_fraction_the_step_fails_naming_the_reasons(tmp_path, service):
    with pytest.raises(ToolFailure) as failure:
        ask(tmp_path, ["q", "r"], target(f"{service.url}/junk", max_failed_fraction=0.1))
    message = str(failure.value)
    assert "2 of 2 items failed" in message and "unreadable 2" in message and "not JSON" in message


def test_a_missing_answer_field_is_named(tmp_path, service):
    _, (row,) = failing(tmp_path, ["q"], target(f"{service.url}/ask", answer="reply.text"))
    assert row["reason"] == "missing_answer" and "reply.text" in row["detail"]


@pytest.mark.parametrize("key", ["timeout", "rate_limit", "max_answer_chars", "max_response_bytes", "max_json_depth"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_runner_number_that_is_not_finite_is_refused_by_name(tmp_path: Path, key: str, value: float) -> None:
    """NaN passed ``value < low`` (no comparison holds for it): a NaN timeout or rate limit was taken, a NaN or
    infinite size crashed where it became a whole number. Refused before anything is asked (the URL answers none)."""
    from ultra_base.errors import InputError

    with pytest.raises((InputError, ToolFailure), match=rf"target\.{key} must be a finite number of at least"):
        ask(tmp_path, ["a"], target("http://127.0.0.1:9/none", **{key: value}))
    assert not (tmp_path / "target").exists()
