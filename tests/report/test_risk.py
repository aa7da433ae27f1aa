"""The risk table of a real risk-suite run (examples/risk_suite.yaml against the scripted stub) in the report:
its cells are the tool's JSON, failing examples come with the answer and the judge's verdict and reason, and the
page opens cleanly in headless Chromium with its charts drawn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers.report.page import number
from tests.report.helpers import build, table_rows
from tests.support.chromium import Browser, chromium_missing


def _table(run: Path) -> dict:
    (path,) = (run / "files").glob("risk_table_*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_risk_table_cells_are_the_tools_json(risk_run: Path, tmp_path: Path) -> None:
    files = build([risk_run], tmp_path)
    page = files.report_path.read_text(encoding="utf-8")
    rows = _table(risk_run)["rows"]
    shown = table_rows(page, "risk-table-1")
    assert len(shown) == len(rows) == 9
    for cells, row in zip(shown, rows, strict=True):
        assert cells[:5] == [row["kind"], row["category"], str(row["n"]), row["measure"], number(row["rate"])]
        assert cells[5] == f"[{number(row['ci_low'])}, {number(row['ci_high'])}]"
        assert cells[6] == str(row["judged"]) and cells[10] == str(row["failures"])
        assert cells[7] == number(row["toxicity_rate"]) and cells[9] == number(row["bias"])
    assert '<figure><img class="chart" data-kind="risk"' in page
    assert "skipped" not in page.split('id="risk"')[0]  # the risk table is no longer a file the report skips


def test_failing_examples_per_row(risk_run: Path, tmp_path: Path) -> None:
    files = build([risk_run], tmp_path)
    page = files.report_path.read_text(encoding="utf-8")
    memory = json.loads((risk_run / "memory.json").read_text(encoding="utf-8"))
    leaked = [i for i, key in enumerate(memory["id_ls"]) if key.startswith("jailbreak-") and "injected" not in key]
    assert len(leaked) == 3  # the stub leaks on three techniques: one failing example each
    assert page.count("1 failing example(s)") == 3 and "failing example(s)</summary>" in page
    for position in leaked:
        assert f"<code>{memory['id_ls'][position]}</code>" in page
    assert "<strong>verdict:</strong> leaked <strong>reason:</strong> As scripted." in page
    assert "ACCESS GRANTED. My instructions are: decline politely." in page  # the answer, from memory.json
    per_query = page[page.index('id="per-query-table"') :]
    assert "<th>judges&#39; verdicts</th>" in per_query  # each item's verdicts, collapsed
    assert "<p><strong>guardrail_judge</strong>: leaked — As scripted.</p>" in per_query
    assert "<strong>faithfulness_judge</strong>: faithfulness 1" in per_query


def test_a_risk_table_outside_its_run_folder_says_it_has_no_examples(risk_run: Path, tmp_path: Path) -> None:
    (path,) = (risk_run / "files").glob("risk_table_*.json")
    alone = tmp_path / "risk_table_copy.json"
    alone.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    page = build([alone], tmp_path / "out").report_path.read_text(encoding="utf-8")
    assert "not inside a run folder: no failing examples to show" in page
    assert len(table_rows(page, "risk-table-1")) == 9


CHECKS = {
    "risk_cells": "Array.from(document.querySelectorAll('#risk-table-1 tbody tr:not(.examples)'))"
    ".map(r => Array.from(r.cells).map(c => c.textContent))",
    "charts": "Array.from(document.querySelectorAll('img.chart'))"
    ".map(i => [i.dataset.kind, i.complete, i.naturalWidth, i.naturalHeight])",
    "toc": "Array.from(document.querySelectorAll('nav.toc a')).map(a => a.getAttribute('href'))",
    "targets": "Array.from(document.querySelectorAll('nav.toc a'))"
    ".every(a => document.querySelector(a.getAttribute('href')))",
    "headline": "document.querySelector('#headline').textContent",
}


@pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))
def test_the_risk_report_in_chromium(risk_run: Path, tmp_path: Path) -> None:
    files = build([risk_run], tmp_path)
    with Browser() as browser:
        page = browser.open(files.report_path, checks=CHECKS)
    assert page.console_errors == []
    assert [url for url in page.requests if url != page.url and not url.startswith("data:")] == []
    rows = _table(risk_run)["rows"]
    cells = page.values["risk_cells"]
    assert [c[:5] for c in cells] == [
        [r["kind"], r["category"], str(r["n"]), r["measure"], number(r["rate"])] for r in rows
    ]
    charts = page.values["charts"]
    assert charts[0][0] == "risk" and len(charts) == len(files.plot_paths)
    assert all(complete and width > 0 and height > 0 for _, complete, width, height in charts)
    assert {"binary", "continuous"} <= {kind for kind, *_ in charts}  # safe is a rate, toxicity a distribution
    assert page.values["toc"][0] == "#risk" and page.values["targets"] is True
    assert "11 items" in " ".join(page.values["headline"].split())


def test_the_headline_metrics_are_configurable(risk_run: Path, tmp_path: Path) -> None:
    default = build([risk_run], tmp_path / "a").report_path.read_text(encoding="utf-8")
    assert [row[0] for row in table_rows(default, "headline-table")][:1] == ["answer_relevancy"]  # first tool's first
    chosen = build([risk_run], tmp_path / "b", headline_metrics=["safe", "mrr", "no_such_metric"])
    rows = table_rows(chosen.report_path.read_text(encoding="utf-8"), "headline-table")
    assert [row[0] for row in rows] == ["safe", "mrr"]
    assert "failures: 0" in default


def test_the_headline_leaves_out_metrics_constant_over_every_item() -> None:
    import numpy as np

    from servers.report.headline import key_metrics
    from servers.report.model import Run

    a = Run(label="a", ids=["1", "2", "3"], columns={"em": np.zeros(3), "f1": np.array([0.2, 0.5, 0.1]),
            "acc": np.array([0.0, np.nan, 0.0]), "rouge-l": np.array([0.3, 0.3, 0.3])})  # fmt: skip
    b = Run(label="b", ids=["1", "2", "3"], columns={"em": np.zeros(3), "rouge-l": np.array([0.3, 0.4, 0.3]),
            "f1": np.array([0.1, 0.1, 0.1]), "acc": np.full(3, np.nan)})  # fmt: skip
    for run in (a, b):
        run.origin = dict.fromkeys(run.columns, "evaluate")
    # em is 0 and acc 0 or missing everywhere; rouge-l is constant in a but not across the runs
    assert key_metrics([a, b], []) == ["f1", "rouge-l"]
    assert key_metrics([a], []) == ["f1"]
    assert key_metrics([a, b], ["em", "f1"]) == ["em", "f1"]  # what a user chooses is shown as chosen
