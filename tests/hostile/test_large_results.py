"""A large get_data result can come back as a file (#40 M14): above ``max_result_bytes`` the tool writes the whole
result to ``save_path`` and returns only ``data_path`` and ``data_info``, because the MCP SDK's stdio reader is
slow on a large line (a 50 MB result took 290 s through ``ClientSession`` on a loaded machine). Through a real MCP
stdio client and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error
from tests.hostile.test_caps import call_over_mcp

RECORDS = 500


def write_data(tmp_path: Path) -> Path:
    """500 records of about 1 KB each: a result of about half a megabyte."""
    path = tmp_path / "big.jsonl"
    rows = [
        {"id": f"q{i}", "question": f"question {i} " + "x" * 1000, "golden_answers": [f"answer {i}"]}
        for i in range(RECORDS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def get_data(tmp_path: Path, **arguments: object) -> dict:
    benchmark = {"path": str(write_data(tmp_path)), **arguments}
    result = anyio.run(call_over_mcp, tmp_path, "benchmark", "get_data", {"benchmark": benchmark})
    assert not result.is_error, result.content
    return result.structured_content


def test_a_result_over_max_result_bytes_comes_back_as_a_file_over_mcp(tmp_path: Path) -> None:
    inline = get_data(tmp_path)  # the default, -1: the lists themselves
    assert len(inline["q_ls"]) == RECORDS and "data_path" not in inline
    small = get_data(tmp_path, max_result_bytes=100_000, save_path=str(tmp_path / "results"))
    assert set(small) == {"data_path", "data_info"}, sorted(small)
    path = Path(small["data_path"])
    assert path.parent == tmp_path / "results" and path.name.startswith("get_data_") and path.suffix == ".json"
    assert path.stat().st_size > 100_000
    assert json.loads(path.read_text(encoding="utf-8")) == inline  # the same lists and data_info
    assert small["data_info"] == inline["data_info"] and small["data_info"]["kept_rows"] == RECORDS


def test_a_result_within_max_result_bytes_stays_inline(tmp_path: Path) -> None:
    result = get_data(tmp_path, max_result_bytes=10_000_000, save_path=str(tmp_path / "results"))
    assert len(result["q_ls"]) == RECORDS and "data_path" not in result
    assert not (tmp_path / "results").exists()


def test_max_result_bytes_through_ultra_call(tmp_path: Path) -> None:
    data = write_data(tmp_path)
    out = tmp_path / "results"
    done = run_ultra(
        "call",
        "benchmark.get_data",
        f"benchmark.path={data}",
        "benchmark.max_result_bytes=1000",
        f"benchmark.save_path={out}",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (
        set(result) == {"data_path", "data_info"}
        and len(json.loads(Path(result["data_path"]).read_text())["id_ls"]) == RECORDS
    )
    for value, shown in (
        ("true", "must be an integer, got true"),
        ("-2", "greater than or equal to -1"),
        ("1.5", "got a number (1.5)"),
    ):
        clear_error(
            run_ultra(
                "call",
                "benchmark.get_data",
                f"benchmark.path={data}",
                f"benchmark.max_result_bytes={value}",
                cwd=tmp_path,
            ),
            shown,
        )
