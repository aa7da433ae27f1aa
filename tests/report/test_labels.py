"""The report's section on a label store of ``ultra annotate``: alpha, kappa, the confusion matrix and the largest
disagreements with the judge's reasoning, parsed from report.html and checked against independent computations."""

from __future__ import annotations

import pytest

from tests.client.annotate import labelled as fixed
from tests.client.annotate.serving import HOSTILE
from tests.client.annotate.test_disagreements import Figures, confusion, expected
from tests.report.helpers import build


def test_label_store_section(tmp_path) -> None:
    _, store = fixed.write_labelled(tmp_path)
    files = build([store], tmp_path / "output" / "report", examples_per_metric=2)
    html = files.report_path.read_text()
    section = html.split('<h2 id="labels">', 1)[1].split("</div>", 1)[0]
    page = Figures()
    page.feed(section)
    assert page.values == pytest.approx(expected(), abs=1e-12)
    assert page.cells == confusion()
    assert page.keys == fixed.disagreement_order()[:2]  # examples_per_metric: the two largest gaps
    assert "reason 9" in section and "&lt;img src=x onerror=" in section and HOSTILE not in html
    assert '<a href="#labels">' in html and "labels.sqlite" in section
