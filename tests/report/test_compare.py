"""``ultra compare`` and the compare tool against direct paired computations on hand-made runs: items matched
by id (the files list them in different orders), exact sign-flip p-values enumerated here, Holm by hand,
wins/ties/losses; runs sharing no id are refused; retrieval runs give evaluate_trec_pvalue's own numbers;
compare.html and the report's comparison section in headless Chromium."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from servers.report.page import number
from tests.conftest import ROOT, run_ultra
from tests.report.conftest import Results
from tests.report.helpers import build, table_rows
from tests.support.chromium import Browser, chromium_missing
from ultra_kit.inprocess import local_tools
from ultra_kit.settings import defaults

IDS = [f"q{i}" for i in range(8)]
VALUES = {  # per run: f1 and em per id (in IDS order); the files list the ids in other orders
    "a": ([0.2, 0.5, 0.4, 0.9, 0.3, 0.6, 0.1, 0.7], [0, 1, 0, 1, 0, 1, 0, 0]),
    "b": ([0.5, 0.7, 0.6, 0.9, 0.8, 0.9, 0.4, 0.8], [1, 1, 0, 1, 1, 1, 0, 1]),
    "c": ([0.1, 0.5, 0.5, 0.6, 0.2, 0.6, 0.3, 0.4], [0, 0, 1, 1, 0, 1, 0, 0]),
}


def write_runs(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for shift, (name, (f1, em)) in enumerate(VALUES.items()):
        order = IDS[shift:] + IDS[:shift]  # each file in another order
        position = {key: IDS.index(key) for key in order}
        document = {
            "id_ls": order,
            "f1": [f1[position[k]] for k in order],
            "em": [float(em[position[k]]) for k in order],
            "settings": {"metrics": ["f1", "em"], "metric_kinds": {"f1": "continuous", "em": "binary"}},
        }
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(document), encoding="utf-8")
    return paths


def exact_p(d: np.ndarray) -> float:
    """Two-sided sign-flip p-value by enumerating every sign pattern."""
    observed = abs(d.mean())
    count = sum(
        abs((np.array(signs) * d).mean()) >= observed - 1e-12 for signs in itertools.product((1, -1), repeat=len(d))
    )
    return count / 2 ** len(d)


def direct(a: str, b: str) -> dict[str, dict]:
    """Every figure of the pair (b against a) per metric, computed here."""
    figures = {}
    for index, metric in enumerate(("f1", "em")):
        x, y = np.array(VALUES[a][index], float), np.array(VALUES[b][index], float)
        d = y - x
        figures[metric] = {"a_mean": x.mean(), "b_mean": y.mean(), "diff": d.mean(), "p": exact_p(d),
                           "wtl": (int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))}  # fmt: skip
    low, high = sorted(figures, key=lambda m: figures[m]["p"])
    figures[low]["holm"] = min(1.0, 2 * figures[low]["p"])
    figures[high]["holm"] = max(figures[low]["holm"], min(1.0, figures[high]["p"]))
    return figures


def call_compare(paths: list[Path], out: Path) -> dict:
    from servers.report.server import SPEC

    tool = local_tools(SPEC)["compare"]
    return tool.function(**{**tool.settings, "run_paths": [str(p) for p in paths], "out_dir": str(out)})


def test_the_comparison_equals_a_direct_paired_computation(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    result = call_compare(list(paths.values()), tmp_path / "out")
    rows = {(r["metric"], r["b"], r["a"]): r for r in result["rows"]}
    assert len(rows) == 6  # 3 pairs x 2 metrics
    for a, b in (("a", "b"), ("a", "c"), ("b", "c")):
        for metric, figure in direct(a, b).items():
            row = rows[(metric, b, a)]
            assert row["n"] == 8
            assert row["a_mean"] == pytest.approx(figure["a_mean"]) and row["b_mean"] == pytest.approx(figure["b_mean"])
            assert row["diff"] == pytest.approx(figure["diff"])
            assert row["p_value"] == pytest.approx(figure["p"]) and row["p_holm"] == pytest.approx(figure["holm"])
            assert (row["wins"], row["ties"], row["losses"]) == figure["wtl"]
            assert row["ci_low"] <= row["diff"] <= row["ci_high"]
            assert row["significant"] == (figure["holm"] < 0.05)
    assert rows[("f1", "b", "a")]["significant"]  # b beats a on 7 items, ties on 1: p = 4/256, Holm 8/256
    text = result["text"]
    significant = [r for r in rows.values() if r["significant"]]
    first, second = text.splitlines()[:2]
    assert second == "runs: a = a, b = b, c = c"
    for row in significant:  # the verdict names every significant difference of a pair, worse ones first
        assert f"{row['b']} vs {row['a']}: " in first and f"{row['metric']} ({row['diff']:+.4f})" in first
    assert first.startswith("verdict: ") and "no metric differs" not in first
    f1 = rows[("f1", "b", "a")]
    assert f"b vs a: better on f1 ({f1['diff']:+.4f})" in first
    line = next(li for li in text.splitlines() if li.startswith("f1") and "b vs a" in li)
    assert line.split()[-2:] == ["7/1/0", "*"] and f"{direct('a', 'b')['f1']['p']:.4f}" in line
    page = (tmp_path / "out" / "compare.html").read_text()  # the page says yes or no, never leaves it blank
    table = page.split(">Paired differences</h3>", 1)[1].split("</table>", 1)[0]
    header = re.findall(r"<th>([^<]*)</th>", table)
    assert header[-1] == "significant" and "test" not in header  # no judge samples: no judge-noise columns
    said = [re.findall(r"<td[^>]*>([^<]*)</td>", tr)[-1] for tr in table.split("<tr>")[2:]]
    assert said == ["yes" if r["significant"] else "no" for r in result["rows"]] and "yes" in said and "no" in said


def test_items_are_matched_by_id_not_position(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    document = json.loads(paths["a"].read_text())
    flipped = {**document, "id_ls": document["id_ls"][::-1], "f1": document["f1"][::-1], "em": document["em"][::-1]}
    copy = tmp_path / "runs" / "a_reversed.json"
    copy.write_text(json.dumps(flipped), encoding="utf-8")
    result = call_compare([paths["a"], copy], tmp_path / "out")
    assert all(r["diff"] == 0 and r["ties"] == 8 and r["p_value"] == 1.0 for r in result["rows"])
    assert result["text"].startswith("verdict: no metric differs significantly (at 0.05, after Holm)\n")
    page = (tmp_path / "out" / "compare.html").read_text()
    assert '<p id="verdict"><strong>verdict: no metric differs significantly' in page


def test_runs_without_shared_ids_are_refused_by_name(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    other = {"id_ls": ["x1", "x2"], "f1": [0.1, 0.2], "settings": {"metrics": ["f1"]}}
    stranger = tmp_path / "runs" / "stranger.json"
    stranger.write_text(json.dumps(other), encoding="utf-8")
    done = run_ultra("compare", str(paths["a"]), str(stranger), "--out", str(tmp_path / "out"), cwd=ROOT)
    assert done.returncode != 0
    assert "runs 'a' and 'stranger' share no item id" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out" / "compare.html").exists()  # nothing written


def test_ultra_compare_prints_the_table_and_writes_the_page(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    done = run_ultra("compare", *map(str, paths.values()), "--out", str(tmp_path / "out"), cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    header = next(i for i, li in enumerate(lines) if li.startswith("metric"))
    assert len(lines[header]) == len(lines[header + 1].rstrip()) or lines[header + 1].startswith("------")
    assert f"wrote {tmp_path / 'out' / 'compare.html'}" in done.stdout
    saved = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert [r["letter"] for r in saved["runs"]] == ["a", "b", "c"]


def test_retrieval_runs_give_evaluate_trec_pvalues_numbers(results: Results, tmp_path: Path) -> None:
    """The pvalue example's run folder holds the baseline and a perturbed run: with the same resamples and
    seed, the comparison repeats evaluate_trec_pvalue's table."""
    (path,) = (results.pvalue / "files").glob("evaluate_trec_pvalue_*.json")
    table = json.loads(path.read_text(encoding="utf-8"))["table"]
    from servers.report.server import SPEC

    tool = local_tools(SPEC)["compare"]
    settings = {**tool.settings, "bootstrap_resamples": 10000, "seed": 42, "confidence": 0.95}
    result = tool.function(**{**settings, "run_paths": [str(results.pvalue)], "out_dir": str(tmp_path)})
    rows = {r["metric"]: r for r in result["rows"]}
    for expected in table:
        row = rows[expected["metric"]]
        assert row["b_mean"] == pytest.approx(expected["A_mean"]) and row["a_mean"] == pytest.approx(expected["B_mean"])
        assert row["p_value"] == pytest.approx(expected["p_value"])
        assert row["p_holm"] == pytest.approx(expected["p_value_adjusted"])
        assert row["ci_low"] == pytest.approx(expected["ci_low"]) and row["ci_high"] == pytest.approx(
            expected["ci_high"]
        )


CHECKS = {
    "ranx": "Array.from(document.querySelectorAll('#ranx-table tbody tr'))"
    ".map(r => Array.from(r.cells).map(c => c.textContent))",
    "pairs": "Array.from(document.querySelectorAll('#comparison-table tbody tr'))"
    ".map(r => Array.from(r.cells).map(c => c.textContent))",
    "scatters": "Array.from(document.querySelectorAll('img.scatter')).map(i => [i.complete, i.naturalWidth])",
}


@pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))
def test_compare_html_and_the_reports_section_in_chromium(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    call_compare(list(paths.values()), tmp_path / "out")
    settings = {k: v for k, v in defaults("report").items() if k not in ("result_paths", "labels")}
    report = build(list(paths.values()), tmp_path / "report")
    with Browser() as browser:
        pages = [browser.open(p, checks=CHECKS) for p in (tmp_path / "out" / "compare.html", report.report_path)]
    ab = direct("a", "b")
    for page in pages:
        assert page.console_errors == []
        assert [url for url in page.requests if url != page.url and not url.startswith("data:")] == []
        ranx = page.values["ranx"]
        assert [row[:2] for row in ranx] == [["a", "a"], ["b", "b"], ["c", "c"]]
        assert ranx[1][2] == f"{ab['f1']['b_mean']:.4f}ac"  # b: significantly better than a and c on f1
        assert ranx[0][2] == f"{ab['f1']['a_mean']:.4f}"
        first = page.values["pairs"][0]
        assert first[:3] == ["f1", "b vs a", "8"] and first[7] == number(ab["f1"]["p"]) and first[9] == "7/1/0"
        assert len(page.values["scatters"]) == 2 and all(ok and width > 0 for ok, width in page.values["scatters"])
    assert settings["max_scatter_points"] > 8
    html = report.report_path.read_text(encoding="utf-8")
    compare_html = (tmp_path / "out" / "compare.html").read_text(encoding="utf-8")
    policy = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">')
    assert policy.search(compare_html)[1] == policy.search(html)[1] and "default-src 'none'" in policy.search(html)[1]
    assert table_rows(html, "comparison-table") == table_rows(
        (tmp_path / "out" / "compare.html").read_text(encoding="utf-8"), "comparison-table"
    )


def test_vital_nuggets_gained_and_lost_on_a_trec_rag_run(results: Results, tmp_path: Path) -> None:
    """The trec_rag run folder holds two answer runs and nuggetize's assignments: per query, the vital nuggets
    the second run's answer supports and the first's does not (gained), and the reverse (lost)."""
    call_compare([results.trec_rag], tmp_path / "out")
    saved = json.loads((tmp_path / "out" / "comparison.json").read_text())
    first, second = (run["label"] for run in saved["runs"])
    (assignments,) = (results.trec_rag / "files").glob("nuggetize_*.assignments.jsonl")
    supported: dict[tuple[str, str], set[str]] = {}
    for line in assignments.read_text(encoding="utf-8").splitlines():
        answer = json.loads(line)
        if answer["status"] == "ok":
            vital = {
                n["text"] for n in answer["nuggets"] if n["importance"] == "vital" and n["assignment"] == "support"
            }
            supported[(answer["run"], answer["qid"])] = vital
    expected = []
    for run, qid in supported:
        if run == first and (second, qid) in supported:
            gained = sorted(supported[(second, qid)] - supported[(first, qid)])
            lost = sorted(supported[(first, qid)] - supported[(second, qid)])
            if gained or lost:
                expected.append({"a": first, "b": second, "id": qid, "gained": gained, "lost": lost})
    assert expected and sorted(saved["nuggets"], key=lambda r: r["id"]) == sorted(expected, key=lambda r: r["id"])
    page = (tmp_path / "out" / "compare.html").read_text(encoding="utf-8")
    assert 'id="nugget-table"' in page and "Largest regressions and improvements" in page


def test_the_scatters_sample_beyond_the_limit_and_say_so(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    from servers.report.server import SPEC

    tool = local_tools(SPEC)["compare"]
    arguments = {"run_paths": [str(paths["a"]), str(paths["b"])], "out_dir": str(tmp_path / "out")}
    tool.function(**{**tool.settings, **arguments, "max_scatter_points": 3})
    page = (tmp_path / "out" / "compare.html").read_text(encoding="utf-8")
    assert 'id="scatter-sampled"' in page and "a seeded random sample of 3 items per run" in page


def test_the_compare_tool_over_mcp_stdio(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs")
    done = run_ultra(
        "call",
        "report.compare",
        f"run_paths={json.dumps([str(paths['a']), str(paths['b'])])}",
        f"out_dir={tmp_path / 'out'}",
        "--stdio",
        cwd=ROOT,
        env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    row = next(r for r in result["rows"] if r["metric"] == "f1")
    assert row["p_value"] == pytest.approx(direct("a", "b")["f1"]["p"]) and Path(result["compare_path"]).is_file()
