"""Answers are reused across runs only from a named target_cache; ultra run --estimate counts the requests."""

from __future__ import annotations

from tests.conftest import ROOT, run_ultra
from tests.target.conftest import ask

BODY = {"question": "{{ question }}", "id": "{{ id }}"}


def test_no_cache_unless_one_is_named(tmp_path, service):
    target = {"kind": "http", "url": f"{service.url}/ask", "body": BODY}
    ask(tmp_path, ["a", "b"], target)
    ask(tmp_path, ["a", "b"], target)
    assert service.count("/ask") == 4  # the system may have changed: asked again


def test_a_named_cache_answers_the_second_run(tmp_path, service):
    target = {"kind": "http", "url": f"{service.url}/ask", "body": BODY, "contexts": "contexts",
              "target_cache": str(tmp_path / "replies.sqlite")}  # fmt: skip
    first = ask(tmp_path, ["a", "b"], target)
    second = ask(tmp_path, ["a", "b"], target)
    assert service.count("/ask") == 2
    assert second["pred_ls"] == first["pred_ls"] == ["A:a", "A:b"] and second["ret_ids"] == first["ret_ids"]
    assert second["target_info"]["cached"] == 2 and second["target_info"]["requests"] == 0
    assert second["latency"]["count"] == 0  # cached replies say nothing about the system's latency


def test_estimate_counts_the_targets_requests_and_sends_none(tmp_path, service):
    params = (ROOT / "examples/parameters/eval_target_http_parameter.yaml").read_text()
    params = params.replace("http://127.0.0.1:8765/ask", f"{service.url}/ask").replace("limit: -1", "limit: 7")
    (tmp_path / "p.yaml").write_text(params)
    done = run_ultra("run", str(ROOT / "examples/eval_target_http.yaml"), "--param", str(tmp_path / "p.yaml"),
                     "--estimate", cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() + done.stderr.splitlines() if x.startswith("target.ask"))
    assert line.split()[1:3] == ["target:http", "7"]
    assert service.seen == []
