"""Every plot kind the report and compare draw, with long run names: after ``fit`` matplotlib's tight bounding box
of everything drawn (legends outside the axes, tick labels, axis labels, titles) lies inside the figure, the PNG is
the fitted figure, and the legends and ticks carry short unique labels while the page keeps the full names."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from servers.report import charts as report_charts
from servers.report import plots
from servers.report.compare import pairs, render
from servers.report.judged import charts as judged_charts
from servers.report.model import Run

pytest.importorskip("matplotlib")

LONG = [
    "retrieval_bm25_k1_1.2_b_0.75_top_k_100_with_cross_encoder_rerank_2024-06-01T12-00-00",
    "retrieval_bm25_k1_1.2_b_0.75_top_k_100_with_cross_encoder_rerank_2024-06-02T12-00-00",
    "dense_e5_large_v2_top_k_100_hybrid_reciprocal_rank_fusion_2024-06-03",
]
KINDS = {"binary", "graded", "continuous", "ecdf", "overview", "risk", "ppi", "compare_judged", "fill_qrels"}


def long_runs(items: int = 30) -> list[Run]:
    rng = np.random.default_rng(7)
    runs = []
    for shift, label in enumerate(LONG):
        ids = [f"q{i}" for i in range(items)]
        run = Run(label)
        run.add_column("faithfulness_with_a_long_metric_name", ids, rng.random(items), source="x: a")
        run.add_column("ndcg@10", ids, rng.random(items) * 0.5 + 0.1 * shift, source="x: a")
        run.add_column("exact_match", ids, (rng.random(items) < 0.3 + 0.2 * shift).astype(float), source="x: a")
        run.add_column("relevance_grade", ids, rng.integers(0, 4, items).astype(float), source="x: a")
        run.add_column("latency_seconds", ids[:6], rng.random(6) * 3, source="x: a")  # few values: an ECDF
        run.kinds.update({"exact_match": "binary", "relevance_grade": "graded"})
        runs.append(run)
    return runs


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Every figure rendered, measured before and after ``render`` fitted it."""
    seen: list[dict] = []
    real = plots.render

    def measured(figure) -> bytes:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(figure)
        before = figure.get_tightbbox(figure.canvas.get_renderer())
        size_before = tuple(figure.get_size_inches())
        png = real(figure)
        after = figure.get_tightbbox(figure.canvas.get_renderer())
        texts = [t.get_text() for axes in figure.axes for t in axes.get_xticklabels() + axes.get_yticklabels()]
        legends = [axes.get_legend() for axes in figure.axes if axes.get_legend()] + list(figure.legends)
        labels = [t.get_text() for legend in legends for t in legend.get_texts()]
        from matplotlib.text import Text

        sizes = [(t.get_fontsize(), t.get_text()) for t in figure.findobj(Text) if t.get_text() and t.get_visible()]
        seen.append({"before": before, "size_before": size_before, "after": after, "sizes": sizes,
                     "size": tuple(figure.get_size_inches()), "png": png, "texts": texts + labels})  # fmt: skip
        return png

    for module in (plots, report_charts, render, judged_charts):
        monkeypatch.setattr(module, "render", measured)
    return seen


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def draw_everything() -> dict[str, int]:
    """Every kind drawn once; the number of figures per kind, in drawing order."""
    runs = long_runs()
    counts: dict[str, int] = {}
    drawn = report_charts.charts(runs)
    for plot in drawn.plots:
        kind = "overview" if plot.name == "boxplot_overview.png" else plot.kind
        kind = "ecdf" if plot.name.startswith("ecdf_") else kind
        counts[kind] = counts.get(kind, 0) + 1
    rows = [{"kind": "jailbreak_with_a_long_name", "category": f"technique {i} " * 4, "n": 20, "rate": 0.2 + 0.1 * i,
             "ci_low": 0.1 * i, "ci_high": 0.3 + 0.1 * i, "measure": "safe rate"} for i in range(4)]  # fmt: skip
    report_charts.risk_chart(rows, "risk table: " + LONG[0])
    estimate = {"estimate": 0.5, "ci": [0.4, 0.6]}
    row = {**estimate, "classical": estimate, "judge_only": estimate, "human_only": estimate}
    ppi = {"ppi_res": {label: row for label in LONG}, "ppi_diff": {f"{LONG[0]} - {LONG[1]}": row}}
    judged_charts.ppi_chart(ppi, "ppi: " + LONG[2])
    diff = {"diff": 0.1, "with_judge_noise": estimate, "judge_as_exact": estimate}
    judged_charts.compare_judged_chart({"comparisons": {f"{LONG[0]} - {LONG[2]}": diff}}, "judged: " + LONG[1])
    fill = {"per_run": {label: {"ndcg_cut_10": {"before": 0.3, "after": 0.4}} for label in LONG}}
    judged_charts.fill_chart(fill, "fill: " + LONG[0])
    counts.update({"risk": 1, "ppi": 1, "compare_judged": 1, "fill_qrels": 1})
    matched, _ = pairs.compare(runs, resamples=200, confidence=0.95, seed=1)
    scatters, _ = render.scatters(runs, matched, limit=2000, seed=1)
    counts["scatter"] = len(scatters)
    return counts


def test_every_figure_fits_with_long_run_names(drawn: list[dict]) -> None:
    counts = draw_everything()
    assert set(counts) >= KINDS and counts["scatter"] == 5
    assert len(drawn) == sum(counts.values())
    for figure in drawn:
        width, height = figure["size"]
        box = figure["after"]
        assert box.x0 >= -1e-6 and box.y0 >= -1e-6, (box, figure["size"])
        assert box.x1 <= width + 1e-6 and box.y1 <= height + 1e-6, (box, figure["size"])
        pixels = png_size(figure["png"])
        assert abs(pixels[0] - width * plots.DPI) < 1 and abs(pixels[1] - height * plots.DPI) < 1
    # the long names did overflow the figures as first laid out: the fitting is what keeps them inside
    overflowing = [f for f in drawn if f["before"].x0 < 0 or f["before"].y0 < 0 or f["before"].x1 > f["size_before"][0]]
    assert len(overflowing) >= 5
    assert all(f["size"][0] > f["size_before"][0] for f in overflowing if f["before"].x1 > f["size_before"][0])
    # short unique labels: the first two names differ only by their date, far beyond 24 characters
    texts = {text for figure in drawn for text in figure["texts"]}
    shorts = plots.chart_labels(LONG)
    assert shorts == ["retrieval_bm2…1T12-00-00", "retrieval_bm2…2T12-00-00", "dense_e5_larg…2024-06-03"]
    assert set(shorts) <= texts and not any(label in texts for label in LONG)
    named = [text for text in texts if "retrieval" in text or "dense" in text]  # every text naming a run
    assert len(named) > 3 and all(len(text) <= 32 for text in named), named


MIN_POINTS = 7  # at the report's DPI and its ~0.8 display scale about 9 CSS pixels: the smallest readable text


def test_every_text_of_every_figure_is_readable(drawn: list[dict]) -> None:
    """Legends, count labels, ticks and titles at least MIN_POINTS (#41: the scatters' legends were 6 pt)."""
    draw_everything()
    small = {(round(size, 1), text) for figure in drawn for size, text in figure["sizes"] if size < MIN_POINTS}
    assert not small, sorted(small)[:10]


def test_chart_labels_stay_unique() -> None:
    assert plots.chart_labels(["a", "b"]) == ["a", "b"]
    same_ends = ["x" * 30 + "middle_one" + "y" * 30, "x" * 30 + "middle_two" + "y" * 30]
    expected = ["a: " + plots.elide(same_ends[0], 21), "b: " + plots.elide(same_ends[1], 21)]
    assert plots.chart_labels(same_ends) == expected
    assert len(plots.elide(LONG[0], 24)) == 24
