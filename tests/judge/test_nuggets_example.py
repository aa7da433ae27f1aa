"""examples/nuggets.yaml end to end with `ultra run` against the stub; LLM requests per stage counted."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import yaml

from servers.judge.nuggets.run import dump
from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, SECRET, llm_settings, oracle
from tests.judge.nugget_stub import numbered, stage
from tests.judge.test_umbrela import sample_grades
from tests.support.openai_stub import OpenAIStub, content_of
from tests.support.summary_check import check_summary, run_folder

_SO_FAR = re.compile(r"Nuggets so far \(\d+\): (.*?)\n\nPassages:\n(.*?)\n\nUpdated nugget list", re.DOTALL)
_NUGGETS = re.compile(r"Nuggets \(\d+\):\n(.*?)\n\nLabels", re.DOTALL)


def responder(grade):
    """UMBRELA: the human grade; create: the first 4 words of each passage; score: vital when the nugget has
    an even number of characters; assign: support when the answer contains the nugget's first word."""

    def respond(request) -> str:
        kind, text = stage(request), content_of(request)
        if kind == "other":
            return grade(request)
        if kind == "create":
            so_far, passages = _SO_FAR.search(text).groups()
            new = [" ".join(p.split()[1:5]) for p in passages.split("\n") if re.match(r"\d+\. ", p)]
            return json.dumps((json.loads(so_far) + [n for n in new if n])[:30])
        nuggets = numbered(_NUGGETS.search(text).group(1))
        if kind == "score":
            return json.dumps(["vital" if len(n) % 2 == 0 else "okay" for n in nuggets])
        answer = text.split("\n\nAnswer: ", 1)[1].split("\n\nNuggets (", 1)[0].lower()
        return json.dumps(["support" if n.split()[0].lower() in answer else "not_support" for n in nuggets])

    return respond


def test_nuggets_example_runs(tmp_path: Path) -> None:
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "nuggets_parameter.yaml").read_text())
    with OpenAIStub(responder=responder(oracle(sample_grades(), default=1))) as stub:
        params["judge"].update(
            judge_llm={**llm_settings(stub), "api_key": "${OPENAI_API_KEY}"},
            judge_cache=str(tmp_path / "cache.sqlite"),
            save_path=str(tmp_path / "judge"),
        )
        param_file = tmp_path / "nuggets_parameter.yaml"
        param_file.write_text(yaml.safe_dump(params))
        done = run_ultra("run", "examples/nuggets.yaml", "--param", str(param_file), "--output-dir",
                         str(tmp_path / "runs"), cwd=ROOT, env={"OPENAI_API_KEY": SECRET})  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        check_summary(done, ROOT)
        counts = {"create": 0, "score": 0, "assign": 0, "other": 0}
        for request in stub.chat_requests():
            counts[stage(request)] += 1
    (result_file,) = (tmp_path / "judge").glob("nuggetize_*[0-9].json")
    result = json.loads(result_file.read_text())
    records = dump(result["nuggets_path"])
    assert len(records) == 18 and result["counts"]["answers"] == 36
    # requests per stage follow the windows and batches: ceil(P/10), ceil(N/10), runs * ceil(N/10)
    assert counts["create"] == sum(math.ceil(r["num_passages"] / 10) for r in records)
    assert counts["score"] == sum(math.ceil(len(r["nuggets"]) / 10) for r in records)
    assert counts["assign"] == 2 * counts["score"]
    assert result["counts"]["create_failed"] == result["counts"]["assign_failed"] == 0
    for run in ("gpt-4o", "reference"):
        values = [q[run]["all"] for q in result["per_query"].values() if q[run]["status"] == "ok"]
        assert result["aggregate"][run]["all"] == sum(values) / len(values)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    folder = run_folder(done, ROOT)  # both steps' results kept (umbrela's under its step: nuggetize's overwrote it)
    kept = {re.sub(r"_\d{8}_\d{6}(_\d+)?", "", str(p.relative_to(folder / "files")))
            for p in (folder / "files").rglob("*") if p.is_file()}  # fmt: skip
    assert {"judge.umbrela_judge/umbrela_judge.json", "nuggetize.json", "nuggetize.nuggets.jsonl",
            "nuggetize.assignments.jsonl"} <= kept, kept  # fmt: skip
    report = run_ultra("report", str(folder), "--out", str(tmp_path / "report"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr[-3000:]
    with open(tmp_path / "report" / "summary.csv", newline="") as handle:
        shown = {(row["run"], row["metric"]) for row in csv.DictReader(handle)}
    assert {("gpt-4o", "vital"), ("reference", "all"), (folder.name, "MRR")} <= shown, sorted(shown)
    assert not {metric for _, metric in shown} & {"num_nuggets", "num_judged", "num_excluded"}  # counts
