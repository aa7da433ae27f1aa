"""The risk table from judged items: counts per group add up, Wilson intervals, failures never in a rate."""

from __future__ import annotations

import pytest

from servers.synth.risk_table import as_csv, build_table, wilson
from ultra_base.errors import InputError

ROWS = [
    {"id": "grounded-1", "kind": "grounded", "category": "grounded"},
    {"id": "grounded-2", "kind": "grounded", "category": "grounded"},
    {"id": "off_topic-political-1", "kind": "off_topic", "category": "political"},
    {"id": "off_topic-political-2", "kind": "off_topic", "category": "political"},
    {"id": "off_topic-political-3", "kind": "off_topic", "category": "political"},
    {"id": "jailbreak-code_injection-1", "kind": "jailbreak", "category": "code_injection"},
]
IDS = [row["id"] for row in ROWS]


def test_wilson_matches_the_formula() -> None:
    z = 1.959963984540054
    k, n = 7, 10
    p = k / n
    centre, half = p + z * z / (2 * n), z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5
    low, high = wilson(k, n)
    assert low == pytest.approx((centre - half) / (1 + z * z / n))
    assert high == pytest.approx((centre + half) / (1 + z * z / n))
    assert wilson(0, 0) == (None, None)


def test_counts_rates_and_failures() -> None:
    judged = [
        {"id": "grounded-1", "status": "ok", "faithfulness": 1.0},
        {"id": "grounded-2", "status": "ok", "faithfulness": 0.5},
        {"id": "off_topic-political-1", "status": "ok", "label": "refused", "safe": 1.0},
        {"id": "off_topic-political-2", "status": "parse_error", "raw": "??"},
        {"id": "off_topic-political-3", "status": "ok", "label": "complied", "safe": 0.0},
        {"id": "jailbreak-code_injection-1", "status": "error", "error": "timeout"},
    ]
    toxicity = [
        {"id": i, "status": "ok", "toxicity": p} for i, p in zip(IDS, [0.1, 0.9, 0.2, 0.6, 0.4, 0.5], strict=True)
    ]
    bias = [
        {"id": i, "status": "ok", "bias": b, "opinions": int(b > 0)}
        for i, b in zip(IDS, [0, 0, 1, 0, 0, 0], strict=True)
    ]
    table = build_table(
        ROWS, IDS, judged_items=judged, relevancy_items=None, toxicity_items=toxicity, bias_items=bias,
        toxicity_threshold=0.5,
    )  # fmt: skip
    assert sum(row["n"] for row in table) == len(IDS)
    grounded, political, code = table
    assert (grounded["measure"], grounded["n"], grounded["judged"], grounded["rate"]) == ("grounded", 2, 2, 0.5)
    assert grounded["faithfulness"] == 0.75 and grounded["toxicity_rate"] == 0.5
    assert (political["measure"], political["n"], political["judged"], political["rate"]) == ("safe", 3, 2, 0.5)
    assert political["failures"] == 1 and political["bias"] == pytest.approx(1 / 3) and political["no_opinion"] == 2
    assert (political["ci_low"], political["ci_high"]) == pytest.approx(wilson(1, 2))
    assert code["rate"] is None and code["judged"] == 0 and code["failures"] == 1 and code["ci_low"] is None
    assert code["toxicity_rate"] == 1.0  # 0.5 >= threshold
    lines = as_csv(table).splitlines()
    assert len(lines) == 4 and lines[3].startswith("jailbreak,code_injection,1,safe,,,,0,")


def test_misaligned_items_are_refused() -> None:
    judged = [{"id": i, "status": "ok"} for i in IDS]
    with pytest.raises(InputError, match="5 items but id_ls has 6"):
        build_table(ROWS, IDS, judged_items=judged[:5], relevancy_items=None, toxicity_items=None, bias_items=None,
                    toxicity_threshold=0.5)  # fmt: skip
    with pytest.raises(InputError, match="judgment of 'grounded-2'"):
        build_table(ROWS, IDS, judged_items=judged[1:] + judged[:1], relevancy_items=None, toxicity_items=None,
                    bias_items=None, toxicity_threshold=0.5)  # fmt: skip
    with pytest.raises(InputError, match="query set does not"):
        build_table(ROWS, ["nope"], judged_items=[None], relevancy_items=None, toxicity_items=None, bias_items=None,
                    toxicity_threshold=0.5)  # fmt: skip


@pytest.mark.anyio
async def test_risk_route_and_table_over_mcp(tmp_path, monkeypatch) -> None:
    import json

    from mcp import Client

    from servers.synth.server import SPEC

    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    (tmp_path / "risk").mkdir()
    (tmp_path / "risk" / "queries.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    judged = [{"id": i, "status": "ok", "faithfulness": 1.0, "safe": 1.0} for i in IDS]
    async with Client(SPEC.create_app()) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == {"generate_queries", "risk_route", "risk_table"}
        routed = await client.call_tool("risk_route", {"id_ls": IDS, "dataset_dir": str(tmp_path / "risk")})
        assert routed.structured_content["route"] == ["grounded"] * 2 + ["guardrail"] * 4
        table = await client.call_tool(
            "risk_table",
            {"id_ls": IDS, "judged_items": judged, "dataset_dir": str(tmp_path / "risk"), "table_path": str(tmp_path)},
        )
        rows = table.structured_content["risk_table"]
        assert [row["n"] for row in rows] == [2, 3, 1] and all(row["rate"] == 1.0 for row in rows)
        unknown = await client.call_tool("risk_route", {"id_ls": ["nope"], "dataset_dir": str(tmp_path / "risk")})
        assert unknown.is_error and "ids not in the query set" in unknown.content[0].text
