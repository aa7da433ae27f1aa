"""The MCP tools in-process and over real stdio: results, files written, bad input, defaults."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from servers.evaluation.server import SPEC
from servers.evaluation.tools import trec as trec_tools
from ultra_kit.settings import defaults
from ultra_trec.measures import FAMILIES

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "trec_eval"


def test_default_paths_exist() -> None:
    settings = defaults("evaluation")
    for key in ("run_path", "qrels_path", "run_new_path", "run_old_path"):
        assert (ROOT / settings[key]).exists(), key


def test_ir_metrics_field_lists_every_measure_name() -> None:
    field = trec_tools.MetricsParam.__metadata__[0].description
    for family in FAMILIES.values():
        for name in (*family.usage(), *family.trec_names(), *family.aliases):
            assert name in field, name


def test_importing_the_server_stays_light() -> None:
    code = (
        "import sys, servers.evaluation.server; print([m for m in ('pyarrow', 'scipy', 'torch') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.anyio
async def test_evaluate_trec_returns_ultrarag_keys_and_writes_file(tmp_path: Path) -> None:
    args = {"run_path": str(DATA / "results.test"), "qrels_path": str(DATA / "qrels.test"), "save_path": str(tmp_path)}
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("evaluate_trec", {**args, "ks": [5, 10]})
    assert not result.is_error
    data = result.structured_content
    assert list(data["eval_res"]) == ["mrr", "map", "recall@5", "recall@10", "ndcg@5", "ndcg@10", "P@5", "P@10"]
    assert data["eval_res"]["map"] == pytest.approx(0.1785, abs=1e-4)  # out.test
    assert data["counts"]["num_rel_ret"] == 131
    saved = json.loads(Path(data["result_path"]).read_text())
    assert set(saved) == {"aggregate", "per_query", "counts", "settings"}
    assert saved["per_query"]["301"]["map"] == pytest.approx(0.0324, abs=1e-4)


@pytest.mark.anyio
async def test_run_from_an_earlier_step_as_mapping(tmp_path: Path) -> None:
    run = {"301": {"FBIS3-10082": 2.0, "missing-doc": 1.0}, "999": {"x": 1.0}}
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool(
            "evaluate_trec",
            {
                "run": run,
                "qrels_path": str(DATA / "qrels.test"),
                "ir_metrics": ["P@1", "mrr"],
                "ks": [],
                "save_path": str(tmp_path),
            },
        )
    assert not result.is_error, result.content[0].text
    counts = result.structured_content["counts"]
    assert counts["queries_only_in_run"] == 1 and counts["queries_missing_in_run"] == 2


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("301 Q0 d1 1 2.0 t\n301 Q0 d2 2\n", "bad.run:2: expected 6"),
        ("301 Q0 d1 1 abc t\n", "bad.run:1: the score (5th field) is not a number"),
        ("301 Q0 d1 1 2.0 t\n301 Q0 d1 2 1.0 t\n", "line 1 and line 2"),
        ("", "empty run file"),
        ("# only a comment\n", "no run lines"),
        ("777 Q0 d1 1 2.0 t\n", "no query in common"),
    ],
)
async def test_bad_runs_are_tool_errors_and_write_nothing(tmp_path: Path, content: str, expected: str) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text(content)
    out = tmp_path / "out"
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool(
            "evaluate_trec", {"run_path": str(bad), "qrels_path": str(DATA / "qrels.test"), "save_path": str(out)}
        )
    assert result.is_error
    assert expected in result.content[0].text
    assert not out.exists()


@pytest.mark.anyio
async def test_unknown_metric_lists_known_ones(tmp_path: Path) -> None:
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("evaluate_trec", {"ir_metrics": ["nope"], "save_path": str(tmp_path / "o")})
    assert result.is_error and "known measures" in result.content[0].text


@pytest.mark.anyio
async def test_pvalue_table_for_several_runs_is_deterministic(tmp_path: Path) -> None:
    args = {
        "run_old_path": str(ROOT / "data/trec/results.test"),
        "run_paths": [str(ROOT / "data/trec/results.perturbed"), str(DATA / "results.trunc")],
        "qrels_path": str(DATA / "qrels.test"),
        "ir_metrics": ["map", "ndcg@10"],
        "ks": [],
        "save_path": str(tmp_path),
    }
    async with Client(SPEC.create_app()) as client:
        first = (await client.call_tool("evaluate_trec_pvalue", args)).structured_content
        again = (await client.call_tool("evaluate_trec_pvalue", args)).structured_content
    assert first["table"] == again["table"]
    assert len(first["table"]) == 4 and first["num_q"] == 3
    row = first["eval_res"][f"{DATA / 'results.trunc'}/map"]
    assert row["A_mean"] == pytest.approx(0.1016, abs=1e-4)  # out.test.aqc
    assert row["B_mean"] == pytest.approx(0.1785, abs=1e-4)
    assert {"p_value", "significant", "p_value_adjusted", "ci_low", "ci_high", "effect_size"} <= set(row)
    assert row["p_value"] in {0.25, 0.5, 0.75, 1.0}  # 3 queries: exact enumeration of 8 sign patterns


@pytest.mark.anyio
async def test_real_stdio_server(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "servers.evaluation"],
        cwd=str(ROOT),
        env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"},  # tmp_path lies outside output/
    )
    async with Client(params) as client:
        result = await client.call_tool("evaluate_trec", {"ir_metrics": ["map"], "ks": [], "save_path": str(tmp_path)})
    assert result.structured_content["eval_res"]["map"] == pytest.approx(0.1785, abs=1e-4)


@pytest.mark.anyio
async def test_trec_eval_names_and_all_trec_through_the_tool(tmp_path: Path) -> None:
    args = {"run_path": str(DATA / "results.test"), "qrels_path": str(DATA / "qrels.test"), "save_path": str(tmp_path)}
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("evaluate_trec", {**args, "ir_metrics": ["all_trec"], "names": "trec_eval"})
    assert not result.is_error, result.content[0].text
    eval_res = result.structured_content["eval_res"]
    for line in (DATA / "out.test.aq").read_text().splitlines():  # every summary line of trec_eval -m all_trec
        name, query, value = line.split()
        if query == "all" and name != "runid":
            assert eval_res[name] == pytest.approx(float(value), abs=1e-4 + 1e-12), name
    saved = json.loads(Path(result.structured_content["result_path"]).read_text())
    assert saved["per_query"]["302"]["relstring"] == "1101110110"  # out.test.aq
    assert saved["settings"]["runid"] == "STANDARD"


@pytest.mark.anyio
async def test_pvalue_rows_carry_raw_and_corrected_significance(tmp_path: Path) -> None:
    args = {
        "run_old_path": str(ROOT / "data/trec/results.test"),
        "run_new_path": str(ROOT / "data/trec/results.perturbed"),
        "qrels_path": str(DATA / "qrels.test"),
        "ir_metrics": ["map", "P@5", "ndcg@10", "bpref", "runid"],
        "ks": [],
        "alpha": 0.6,
        "names": "trec_eval",
        "save_path": str(tmp_path),
    }
    async with Client(SPEC.create_app()) as client:
        result = (await client.call_tool("evaluate_trec_pvalue", args)).structured_content
    rows = result["table"]
    assert [row["metric"] for row in rows] == ["map", "P_5", "ndcg_cut_10", "bpref"]  # runid is text: not tested
    for row in rows:
        assert row["significant_raw"] == (row["p_value"] < 0.6)
        assert row["significant"] == (row["p_value_adjusted"] < 0.6)
    bpref = rows[-1]  # 3 queries: exact p = 4/8; Holm over 4 rows lifts it to 1
    assert (bpref["p_value"], bpref["p_value_adjusted"]) == (0.5, 1.0)
    assert bpref["significant_raw"] and not bpref["significant"]
    saved = json.loads(Path(result["result_path"]).read_text())
    kinds = saved["settings"]["metric_kinds"]  # the metrics by their trec_eval names, as the rows
    assert kinds == {"map": "continuous", "P_5": "continuous", "ndcg_cut_10": "continuous", "bpref": "continuous",
                     "num_ret": "count", "num_rel": "count", "num_rel_ret": "count"}  # fmt: skip
    baseline = saved["per_query"]["baseline"]  # results.test: trec_eval -q's per-query lines (out.test.aq)
    expected = {}
    for line in (DATA / "out.test.aq").read_text().splitlines():
        name, query, value = line.split()
        if query in baseline and name in ("map", "P_5", "ndcg_cut_10", "bpref", "num_rel_ret"):
            expected[query, name] = float(value)
    assert len(expected) == 3 * 5
    for (query, name), value in expected.items():
        assert baseline[query][name] == pytest.approx(value, abs=1e-4), (query, name)
    assert set(saved["per_query"][str(ROOT / "data/trec/results.perturbed")]["301"]) == set(baseline["301"])


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["evaluate_trec", "evaluate_trec_pvalue"])
async def test_a_save_path_outside_output_is_refused_before_the_run_is_read(
    tool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", raising=False)
    monkeypatch.chdir(tmp_path)
    missing = str(tmp_path / "no_such_run.txt")  # reading it would fail with another message
    runs = {"run_path": missing} if tool == "evaluate_trec" else {"run_new_path": missing, "run_old_path": missing}
    args = {**runs, "qrels_path": str(DATA / "qrels.test"), "save_path": str(tmp_path.parent / "elsewhere")}
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    message = result.content[0].text
    assert "save_path is outside the output folder" in message
    assert "no_such_run" not in message
    assert not (tmp_path.parent / "elsewhere").exists()
