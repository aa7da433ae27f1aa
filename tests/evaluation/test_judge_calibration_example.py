"""examples/judge_calibration.yaml end to end with `ultra run`: offline, as shipped, on MT-RAG's recorded faithfulness
scores with no key; and live (recorded_judgments: '') with the faithfulness judge on the local stub, scripted so that
its score follows the human label of each answer; then ppi with the example's human labels."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from servers.evaluation.judged.ppi import judged_mean
from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, in_background
from tests.support.openai_stub import OpenAIStub, content_of
from tests.support.summary_check import check_summary

PARAMS = ROOT / "examples" / "parameters" / "judge_calibration_parameter.yaml"
RATINGS = {
    (r["model_id"], r["task_id"]): (sum(r["faithfulness"]) / len(r["faithfulness"]) - 1) / 3
    for r in map(json.loads, (ROOT / "data" / "mtrag" / "judged_human_477.jsonl").read_text().splitlines())
}


def scripted_faithfulness():
    """Four statements per answer; of them round(4 * the answer's human label) supported."""
    records = [json.loads(line) for line in (ROOT / "data/mtrag/mtrag_sample.jsonl").read_text().splitlines()]
    by_answer = {r["prediction"].strip(): k for k, r in enumerate(records)}

    def reply(request: dict) -> str:
        text = content_of(request)
        if "self-contained statements" in text:
            answer = text.rsplit("Answer: ", 1)[1].rsplit("Your JSON object:", 1)[0].strip()
            return json.dumps({"statements": [f"claim {j} of record {by_answer[answer]}" for j in range(4)]})
        record = records[int(re.findall(r"of record (\d+)", text)[0])]
        supported = round(4 * RATINGS[record["model_id"], record["task_id"]])
        return json.dumps([1] * supported + [0] * (4 - supported))

    return reply, records


def test_judge_calibration_example(tmp_path: Path) -> None:
    reply, records = scripted_faithfulness()
    params = yaml.safe_load(PARAMS.read_text())
    params["judge"]["judge_llm"].update(model_id="stub", api_key="", max_retries=1)
    params["judge"].update(judge_cache="", save_path=str(tmp_path / "judge"), recorded_judgments="")  # the live path
    params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
    params["report"]["save_path"] = str(tmp_path / "report")
    with OpenAIStub(responder=reply) as stub:
        params["judge"]["judge_llm"]["base_url"] = stub.base_url
        (tmp_path / "p.yaml").write_text(yaml.safe_dump(params))
        done = run_ultra("run", "examples/judge_calibration.yaml", "--param", str(tmp_path / "p.yaml"), cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert stub.request_count > 0  # the judge asked the endpoint
    check_summary(done, ROOT)
    result = json.loads(next((tmp_path / "evaluation").glob("ppi_*.json")).read_text())
    labels = [json.loads(line) for line in (ROOT / "data/mtrag/judge_calibration_human.jsonl").read_text().splitlines()]
    for system, got in result["ppi_res"].items():
        mine = [r for r in records if r["model_id"] == system]
        human = {r["item_id"]: r["label"] for r in labels if r["system"] == system}
        score = {r["task_id"]: round(4 * RATINGS[system, r["task_id"]]) / 4 for r in mine}
        ids = [r["task_id"] for r in mine]
        expected = judged_mean(
            [human[i] for i in ids if i in human],
            [score[i] for i in ids if i in human],
            [score[i] for i in ids if i not in human],
            0.05,
        )
        assert got["n_human"] == 10 and got["n_unlabelled"] == 2
        assert got["estimate"] == pytest.approx(expected["estimate"], abs=1e-12)
        assert got["lambda"] == pytest.approx(expected["lambda"], abs=1e-12)
    assert len(result["ppi_diff"]) == 3
    page = next((tmp_path / "report").glob("report_*/report.html")).read_text()  # the last step: ppi's report
    table = page.split('id="ppi-table-1"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr><td>") == len(result["ppi_res"]) == 3
    assert 'id="ppi-diff-table-1"' in page and 'data-kind="intervals"' in page


def offline_calibration(tmp_path: Path) -> Command:
    """The shipped parameter file (results under ``tmp_path``) run without OPENAI_API_KEY: a background run."""
    params = yaml.safe_load(PARAMS.read_text())
    params["judge"]["save_path"] = str(tmp_path / "judge")
    params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
    params["report"]["save_path"] = str(tmp_path / "report")
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(params))
    args = ("run", "examples/judge_calibration.yaml", "--param", str(tmp_path / "p.yaml"), "--output-dir",
            str(tmp_path / "runs"))  # fmt: skip
    return Command(args, timeout=300, unset=("OPENAI_API_KEY",))


@in_background(offline_calibration)
def test_judge_calibration_runs_offline_on_mtrag_recorded_scores_without_a_key(background_run: Finished) -> None:
    """The shipped parameter file, OPENAI_API_KEY unset: the judge's scores are MT-RAG's stored RL_F_idk of each
    answer (nothing sent), and ppi's estimates are what PPI++ gives on those scores and the example's labels."""
    done, tmp_path = background_run.done, background_run.folder
    params = yaml.safe_load(PARAMS.read_text())
    assert params["judge"]["recorded_judgments"] == "data/mtrag/recorded_faithfulness.jsonl"
    assert done.returncode == 0, done.stderr[-3000:]
    judged = json.loads(next((tmp_path / "judge").glob("faithfulness_judge_*.json")).read_text())
    recorded = params["judge"]["recorded_judgments"]
    assert judged["usage"] == {"requests": 0, "recorded": recorded} and judged["settings"] == {
        "recorded_judgments": recorded
    }
    (costs,) = [line for line in done.stdout.splitlines() if line.startswith("judge.faithfulness ")]
    assert costs.split()[1:3] == ["recorded", "0"], costs  # the cost table names no model that was not asked
    records = [json.loads(line) for line in (ROOT / "data/mtrag/mtrag_sample.jsonl").read_text().splitlines()]
    assert [item["faithfulness"] for item in judged["items"]] == [r["expected"]["RL_F_idk"] for r in records]
    assert {item["status"] for item in judged["items"]} == {"ok"} and judged["failed"]["count"] == 0
    labels = [json.loads(line) for line in (ROOT / "data/mtrag/judge_calibration_human.jsonl").read_text().splitlines()]
    result = json.loads(next((tmp_path / "evaluation").glob("ppi_*.json")).read_text())
    for system, got in result["ppi_res"].items():
        mine = [r for r in records if r["model_id"] == system]
        human = {r["item_id"]: r["label"] for r in labels if r["system"] == system}
        score = {r["task_id"]: r["expected"]["RL_F_idk"] for r in mine}
        ids = [r["task_id"] for r in mine]
        expected = judged_mean([human[i] for i in ids if i in human], [score[i] for i in ids if i in human],
                               [score[i] for i in ids if i not in human], 0.05)  # fmt: skip
        assert got["estimate"] == pytest.approx(expected["estimate"], abs=1e-12)
        assert got["judge_only"]["estimate"] == pytest.approx(sum(score.values()) / len(score), abs=1e-12)
    llama = result["ppi_res"]["llama-3.1-405b-instruct"]  # the numbers the example's header quotes
    assert (round(llama["judge_only"]["estimate"], 2), round(llama["human_only"]["estimate"], 2)) == (0.59, 0.69)
    assert (round(llama["estimate"], 2), round(llama["classical"]["estimate"], 2)) == (0.72, 1.18)
