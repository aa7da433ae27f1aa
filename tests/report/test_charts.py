"""Charts chosen by each metric's declared kind: binary -> rates with Wilson intervals, graded -> stacked grade
shares, continuous -> box plots (ECDF when a run has few values), constant -> one line of text. The kinds come
from the registries through the result files (evaluate's settings, the judges' metric_kinds)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from servers.report.charts import ECDF_BELOW, wilson
from tests.report.conftest import Results
from tests.report.helpers import build


def write(folder: Path, name: str, values: dict[str, list[float]], kinds: dict[str, str]) -> Path:
    size = len(next(iter(values.values())))
    document = {
        "id_ls": [f"q{i}" for i in range(size)],
        **values,
        "settings": {"metrics": list(values), "metric_kinds": kinds},
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_each_kind_gets_its_chart(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n = 40
    values = {
        "em": [float(v) for v in rng.integers(0, 2, n)],
        "grade": [float(v) for v in rng.integers(0, 4, n)],
        "score": [float(v) for v in rng.random(n)],
        "zero": [0.0] * n,
    }
    kinds = {"em": "binary", "grade": "graded", "score": "continuous", "zero": "binary"}
    path = write(tmp_path, "run", values, kinds)
    files = build([path], tmp_path / "out")
    names = {p.name for p in files.plot_paths}
    assert names == {"rate_em.png", "grades_grade.png", "boxplot_score.png"}
    page = files.report_path.read_text(encoding="utf-8")
    assert f"Constant: zero: 0 for every one of the {n} values of every run" in page
    assert 'data-kind="binary"' in page and 'data-kind="graded"' in page and 'data-kind="continuous"' in page


def test_few_values_give_an_ecdf_and_undeclared_metrics_are_continuous(tmp_path: Path) -> None:
    path = write(tmp_path, "run", {"score": [0.1, 0.4, 0.3], "other": [1.0, 0.0, 1.0]}, {"score": "continuous"})
    assert ECDF_BELOW > 3
    names = {p.name for p in build([path], tmp_path / "out").plot_paths}
    assert names == {"ecdf_score.png", "ecdf_other.png"}  # other declares no kind: continuous


def test_wilson_interval_is_scipys() -> None:
    low, high = wilson(7, 10)  # the 95% Wilson score interval, computed by hand
    z = 1.959963984540054
    centre, half = (0.7 + z * z / 20) / (1 + z * z / 10), z * np.sqrt(0.7 * 0.3 / 10 + z * z / 400) / (1 + z * z / 10)
    assert abs(low - (centre - half)) < 1e-9 and abs(high - (centre + half)) < 1e-9


def test_the_tools_record_the_registries_kinds(results: Results, tmp_path: Path) -> None:
    (evaluate,) = (results.evaluate / "files").glob("evaluate_*.json")
    kinds = json.loads(evaluate.read_text(encoding="utf-8"))["settings"]["metric_kinds"]
    assert kinds["em"] == "binary" and kinds["f1"] == "continuous"
    (idk,) = results.judges.glob("idk_judge_*.json")
    assert json.loads(idk.read_text(encoding="utf-8"))["metric_kinds"] == {
        "idk": "graded",
        "answer_attempted": "binary",
    }
    files = build([results.evaluate], tmp_path)
    names = {p.name for p in files.plot_paths}
    em = json.loads(evaluate.read_text(encoding="utf-8"))["em"]
    if len(set(em)) > 1:
        assert "rate_em.png" in names
    else:  # the example's answers never match exactly: one line of text, no flat plot
        assert f"Constant: em: {em[0]:.4g} for every one of the {len(em)} values" in files.report_path.read_text()
    assert "boxplot_f1.png" in names and not any(name.endswith("_em.png") and "rate" not in name for name in names)
