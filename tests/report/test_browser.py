"""report.html in headless Chromium: no console error, no network request, the summary table, the boxplots
as images of non-zero size, and the sorting script at work."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.conftest import Results
from tests.report.helpers import build, summary_rows
from tests.support.chromium import Browser, chromium_missing

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))

CHECKS = {
    "summary_rows": "document.querySelectorAll('#summary tbody tr').length",
    "images": "Array.from(document.querySelectorAll('img.chart'))"
    ".map(i => [i.complete, i.naturalWidth, i.naturalHeight, i.getBoundingClientRect().width])",
    "significance_rows": "document.querySelectorAll('#significance-table tbody tr').length",
    "side_by_side_sorted": """(() => {
        const header = document.querySelectorAll('#side-by-side-table thead th')[1];
        header.click();
        return Array.from(document.querySelectorAll('#side-by-side-table tbody tr'))
            .map(r => r.cells[1].textContent).filter(t => t !== '').map(t => parseFloat(t));
    })()""",
    "sorted_means": """(() => {
        const header = Array.from(document.querySelectorAll('#summary thead th')).find(h => h.textContent === 'mean');
        header.click();
        return Array.from(document.querySelectorAll('#summary tbody tr')).map(r => Number(r.cells[2].textContent));
    })()""",
    "sorted_desc": """(() => {
        const header = Array.from(document.querySelectorAll('#summary thead th')).find(h => h.textContent === 'mean');
        header.click();
        return [header.dataset.order, Number(document.querySelector('#summary tbody tr').cells[2].textContent)];
    })()""",
}


def test_report_opens_cleanly_in_chromium(results: Results, tmp_path: Path) -> None:
    files = build([results.pvalue, results.evaluate], tmp_path)
    with Browser() as browser:
        page = browser.open(files.report_path, checks=CHECKS)
    assert page.console_errors == []
    assert page.requests and page.requests[0] == page.url
    assert [url for url in page.requests if url != page.url and not url.startswith("data:")] == []
    assert page.values["summary_rows"] == len(summary_rows(files)) > 0
    images = page.values["images"]
    assert len(images) == len(files.plot_paths) > 2
    assert all(complete and width > 0 and height > 0 and shown > 0 for complete, width, height, shown in images)
    assert page.values["significance_rows"] > 0
    side = page.values["side_by_side_sorted"]
    assert len(side) > 1 and side == sorted(side)
    means = page.values["sorted_means"]
    assert means == sorted(means) and means[0] < means[-1]
    assert page.values["sorted_desc"] == ["desc", means[-1]]


def test_the_browser_check_sees_errors_and_requests(tmp_path: Path) -> None:
    """The checks above would fail on a page that logs an error or loads something."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<html><body><img src="http://127.0.0.1:9/x.png"><script>console.error("broken")</script></body></html>',
        encoding="utf-8",
    )
    with Browser() as browser:
        page = browser.open(bad)
    assert any("broken" in error for error in page.console_errors)
    assert "http://127.0.0.1:9/x.png" in page.requests
