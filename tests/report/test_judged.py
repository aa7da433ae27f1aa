"""ppi, compare_judged and fill_qrels in the report: result files written by the real tools (ppi and
compare_judged in-process on small hand-made data, fill_qrels on data/umbrela against the local stub), the
page's cells equal to the tools' JSON, the interval charts, and the page in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import numpy as np
import pytest

from servers.evaluation.server import SPEC as EVALUATION
from servers.judge.relevance.fill import run_fill_qrels
from servers.report.cells import number
from tests.judge.conftest import SAMPLE, call_job, llm_settings
from tests.report.helpers import build, table_rows
from tests.support.chromium import Browser, chromium_missing
from tests.support.openai_stub import OpenAIStub
from ultra_kit.inprocess import call_local_tool, local_tools

IDS = [f"q{i}" for i in range(30)]


def _call(tool: str, **arguments):
    return anyio.run(call_local_tool, local_tools(EVALUATION)[tool], arguments)


@pytest.fixture(scope="module")
def judged_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A ppi, a compare_judged and a fill_qrels result file, written by the tools."""
    folder = tmp_path_factory.mktemp("judged")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
        rng = np.random.default_rng(7)
        judged = {s: {i: float(rng.integers(0, 2)) for i in IDS} for s in ("A", "B")}
        human = {s: {i: float(rng.integers(0, 2)) if rng.random() < 0.3 else judged[s][i] for i in IDS[:15]}
                 for s in ("A", "B")}  # fmt: skip
        ppi = _call("ppi", judged=judged, human=human, save_path=str(folder / "ppi.json"))["result_path"]
        samples = {s: {i: [float(x) + shift for x in rng.random(3)] for i in IDS}
                   for s, shift in (("A", 0.0), ("B", 0.05), ("C", 0.3))}  # fmt: skip
        compared = _call("compare_judged", samples=samples, save_path=str(folder / "compare_judged.json"))
        with OpenAIStub() as stub:
            stub.responder = lambda request: "##final score: 3"
            runs = [str(SAMPLE / f"run.{n}.trec") for n in ("bm25", "tfidf", "title")]
            fill = anyio.run(lambda: call_job(
                run_fill_qrels, human_qrels_path=str(SAMPLE / "qrels.human.txt"), run_paths=runs,
                queries_path=str(SAMPLE / "queries.jsonl"), corpus_path=str(SAMPLE / "corpus.jsonl"),
                fill_budget=60, judge_llm=llm_settings(stub), save_path=str(folder)))  # fmt: skip
    return {"ppi": Path(ppi), "compare_judged": Path(compared["result_path"]), "fill_qrels": Path(fill["result_path"])}


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _interval(estimate: dict) -> str:
    return f"[{number(estimate['ci'][0])}, {number(estimate['ci'][1])}]"


def test_ppi_cells_are_the_tools_json(judged_files: dict[str, Path], tmp_path: Path) -> None:
    files = build([judged_files["ppi"]], tmp_path)
    page = files.report_path.read_text(encoding="utf-8")
    document = _json(judged_files["ppi"])
    rows = table_rows(page, "ppi-table-1")
    assert [row[0] for row in rows] == list(document["ppi_res"]) == ["A", "B"]
    for row, result in zip(rows, document["ppi_res"].values(), strict=True):
        assert row[1:3] == [str(result["n_human"]), str(result["n_unlabelled"])] == ["15", "15"]
        assert row[3:5] == [number(result["estimate"]), _interval(result)]
        for position, key in ((5, "classical"), (7, "judge_only"), (9, "human_only")):
            assert row[position : position + 2] == [number(result[key]["estimate"]), _interval(result[key])]
        assert row[11:13] == [number(result["lambda"]), number(result["effective_n"])]
    (pair,) = table_rows(page, "ppi-diff-table-1")
    diff = document["ppi_diff"]["A - B"]
    assert pair[:5] == ["A - B", number(diff["estimate"]), _interval(diff), number(diff["p_value"]),
                        "yes" if diff["excludes_zero"] else "no"]  # fmt: skip
    assert pair[5] == _interval(diff["human_only"])
    assert [p.name for p in files.plot_paths] == ["ppi_ppi.png"] and files.plot_paths[0].stat().st_size > 0
    assert 'data-kind="intervals"' in page and 'href="#ppi"' in page


def test_compare_judged_cells_and_the_flag(judged_files: dict[str, Path], tmp_path: Path) -> None:
    files = build([judged_files["compare_judged"]], tmp_path)
    page = files.report_path.read_text(encoding="utf-8")
    comparisons = _json(judged_files["compare_judged"])["comparisons"]
    rows = table_rows(page, "compare-judged-table-1")
    assert [row[0] for row in rows] == list(comparisons) == ["A - B", "A - C", "B - C"]
    for row, result in zip(rows, comparisons.values(), strict=True):
        noisy, exact = result["with_judge_noise"], result["judge_as_exact"]
        assert row[1:3] == [str(result["n_items"]), "3-3"]
        assert row[3:6] == [number(result["mean_a"]), number(result["mean_b"]), number(result["diff"])]
        assert row[6:9] == [_interval(noisy), number(noisy["p_value"]), "yes" if noisy["significant"] else "no"]
        assert row[9:12] == [_interval(exact), number(exact["p_value"]), "yes" if exact["significant"] else "no"]
        assert row[12] == ("yes" if result["significant_only_if_judge_exact"] else "no")
    assert comparisons["A - C"]["with_judge_noise"]["significant"]  # a shift of 0.3 on 30 items is found


def test_the_flag_shows_when_only_the_exact_judge_is_significant(tmp_path: Path, monkeypatch) -> None:
    """Items whose k samples vary a lot around a small shift: significant only while the judge is exact."""
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    ids = [f"q{i}" for i in range(40)]
    noise = [[-0.6, 0.0, 0.6], [0.6, 0.0, -0.6]]
    samples = {
        "A": {i: [0.5 + 0.06 + n for n in noise[k % 2]] for k, i in enumerate(ids)},
        "B": {i: [0.5 + n for n in noise[(k + 1) % 2]] for k, i in enumerate(ids)},
    }
    path = _call("compare_judged", samples=samples, save_path=str(tmp_path / "c.json"))["result_path"]
    result = _json(Path(path))["comparisons"]["A - B"]
    assert result["significant_only_if_judge_exact"] is True
    page = build([path], tmp_path / "report").report_path.read_text(encoding="utf-8")
    (row,) = table_rows(page, "compare-judged-table-1")
    assert row[8] == "no" and row[11] == "yes" and row[12] == "yes"
    assert '<td class="num flag">yes</td>' in page


def test_fill_qrels_deltas_tau_and_counts(judged_files: dict[str, Path], tmp_path: Path) -> None:
    files = build([judged_files["fill_qrels"]], tmp_path)
    page = files.report_path.read_text(encoding="utf-8")
    document = _json(judged_files["fill_qrels"])
    expected_values, expected_judged = [], []
    for run, measures in document["per_run"].items():
        for measure, row in measures.items():
            cells = [run, measure, number(row["before"]), number(row["after"])]
            if measure.startswith("Judged@"):
                expected_judged.append(cells)
            else:
                expected_values.append([*cells, number(row["delta"])])
    assert table_rows(page, "fill-values-table-1") == expected_values
    assert len(expected_values) == 9  # 3 runs x ndcg@20, P@20, map
    assert table_rows(page, "fill-judged-table-1") == expected_judged
    assert [row[1] for row in expected_judged] == ["Judged@20"] * 3
    untied = "undefined: the runs tie (before or after)"
    tau = [[m, number(t) if t is not None else untied] for m, t in document["kendall_tau_b"].items()]
    assert table_rows(page, "fill-tau-table-1") == tau
    flips = document["significance_flips"]
    if flips:
        assert len(table_rows(page, "fill-flips-table-1")) == len(flips)
    else:
        assert 'id="fill-flips-none-1"' in page
    assert f"judged: <strong>{document['fill_counts']['judged']}</strong>" in page
    assert files.plot_paths[0].name.startswith("fill_qrels_") and files.plot_paths[0].stat().st_size > 0


def test_a_run_folder_holding_a_ppi_file(judged_files: dict[str, Path], tmp_path: Path) -> None:
    """Inside an `ultra run` folder (no per-query values), the ppi file still makes a report."""
    folder = tmp_path / "run"
    (folder / "files").mkdir(parents=True)
    (folder / "memory.json").write_text("{}", encoding="utf-8")
    (folder / "files" / "ppi_x.json").write_text(judged_files["ppi"].read_text(encoding="utf-8"), encoding="utf-8")
    page = build([folder], tmp_path / "report").report_path.read_text(encoding="utf-8")
    assert len(table_rows(page, "ppi-table-1")) == 2
    assert "run: ppi_x.json" in page


def test_two_files_of_the_same_name_get_two_charts(judged_files: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    copy = tmp_path / "other" / judged_files["ppi"].name
    copy.write_text(judged_files["ppi"].read_text(encoding="utf-8"), encoding="utf-8")
    files = build([judged_files["ppi"], copy], tmp_path / "report")
    assert [p.name for p in files.plot_paths] == ["ppi_ppi.png", "ppi_ppi_1.png"]
    assert all(p.is_file() for p in files.plot_paths)


CHECKS = {
    "images": "Array.from(document.querySelectorAll('img.chart'))"
    ".map(i => [i.dataset.kind, i.complete, i.naturalWidth, i.naturalHeight])",
    "ppi_rows": "document.querySelectorAll('#ppi-table-1 tbody tr').length",
    "flags": "Array.from(document.querySelectorAll('#compare-judged-table-1 tbody tr'))"
    ".map(r => r.cells[12].textContent)",
    "fill_rows": "document.querySelectorAll('#fill-values-table-1 tbody tr').length",
}


@pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))
def test_the_judged_sections_in_chromium(judged_files: dict[str, Path], tmp_path: Path) -> None:
    files = build(list(judged_files.values()), tmp_path)
    with Browser() as browser:
        page = browser.open(files.report_path, checks=CHECKS)
    assert page.console_errors == []
    assert [url for url in page.requests if url != page.url and not url.startswith("data:")] == []
    images = page.values["images"]
    assert [kind for kind, *_ in images] == ["intervals", "intervals", "before-after"]
    assert all(complete and width > 0 and height > 0 for _, complete, width, height in images)
    assert page.values["ppi_rows"] == 2 and page.values["fill_rows"] == 9
    comparisons = _json(judged_files["compare_judged"])["comparisons"].values()
    assert page.values["flags"] == ["yes" if c["significant_only_if_judge_exact"] else "no" for c in comparisons]
