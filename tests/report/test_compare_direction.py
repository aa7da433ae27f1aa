"""compare honours a metric's direction: toxicity is declared lower-is-better in the judge's registry, the offline
toxicity judge writes that into its result file, and compare's wins, "better" letters, regressions and
improvements then count a fall as better. The expected figures are computed here from the files' own values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from servers.judge.answers.run import build_items, run_answer_judge
from tests.judge.test_risk_judges import labelled_sentences
from tests.report.test_compare import call_compare

OFFLINE = {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model_id": "none", "api_key": ""}


async def toxicity_file(answers: list[str], folder: Path) -> Path:
    """The real offline toxicity judge over ``answers`` (ids q0, q1 ...): its result file."""
    items = build_items(["q"] * len(answers), answers, id_ls=[f"q{i}" for i in range(len(answers))])
    result = await run_answer_judge(
        "toxicity",
        items,
        judge_llm=OFFLINE,
        judge_cache="",
        save_path=str(folder),
        max_failed_fraction=0.0,
        prompt_file={},
        language="en",
    )
    return Path(result["result_path"])


@pytest.mark.anyio
async def test_toxicity_falling_is_better_in_compare(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    rows = labelled_sentences()[18:22]  # two offensive (toxic 1), two neither (toxic 0): test_risk_judges
    offensive, clean = [r["text"] for r in rows[:2]], [r["text"] for r in rows[2:]]
    a = await toxicity_file([offensive[0], offensive[1], clean[0], clean[1]], tmp_path / "a")  # toxic 1 1 0 0
    b = await toxicity_file([clean[0], offensive[1], clean[1], clean[0]], tmp_path / "b")  # toxic 0 1 0 0
    assert json.loads(a.read_text("utf-8"))["higher_is_better"] == {"toxicity": False, "toxic": False}

    result = call_compare([a, b], tmp_path / "cmp")
    rows_by = {row["metric"]: row for row in result["rows"]}
    toxic = rows_by["toxic"]
    # item q0 fell 1 -> 0 (better), the others stayed: 1 win, 3 ties, 0 losses; B - A = -1/4
    assert (toxic["wins"], toxic["ties"], toxic["losses"]) == (1, 3, 0)
    assert toxic["diff"] == pytest.approx(-0.25) and toxic["higher_is_better"] is False

    def values(path: Path) -> np.ndarray:
        return np.array([item["toxicity"] for item in json.loads(path.read_text("utf-8"))["items"]])

    x, y = values(a), values(b)
    probability = rows_by["toxicity"]
    expected = (int((y < x).sum()), int((y == x).sum()), int((y > x).sum()))  # B wins where it is less toxic
    assert (probability["wins"], probability["ties"], probability["losses"]) == expected
    assert expected[0] >= 1 and expected[0] != int((y > x).sum())  # the direction changes the count

    assert "toxic (lower is better)" in result["text"] and "better / equal / worse" in result["text"]
    document = json.loads(Path(result["json_path"]).read_text("utf-8"))
    change = next(c for c in document["changes"] if c["metric"] == "toxic")
    assert [i["id"] for i in change["improvements"]] == ["q0"] and change["regressions"] == []
    assert change["higher_is_better"] is False
    page = Path(result["compare_path"]).read_text("utf-8")
    assert "<strong>toxic</strong> (lower is better)" in page


def test_a_falling_higher_is_better_metric_stays_a_regression(tmp_path: Path) -> None:
    """The same fall of a metric without a declaration (an older file, or any higher-is-better one) is a loss."""
    for name, values in (("a", [1.0, 1.0, 0.0, 0.0]), ("b", [0.0, 1.0, 0.0, 0.0])):
        document = {"id_ls": ["q0", "q1", "q2", "q3"], "em": values, "settings": {"metrics": ["em"]}}
        (tmp_path / f"{name}.json").write_text(json.dumps(document), encoding="utf-8")
    result = call_compare([tmp_path / "a.json", tmp_path / "b.json"], tmp_path / "cmp")
    (row,) = result["rows"]
    assert (row["wins"], row["ties"], row["losses"]) == (0, 3, 1) and row["higher_is_better"] is True
    document = json.loads(Path(result["json_path"]).read_text("utf-8"))
    assert [i["id"] for i in document["changes"][0]["regressions"]] == ["q0"]
