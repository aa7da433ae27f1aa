"""Slices: traces read with ``group_by`` -> ``ultra run`` (get_data, evaluate) -> report per group and
``compare --groups``, checked against a direct computation and against two separate runs of the groups."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from servers.report import groups, sources
from servers.report.compare.build import write_compare
from servers.report.stats import resample_means
from tests.benchmark.traces.running import ENV, ultra_run
from tests.conftest import ROOT, run_ultra
from tests.report.helpers import build, summary_rows
from tests.support.together import at_once

PIPELINE = {
    "servers": {"benchmark": "servers/benchmark", "evaluation": "servers/evaluation"},
    "pipeline": ["benchmark.get_data", "evaluation.evaluate"],
}
SETTINGS = {"bootstrap_resamples": 400, "confidence": 0.9, "seed": 5}


def _run(folder: Path, traces: Path, **benchmark: Any) -> Path:
    """``ultra run`` of get_data (answers scored against the question as the golden answer) and evaluate."""
    folder.mkdir(parents=True)
    spec = {
        "path": str(traces),
        "format": "otlp",
        "key_map": {"q_ls": "question", "pred_ls": "answer", "gt_ls": "question", "id_ls": "trace_id"},
        "traces": {"metadata": ["app_version"]},
        **benchmark,
    }
    params = {"benchmark": {"benchmark": spec}, "evaluation": {"save_path": str(folder / "results")}}
    return ultra_run(folder, PIPELINE, params)


@pytest.fixture(scope="module")
def runs(llamaindex_otlp: tuple[Path, list[dict]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    path, _ = llamaindex_otlp
    base = tmp_path_factory.mktemp("slices")
    return at_once(
        {
            "all": lambda: _run(base / "all", path, group_by="metadata.app_version"),
            "v1": lambda: _run(base / "v1", path, filters={"equals": {"metadata.app_version": "v1"}}),
            "v2": lambda: _run(base / "v2", path, filters={"equals": {"metadata.app_version": "v2"}}),
        }
    )


def test_memory_holds_groups_aligned_with_ids(runs: dict[str, Path], llamaindex_otlp: tuple[Path, list]) -> None:
    memory = json.loads((runs["all"] / "memory.json").read_text(encoding="utf-8"))
    _, expected = llamaindex_otlp
    assert memory["q_ls"] == [item["question"] for item in expected]  # the chain's order (time order)
    assert memory["group_ls"] == [item["app_version"] for item in expected] == ["v1"] * 4 + ["v2"] * 4
    (run,) = sources.collect([str(runs["all"])], {}).runs
    assert run.group_by == "metadata.app_version"
    assert sorted(set(run.groups.values())) == ["v1", "v2"]


def test_report_shows_each_metric_per_group_with_intervals(runs: dict[str, Path], tmp_path: Path) -> None:
    (run,) = sources.collect([str(runs["all"])], {}).runs
    files = build([runs["all"]], tmp_path / "report", **SETTINGS)
    rows = summary_rows(files)
    for value in ("v1", "v2"):
        keep = [i for i, key in enumerate(run.ids) if run.groups[key] == value]
        for metric in ("f1", "em"):
            values = run.columns[metric][keep]
            row = rows[(f"{run.label} [metadata.app_version={value}]", metric)]
            assert float(row["mean"]) == pytest.approx(values.mean())
            assert int(row["n"]) == len(keep) == 4
            draws = resample_means(values[:, None], resamples=400, seed=5)[:, 0]
            assert float(row["ci_low"]) == pytest.approx(np.percentile(draws, 5))
            assert float(row["ci_high"]) == pytest.approx(np.percentile(draws, 95))
    assert "[metadata.app_version=v2]" in files.report_path.read_text(encoding="utf-8")


def test_two_groups_compare_as_two_separate_runs(runs: dict[str, Path], tmp_path: Path) -> None:
    files = write_compare(
        [str(runs["all"])], labels={}, out_dir=tmp_path / "cmp", save_path=str(tmp_path), examples_per_metric=3,
        max_scatter_points=10, groups=["v1", "v2"], **{"bootstrap_resamples": 400, "confidence": 0.9, "seed": 5},
    )  # fmt: skip
    rows = {row.metric: row for row in files.section.rows}
    first, second = (sources.collect([str(runs[v])], {}).runs[0] for v in ("v1", "v2"))
    separate = {row.metric: row for row in groups.unpaired(first, second, resamples=400, confidence=0.9, seed=5)}
    for metric in ("f1", "rouge-l"):
        row, other = rows[metric], separate[metric]
        x, y = first.columns[metric], second.columns[metric]
        assert row.test == groups.UNPAIRED and row.n == 8
        assert (row.a_mean, row.b_mean, row.diff) == pytest.approx((x.mean(), y.mean(), y.mean() - x.mean()))
        assert (row.ci_low, row.ci_high, row.p_value) == pytest.approx((other.ci_low, other.ci_high, other.p_value))
        pooled, observed = np.concatenate([x, y]), abs(y.mean() - x.mean())
        rng, extreme = np.random.default_rng(5), 0
        for _ in range(400):
            s = rng.permutation(pooled)
            extreme += abs(s[4:].mean() - s[:4].mean()) >= observed - 1e-12
        assert row.p_value == pytest.approx((1 + extreme) / 401)
    document = json.loads(files.json_path.read_text(encoding="utf-8"))
    assert [r["label"] for r in document["runs"]] == [f"{files.runs[0]}", f"{files.runs[1]}"]
    assert files.runs[1].endswith("[metadata.app_version=v2]")


def test_cli_compare_groups_and_bad_group(runs: dict[str, Path], tmp_path: Path) -> None:
    done = run_ultra("compare", str(runs["all"]), "--groups", "v1", "v2", "--out", str(tmp_path / "c"), cwd=ROOT,
                     env=ENV)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "unpaired test" in done.stdout and "[metadata.app_version=v2]" in done.stdout
    bad = run_ultra("compare", str(runs["all"]), "--groups", "v1", "v9", cwd=ROOT, env=ENV)
    assert bad.returncode != 0 and "has no group 'v9'" in bad.stderr and "Traceback" not in bad.stderr
    none = run_ultra("compare", str(runs["v1"]), "--groups", "v1", "v2", cwd=ROOT, env=ENV)
    assert none.returncode != 0 and "has no groups" in none.stderr


def test_report_section_per_group_in_a_browser(runs: dict[str, Path], tmp_path: Path) -> None:
    """The "Per group" section: a row per group with its items and every metric's mean [interval], equal to a
    direct computation over the group's items; its chart is drawn, and the page fits 1,400 pixels in Chromium."""
    from servers.report.cells import number
    from servers.report.plots import file_name
    from tests.report.helpers import table_rows
    from tests.support.chromium import Browser, chromium_missing

    (run,) = sources.collect([str(runs["all"])], {}).runs
    files = build([runs["all"]], tmp_path / "report", **SETTINGS)
    html = files.report_path.read_text(encoding="utf-8")
    header = re.search(r'<table id="slices-1"[^>]*>\s*<thead><tr>(.*?)</tr>', html, re.DOTALL)
    assert header, "the per-group table is on the page"
    names = re.findall(r"<th>(.*?)</th>", header.group(1))
    assert names[:2] == ["metadata.app_version", "items"] and {"f1", "em"} <= set(names[2:])
    rows = table_rows(html, "slices-1")
    assert [row[:2] for row in rows] == [["v1", "4"], ["v2", "4"]]
    for row, value in zip(rows, ("v1", "v2"), strict=True):
        keep = [i for i, key in enumerate(run.ids) if run.groups[key] == value]
        for metric in ("f1", "em"):
            values = run.columns[metric][keep]
            draws = resample_means(values[:, None], resamples=400, seed=5)[:, 0]
            low, high = np.percentile(draws, [5, 95])
            assert row[names.index(metric)] == f"{number(float(values.mean()))} [{number(low)}, {number(high)}]"
    assert (files.folder / f"groups_{file_name(run.label)}.png").stat().st_size > 1000
    if chromium_missing() is not None:
        pytest.skip(str(chromium_missing()))
    checks = {
        "scroll": "document.documentElement.scrollWidth <= document.documentElement.clientWidth",
        "chart": "Array.from(document.querySelectorAll('img[data-kind=groups]'))"
        ".map(i => [i.naturalWidth, i.getBoundingClientRect().left, i.getBoundingClientRect().right])",
        "client": "document.documentElement.clientWidth",
        "section": "document.getElementById('slices').innerText",
    }
    with Browser() as browser:
        page = browser.open(files.report_path, checks=checks, viewport=(1400, 900))
    assert page.console_errors == [] and page.values["scroll"] is True
    ((width, left, right),) = page.values["chart"]
    assert width > 200 and left >= 0 and right <= page.values["client"]
    assert page.values["section"] == "Per group"
