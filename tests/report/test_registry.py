"""Every result kind the project's tools write is known to the report: walk every server's tools (their SPEC)
and their declared outputs; a tool that writes a file (an output naming it) is claimed by one of the report's
kinds, or is listed in NOT_RESULTS with the reason its file is no result. And every metric a registry declares
has a kind the charts know (binary, graded, continuous)."""

from __future__ import annotations

from pathlib import Path

from servers.report.kinds import KINDS, NOT_RESULTS
from tests.conftest import ROOT
from ultra_kit.inprocess import load_spec, local_tools

FILE_OUTPUTS = ("result_path", "table_path", "table_json_path", "summary_path", "report_path", "compare_path")


def every_tool() -> dict[str, list[str]]:
    """{tool name: its declared outputs} of every server under servers/."""
    tools: dict[str, list[str]] = {}
    for folder in sorted((ROOT / "servers").iterdir()):
        if not (folder / "server.py").is_file():
            continue
        spec = load_spec(f"servers.{folder.name}", ROOT)
        assert spec is not None, f"{folder} has no loadable SPEC"
        for name, tool in local_tools(spec).items():
            tools[name] = tool.outputs
    return tools


def test_every_tool_that_writes_a_result_file_has_a_renderer() -> None:
    tools = every_tool()
    writers = {name: outputs for name, outputs in tools.items() if set(outputs) & set(FILE_OUTPUTS)}
    assert {"evaluate_trec", "faithfulness", "risk_table", "consistency"} <= set(writers)  # the walk sees them
    unclaimed = [
        name
        for name, outputs in writers.items()
        if name not in NOT_RESULTS and not any(kind.claims(name, outputs) for kind in KINDS.values())
    ]
    assert unclaimed == [], f"result kinds without a renderer in servers/report/kinds/__init__.py: {unclaimed}"
    assert set(NOT_RESULTS) <= set(tools)  # no stale exclusions


def test_a_tool_without_a_renderer_is_found() -> None:
    """The check above would fail on a tool whose file no kind claims."""
    outputs = ["result_path", "score"]
    assert not any(kind.claims("made_up_tool", outputs) for kind in KINDS.values())


def test_every_declared_metric_has_a_chart_kind() -> None:
    from servers.evaluation.answers.metrics import METRICS
    from servers.judge.answers.registry import JUDGES
    from servers.report.charts import CHART_KINDS

    for judge in JUDGES:
        assert set(judge.metric_kinds) == set(judge.metrics), judge.name
        assert set(judge.metric_kinds.values()) <= set(CHART_KINDS), judge.name
    assert {metric.kind for metric in METRICS.values()} <= set(CHART_KINDS)
    assert METRICS["em"].kind == "binary" and METRICS["f1"].kind == "continuous"


def test_the_walk_covers_every_server_folder() -> None:
    folders = {p.name for p in Path(ROOT / "servers").iterdir() if (p / "server.py").is_file()}
    assert {"evaluation", "judge", "synth", "report"} <= folders
