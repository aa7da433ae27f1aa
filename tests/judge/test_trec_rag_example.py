"""examples/trec_rag.yaml end to end with `ultra run` against the stub: UMBRELA, nuggets, citations, IDK, one table."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import yaml

from servers.judge.answers.judges.basic import split_citations
from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, SECRET, llm_settings, oracle
from tests.judge.nugget_stub import stage
from tests.judge.test_nuggets_example import responder as nugget_responder
from tests.judge.test_umbrela import sample_grades
from tests.support.openai_stub import OpenAIStub, content_of
from tests.support.summary_check import check_summary

ANSWERS = ROOT / "data" / "trec_rag" / "answers.jsonl"


def _field(text: str, name: str) -> str:
    return re.search(rf"\n\n{name}: (.*?)\n\nYour JSON", text, re.DOTALL).group(1)


def responder():
    """UMBRELA and nuggets as in the nuggets example; citation: "full" when the passage contains the
    sentence's first word, else "none"; IDK: "partial" when the answer contains "not", else "no"."""
    nuggets = nugget_responder(oracle(sample_grades(), default=1))

    def respond(request) -> str:
        text = content_of(request)
        if "\n\nSentence: " in text:
            sentence = re.search(r"\n\nSentence: (.*?)\n\nPassage: ", text, re.DOTALL).group(1)
            first = sentence.split()[0].lower()
            return json.dumps({"support": "full" if first in _field(text, "Passage").lower() else "none"})
        if '"attempted"' in text:
            idk = "partial" if " not " in _field(text, "Answer") else "no"
            return json.dumps({"attempted": "yes", "idk": idk})
        return nuggets(request)

    return respond


def kind(request) -> str:
    text = content_of(request)
    return "citation" if "\n\nSentence: " in text else "idk" if '"attempted"' in text else stage(request)


def test_trec_rag_example_runs(tmp_path: Path) -> None:
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "trec_rag_parameter.yaml").read_text())
    with OpenAIStub(responder=responder()) as stub:
        params["judge"].update(
            judge_llm={**llm_settings(stub), "api_key": "${OPENAI_API_KEY}"},
            judge_cache=str(tmp_path / "cache.sqlite"),
            save_path=str(tmp_path / "judge"),
        )
        param_file = tmp_path / "trec_rag_parameter.yaml"
        param_file.write_text(yaml.safe_dump(params))
        done = run_ultra(
            "run",
            "examples/trec_rag.yaml",
            "--param",
            str(param_file),
            "--output-dir",
            str(tmp_path / "run"),
            cwd=ROOT,
            env={"OPENAI_API_KEY": SECRET},
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        check_summary(done, ROOT)
        counts: dict[str, int] = {}
        for request in stub.chat_requests():
            counts[kind(request)] = counts.get(kind(request), 0) + 1
    answers = [json.loads(line) for line in ANSWERS.read_text().splitlines()]
    (table_file,) = (tmp_path / "judge").glob("trec_rag_table_*.csv")
    with table_file.open(newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    rows = json.loads(table_file.with_suffix(".json").read_text())
    assert len(table) == len(rows) == len(answers) == 36
    # the rows print as a table at the end of the run, cut to fit, the rest named by its file
    first = ["1", rows[0]["qid"], rows[0]["run"]]
    shown = [line for line in done.stdout.splitlines() if line.split()[:3] == first]
    assert shown, done.stdout
    assert [(r["qid"], r["run"]) for r in rows] == [(a["qid"], a["run"]) for a in answers]
    assert {"umbrela_mean_score", "nugget_vital_strict", "citation_f1", "idk", "answer_attempted"} <= set(table[0])
    # one IDK request per answer, one citation request per distinct (question, sentence, cited passage)
    assert counts["idk"] == 36
    cited = {
        (a["question"], sentence, a["passages"][n - 1])
        for a in answers
        for sentence, numbers in split_citations(a["answer"])
        for n in numbers
    }
    assert counts["citation"] == len(cited)
    # the table's values are the judges' own, row by row
    (citation_file,) = (tmp_path / "judge").glob("citation_judge_*.json")
    items = {i["id"]: i for i in json.loads(citation_file.read_text())["items"]}
    for row, answer in zip(rows, answers, strict=True):
        item = items[answer["id"]]
        assert row["citation_status"] == item["status"] == "ok"
        assert row["citation_f1"] == item["citation_f1"]
        assert row["idk_status"] == "ok" and row["answer_attempted"] == 1.0
        assert row["idk"] == (0.5 if " not " in answer["answer"] else 0.0)
        assert float(table[rows.index(row)]["citation_f1"]) == row["citation_f1"]
    assert any(r["citation_f1"] > 0 for r in rows) and any(r["nugget_all"] for r in rows)
    memory_file = next((tmp_path / "run").rglob("memory.json"))
    memory = json.loads(memory_file.read_text())
    assert memory["table_path"].startswith("files/") and memory["num_rows"] == 36  # inside the run folder
    assert (memory_file.parent / memory["table_path"]).read_bytes() == table_file.read_bytes()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
