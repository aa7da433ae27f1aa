"""What people and the judge disagree on: the page served at /disagreements in a real Chromium, the same page written by
``--disagreements``, and ``--align`` writing a rubric that rubric_judge reads with the disagreements as examples.
Every figure is checked against an independent computation (tests/client/annotate/labelled.py, sklearn)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from tests.client.annotate import labelled as fixed
from tests.client.annotate.serving import HOSTILE, annotate_server
from tests.conftest import ROOT
from tests.support.chromium import Browser, chromium_missing

LEVELS = ("nominal", "ordinal", "interval")
RUBRIC = {"name": "relevance", "criteria": "How well does the answer serve the question?", "steps": ["Read both."],
          "scale": [0, 3], "inputs": ["question", "answer"]}  # fmt: skip


def expected() -> dict[str, float]:
    from sklearn.metrics import cohen_kappa_score  # scikit-learn's own kappa, imported when a test runs

    human, judge = fixed.judge_pairs()
    return {**{f"alpha_{level}": fixed.alpha(level) for level in LEVELS},
            "kappa": cohen_kappa_score(human, judge),
            "kappa_quadratic": cohen_kappa_score(human, judge, weights="quadratic"),
            "exact_agreement": sum(h == j for h, j in zip(human, judge, strict=True)) / len(human)}  # fmt: skip


def confusion() -> dict[str, int]:
    cells = {f"{i},{j}": 0 for i in range(4) for j in range(4)}
    for h, j in zip(*fixed.judge_pairs(), strict=True):
        cells[f"{int(h)},{int(j)}"] += 1
    return cells


def ultra(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(ROOT / "ultra.py"), *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


class Figures(HTMLParser):
    """The data-value of each figure, the confusion cells and the disagreement rows' keys of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, float] = {}
        self.cells: dict[str, int] = {}
        self.keys: list[str] = []
        self.tags: list[str] = []
        self._cell: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        self.tags.append(tag)
        if "data-name" in found:
            self.values[found["data-name"]] = float(found["data-value"])
        self._cell = found.get("data-cell")
        if tag == "tr" and "data-key" in found:
            self.keys.append(found["data-key"])

    def handle_data(self, data: str) -> None:
        if self._cell:
            self.cells[self._cell] = int(data)
            self._cell = None


@pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")
def test_disagreements_page_in_chromium(tmp_path) -> None:
    data, store = fixed.write_labelled(tmp_path)
    args = (str(data), "--scale", "umbrela", "--annotator", "ann", "--shown", "3")
    with annotate_server(tmp_path, *args) as (base, _), Browser() as browser:
        tab = browser.visit(base + "/disagreements")
        browser.wait_until(tab, "document.getElementById('disagreements') !== null")
        values = browser.evaluate(tab, "JSON.stringify(Object.fromEntries([...document.querySelectorAll("
                                  "'[data-name]')].map(e => [e.dataset.name, Number(e.dataset.value)])))")  # fmt: skip
        cells = browser.evaluate(tab, "JSON.stringify(Object.fromEntries([...document.querySelectorAll("
                                 "'[data-cell]')].map(e => [e.dataset.cell, Number(e.textContent)])))")  # fmt: skip
        keys = browser.evaluate(tab, "[...document.querySelectorAll('tr[data-key]')].map(e => e.dataset.key).join()")
        text = browser.evaluate(tab, "document.getElementById('disagreements').textContent")
        ran = browser.evaluate(tab, "String(window.pwned) + document.querySelectorAll('img, script').length")
        if os.environ.get("ULTRA_DISAGREEMENTS_SCREENSHOT"):  # the docs' screenshot (docs/images/disagreements.png)
            Path(os.environ["ULTRA_DISAGREEMENTS_SCREENSHOT"]).write_bytes(browser.screenshot(tab))
    assert json.loads(values) == pytest.approx(expected(), abs=1e-12)
    assert json.loads(cells) == confusion()
    assert keys.split(",") == fixed.disagreement_order()[:3]  # --shown 3, the largest gap first
    assert HOSTILE in text and "reason 9" in text and "Question 1?" in text  # shown as text, with its question
    assert ran == "undefined0"  # the hostile answer, comment and reasoning ran nothing and made no element


def test_disagreements_file_is_the_same_page_escaped(tmp_path) -> None:
    data, _ = fixed.write_labelled(tmp_path)
    done = ultra(tmp_path, "annotate", str(data), "--disagreements", "output/disagreements.html")
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "output" / "disagreements.html").read_text()
    page = Figures()
    page.feed(html)
    assert page.values == pytest.approx(expected(), abs=1e-12)
    assert page.cells == confusion()
    assert page.keys == fixed.disagreement_order()
    assert "script" not in page.tags and "img" not in page.tags and "&lt;img src=x onerror=" in html
    assert "default-src 'none'" in html
    missing = ultra(tmp_path, "annotate", "--disagreements", "output/d.html", "--store", "output/none.sqlite")
    assert missing.returncode != 0 and "label store" in missing.stderr and "Traceback" not in missing.stderr


@pytest.mark.anyio
async def test_align_writes_a_rubric_that_rubric_judge_reads(tmp_path) -> None:
    from servers.judge.tools.rubric import rubric_judge
    from tests.judge.conftest import call_job, llm_settings
    from tests.support.openai_stub import OpenAIStub, content_of

    rubric = tmp_path / "relevance.yaml"
    rubric.write_text(yaml.safe_dump([RUBRIC], sort_keys=False))
    original = rubric.read_bytes()
    data, store = fixed.write_labelled(tmp_path, scale=str(rubric))
    done = ultra(tmp_path, "annotate", str(data), "--align", str(rubric), "--examples", "4")
    assert done.returncode == 0, done.stderr
    written = tmp_path / "output" / "relevance.aligned.yaml"
    assert rubric.read_bytes() == original  # the original is never edited
    declared = yaml.safe_load(written.read_text())
    examples = declared[0]["examples"]
    labels = fixed.people()
    order = fixed.disagreement_order()[:4]
    assert [e["question"] for e in examples] == [f"Question {k[1:]}?" for k in order]
    assert [e["score"] for e in examples] == [int(fixed.majority(labels[int(k[1:])])) for k in order]
    assert examples[1]["answer"] == HOSTILE and examples[1]["reasoning"] == HOSTILE  # q1: bob's comment, as data
    assert {k: v for k, v in declared[0].items() if k != "examples"} == RUBRIC
    again = ultra(tmp_path, "annotate", str(data), "--align", str(rubric))
    assert again.returncode != 0 and "not overwritten" in again.stderr  # never replaced
    other = ultra(tmp_path, "annotate", str(data), "--align", str(rubric), "--store", "output/none.sqlite")
    assert other.returncode != 0 and "Traceback" not in other.stderr

    def reply(request: dict) -> str:
        return json.dumps({"reasoning": "ok", "score": 2})

    with OpenAIStub(responder=reply) as stub:
        result = call_job(rubric_judge, q_ls=["Is it?"], pred_ls=["Yes."], rubrics_path=str(written),
                          judge_llm=llm_settings(stub), save_path=str(tmp_path / "judge"),
                          rubric_top_logprobs=0)  # fmt: skip
        result = await result if hasattr(result, "__await__") else result
        prompt = content_of(stub.chat_requests()[0])
    assert result["aggregate"]["relevance"] == 2.0
    shown = re.findall(r"Reply: (\{.*?\})\n", prompt + "\n")
    assert [json.loads(s)["score"] for s in shown] == [e["score"] for e in examples]


def test_align_refuses_labels_on_another_scale(tmp_path) -> None:
    rubric = tmp_path / "relevance.yaml"
    rubric.write_text(yaml.safe_dump([RUBRIC]))
    data, _ = fixed.write_labelled(tmp_path)  # labelled on umbrela, not on the rubric
    done = ultra(tmp_path, "annotate", str(data), "--align", str(rubric))
    assert done.returncode != 0 and "not on this rubric's" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "output" / "relevance.aligned.yaml").exists()
