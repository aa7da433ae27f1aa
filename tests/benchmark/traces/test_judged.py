"""Production answers judged with no golden answers: the LlamaIndex chain's traces -> ``ultra run`` of get_data and
judge.faithfulness, the judge an OpenAI-compatible stub on 127.0.0.1 that grants a statement when its words are in
the passages of its request. Each trace's answer is judged against the passages its own retriever returned, and the
judge's items are keyed by trace id."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.openai_stub import OpenAIStub, content_of

PIPELINE = {
    "servers": {"benchmark": "servers/benchmark", "judge": "servers/judge"},
    "pipeline": ["benchmark.get_data", "judge.faithfulness"],
}
KEY = "sk-test-traces-judged-7d1e"
ENV = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1", "ULTRA_ALLOW_OUTSIDE_READS": "1", "OPENAI_API_KEY": KEY}


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def between(text: str, start: str, end: str) -> str:
    return re.search(rf"{re.escape(start)}(.*?){re.escape(end)}", text, re.DOTALL).group(1)


def grants(statement: str, passages: str) -> int:
    """The stub's verdict: every word of the statement longer than 3 letters (or a number) is in the passages."""
    wanted = {w for w in words(statement) if len(w) > 3 or w.isdigit()}
    return int(wanted <= words(passages))


def test_faithfulness_of_production_answers(llamaindex_otlp: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    path, seen = llamaindex_otlp
    asked: dict[str, list[str]] = {}  # statement -> the passages blocks it was judged against

    def respond(request: dict[str, Any]) -> str:
        text = content_of(request)
        if '{"statements"' in text:
            return json.dumps({"statements": [between(text, "\n\nAnswer: ", "\n\nYour JSON")]})
        passages = between(text, "Passages:\n", "\n\nStatements (")
        statements = [line.split(". ", 1)[1] for line in between(text, "):\n", "\n\nVerdicts").splitlines() if line]
        for statement in statements:
            asked.setdefault(statement, []).append(passages)
        return json.dumps([grants(s, passages) for s in statements])

    spec = {
        "path": str(path),
        "format": "otlp",
        "key_map": {"q_ls": "question", "pred_ls": "answer", "ret_psg": "contexts", "id_ls": "trace_id"},
    }
    with OpenAIStub(responder=respond) as stub:
        judge_llm = {"base_url": stub.base_url, "model_id": "stub-judge", "api_key": "${OPENAI_API_KEY}"}
        params = {
            "benchmark": {"benchmark": spec},
            "judge": {"judge_llm": judge_llm, "judge_cache": str(tmp_path / "cache.sqlite"),
                      "save_path": str(tmp_path / "judge")},
        }  # fmt: skip
        (tmp_path / "p.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
        (tmp_path / "pipe.yaml").write_text(yaml.safe_dump(PIPELINE), encoding="utf-8")
        done = run_ultra(
            "run", str(tmp_path / "pipe.yaml"), "--param", str(tmp_path / "p.yaml"), "--output-dir",
            str(tmp_path / "runs"), cwd=ROOT, env=ENV, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = (tmp_path / "runs").glob("pipe_*")
    memory = json.loads((run / "memory.json").read_text(encoding="utf-8"))
    assert memory["q_ls"] == [s["question"] for s in seen] and memory["ret_psg"] == [s["contexts"] for s in seen]
    (result,) = (tmp_path / "judge").glob("*.json")
    items = json.loads(result.read_text(encoding="utf-8"))["items"]
    assert [item["id"] for item in items] == memory["id_ls"]
    for item, s in zip(items, seen, strict=True):
        assert item["status"] == "ok"
        assert item["faithfulness"] == grants(s["answer"], " ".join(s["contexts"]))
        judged = asked[s["answer"]]  # the answer was judged against the passages its trace retrieved
        assert judged and all(all(context in block for context in s["contexts"]) for block in judged)
    assert KEY not in done.stdout + done.stderr
