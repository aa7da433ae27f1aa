"""A rubric's scale drives its chart: rubric_judge (against the local stub) records each rubric's kind from its
declared scale (two labels worth 0 and 1: binary; an integer scale or other labels: graded), and the report draws
the binary rubric as a rate with its Wilson interval and the graded ones as the share of items at each grade."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from servers.judge.rubrics.declaration import read_rubrics
from servers.judge.tools.rubric import rubric_judge
from tests.judge.conftest import call_job, llm_settings
from tests.report.helpers import build
from tests.support.openai_stub import OpenAIStub, content_of

POLITE = {"name": "polite", "criteria": "Is the answer polite?", "steps": ["Read it."], "scale": [1, 5],
          "inputs": ["question", "answer"]}  # fmt: skip
GROUNDED = {"name": "grounded", "criteria": "Does the answer rest on the question?", "steps": ["Read it."],
            "scale": {"pass": 1, "fail": 0}, "inputs": ["question", "answer"]}  # fmt: skip
TONE = {"name": "tone", "criteria": "How warm is the tone?", "steps": ["Read it."],
        "scale": {"warm": 2, "neutral": 1, "cold": 0}, "inputs": ["question", "answer"]}  # fmt: skip
ANSWERS = ["polite=5 grounded=pass tone=warm", "polite=2 grounded=fail tone=cold",
           "polite=4 grounded=pass tone=neutral", "polite=4 grounded=fail tone=warm"]  # fmt: skip


def responder(request: dict[str, Any]) -> str:
    """The score the answer asks for, for the rubric whose criteria the prompt states."""
    text = content_of(request)
    name = next(r["name"] for r in (POLITE, GROUNDED, TONE) if r["criteria"] in text)
    score = re.search(rf"{name}=(\w+)", text.rsplit("Item to judge:", 1)[1]).group(1)
    return json.dumps({"reasoning": "read it", "score": int(score) if score.isdigit() else score})


def judged(folder: Path, rubrics: list[dict[str, Any]]) -> dict[str, Any]:
    """rubric_judge of the four answers against the stub."""
    with OpenAIStub(responder=responder) as stub:
        settings = llm_settings(stub, max_retries=1)
        return anyio.run(lambda: call_job(rubric_judge, q_ls=["q1", "q2", "q3", "q4"], pred_ls=ANSWERS,
                                          rubrics=rubrics, judge_llm=settings, save_path=str(folder / "judge"),
                                          rubric_top_logprobs=0))  # fmt: skip


def _rubric(scale: Any) -> Any:
    (rubric,) = read_rubrics([{**POLITE, "scale": scale}], path=None)
    return rubric


@pytest.mark.parametrize(
    ("scale", "kind"),
    [([1, 5], "graded"), ([0, 1], "graded"), ({"pass": 1, "fail": 0}, "binary"), ({"Yes": 0, "No": 1}, "binary"),
     ({"yes": 1, "partly": 0.5, "no": 0}, "graded"), ({"good": 1, "bad": -1}, "graded")],
)  # fmt: skip
def test_the_kind_comes_from_the_scale(scale: Any, kind: str) -> None:
    assert _rubric(scale).scale.kind == kind


def test_the_result_file_records_the_kinds_and_the_report_draws_them(tmp_path: Path) -> None:
    result = judged(tmp_path, [POLITE, GROUNDED, TONE])
    document = json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))
    assert document["metric_kinds"] == {"polite": "graded", "grounded": "binary", "tone": "graded"}
    assert [item["polite"] for item in document["items"]] == [5, 2, 4, 4]
    files = build([result["result_path"]], tmp_path / "report")
    page = files.report_path.read_text(encoding="utf-8")
    charts = {
        name: kind
        for kind, name in re.findall(r'<img class="chart" data-kind="(\w+)"[^>]*alt="\w+ chart of (\w+)"', page)
    }
    assert charts == {"polite": "graded", "grounded": "binary", "tone": "graded"}
    names = sorted(p.name for p in files.plot_paths)
    assert names == ["grades_polite.png", "grades_tone.png", "rate_grounded.png"]
    assert all(p.stat().st_size > 0 for p in files.plot_paths)
    grounded = np.array([item["grounded"] for item in document["items"]])
    assert grounded.tolist() == [1, 0, 1, 0]  # the rate chart's 50%


def test_without_recorded_kinds_the_rubric_is_continuous(tmp_path: Path) -> None:
    """The kind is read from the file, not guessed: a file without metric_kinds draws box plots / ECDFs."""
    result = judged(tmp_path, [GROUNDED])
    document = json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))
    del document["metric_kinds"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(document), encoding="utf-8")
    files = build([bare], tmp_path / "report")
    assert [p.name for p in files.plot_paths] == ["ecdf_grounded.png"]
