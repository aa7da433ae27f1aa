"""report.html and compare.html of real runs with long names at 1,400 CSS pixels in headless Chromium: no page scrolls
sideways (the significance and comparison tables scroll inside their own boxes), every chart is shown whole within the
window, and the full names are on the page while the charts carry the short ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from servers.report.plots import chart_labels
from tests.report.conftest import Results
from tests.report.helpers import build
from tests.support.chromium import Browser, chromium_missing
from ultra_kit.inprocess import local_tools

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))

WIDTH = 1400
PREFIX = "bm25_k1_1.2_b_0.75_top_k_1000_rm3_expansion_fb_docs_10_fb_terms_20_then_monot5_rerank_"
CHECKS = {
    "scroll_width": "document.documentElement.scrollWidth",
    "client_width": "document.documentElement.clientWidth",  # the window less its vertical scroll bar
    "window": "window.innerWidth",
    "beyond": """Array.from(document.querySelectorAll('body *'))
        .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth && !e.closest('table, pre'))
        .map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 5)""",
    "charts": "Array.from(document.querySelectorAll('img.chart'))"
    ".map(i => [i.naturalWidth, i.getBoundingClientRect().left, i.getBoundingClientRect().right])",
    "tables": "Array.from(document.querySelectorAll('table'))"
    ".map(t => [t.id, t.getBoundingClientRect().right, t.scrollWidth, t.clientWidth])",
    "text": "document.body.innerText",
    "run_rows": "Array.from(document.querySelectorAll('#ranx-table tbody tr'))"
    ".map(r => r.getBoundingClientRect().height)",
}


def names(results: Results) -> dict[str, str]:
    """Long names that differ only at their ends, each for a real run folder."""
    return {
        PREFIX + "eval_trec_pvalue_2024-06-01": str(results.pvalue),
        PREFIX + "evaluate_results_2024-06-02": str(results.evaluate),
        PREFIX + "eval_trec_2024-06-03": str(results.eval_trec),
    }


def fits(page) -> None:
    values = page.values
    assert page.console_errors == []
    assert values["window"] == WIDTH and WIDTH - 20 <= values["client_width"] <= WIDTH
    assert values["scroll_width"] <= values["client_width"], (values["beyond"], values["tables"])
    assert values["beyond"] == []
    charts, client = values["charts"], values["client_width"]
    assert charts and all(width > 0 and left >= 0 and right <= client for width, left, right in charts)
    assert all(right <= values["client_width"] for _, right, _, _ in values["tables"])


def test_report_and_compare_fit_1400_pixels(results: Results, tmp_path: Path) -> None:
    from servers.report.server import SPEC

    labels = names(results)
    report = build([results.pvalue, results.evaluate, results.eval_trec], tmp_path / "report", labels=labels)
    tool = local_tools(SPEC)["compare"]
    compared = [str(results.eval_trec), str(results.pvalue)]
    wanted = {name: path for name, path in labels.items() if path in compared}
    tool.function(**{**tool.settings, "run_paths": compared, "labels": wanted, "out_dir": str(tmp_path / "compare")})
    with Browser() as browser:
        pages = [
            browser.open(path, checks=CHECKS, viewport=(WIDTH, 900))
            for path in (report.report_path, tmp_path / "compare" / "compare.html")
        ]
    for page in pages:
        fits(page)
    report_page, compare_page = pages
    assert all(name in report_page.values["text"] for name in labels)  # the full names ...
    keyed = re.findall(r"\(in the charts: (.*?)\): \d+ queries", report_page.values["text"])  # ... and the key
    assert len(keyed) == 4 and len(set(keyed)) == 4 and all(len(short) <= 24 for short in keyed), keyed  # pvalue: 2
    assert keyed[-1] == chart_labels([PREFIX + "x"] * 3 + [PREFIX + "eval_trec_2024-06-03"])[-1]
    significance = [t for t in report_page.values["tables"] if t[0] == "significance-table"]
    assert significance, "the p-value table is on the page"
    assert all(name in compare_page.values["text"] for name in wanted)
    rows = compare_page.values["run_rows"]  # a run's name on one line, not squeezed to a letter per line by the metrics
    assert len(rows) == 3 and all(height < 40 for height in rows), rows
    assert [t for t in compare_page.values["tables"] if t[0] == "comparison-table"]
