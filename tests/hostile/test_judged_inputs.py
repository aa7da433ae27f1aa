"""``ppi`` and ``compare_judged`` name the bad value (issue 40, M15-M17), through a real MCP stdio client."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.client.test_run_in_process import TOY_SPEC
from tests.hostile.test_caps import refused_in_background, spare_mcp
from tests.support.background import Command, Finished, Prepare, in_background

JUDGED = {"a": {str(i): 0.1 * (i % 7) for i in range(30)}}
HUMAN = {"a": {str(i): float(i % 2) for i in range(12)}}


def ppi_label(label: object) -> pytest.MarkDecorator:
    human = {"a": {**HUMAN["a"], "3": label}}
    return spare_mcp("evaluation", "ppi", lambda tmp_path: {"judged": JUDGED, "human": human,
                                                            "save_path": str(tmp_path / "p.json")})  # fmt: skip


@pytest.mark.parametrize(
    ("label", "shown"),
    [
        pytest.param(label, shown, marks=ppi_label(label))
        for label, shown in [("yes", "got a string ('yes')"), (None, "got null")]
    ],
)
def test_ppi_names_a_label_that_is_not_a_number(background_run: Finished, label: object, shown: str) -> None:
    refused_in_background(background_run, f"`human.a.3` must be a number, {shown}")


@spare_mcp("evaluation", "compare_judged", lambda tmp_path: {
    "samples": {"a": {"1": [0.5, "x"], "2": [0.1]}, "b": {"1": [0.2], "2": [0.3]}},
    "save_path": str(tmp_path / "c.json")})  # fmt: skip
def test_compare_judged_names_a_sample_that_is_not_a_number(background_run: Finished) -> None:
    expected = "`samples.a.1[1]` must be a number, got a string ('x')"
    refused_in_background(background_run, expected)


@spare_mcp("evaluation", "ppi", lambda tmp_path: {
    "judged": {"a": {str(i): (1e308 if i % 2 else -1e308) for i in range(30)}}, "human": HUMAN,
    "save_path": str(tmp_path / "p.json")})  # fmt: skip
def test_ppi_refuses_scores_that_overflow(background_run: Finished) -> None:
    refused_in_background(background_run, "must lie within ±1e+100")


@spare_mcp("evaluation", "compare_judged", lambda tmp_path: {
    "judged_items": [{"id": "1", "f": 0.5, "status": "ok", "sample_values": [1, 2]}] * 2, "system_ls": ["a", "b"],
    "judge_metric": "f", "save_path": str(tmp_path / "c.json")})  # fmt: skip
def test_compare_judged_with_sample_values_a_list(background_run: Finished) -> None:
    refused_in_background(background_run, "item 1's sample_values must be a mapping {metric: [k samples]}",
                          "got list")  # fmt: skip


def boom_call(where: str, how: list[str]) -> Prepare:
    """``ultra call WHERE.boom`` (in-process or ``--stdio``) on a copy of the toy spec server at ``folder/WHERE``:
    a spare background run (tests/support/background.py)."""

    def prepare(folder: Path) -> Command:
        shutil.copytree(TOY_SPEC, folder / where, ignore=shutil.ignore_patterns("__pycache__"))
        return Command(("call", *how, f"{where}.boom", "items=[apples]", "mark=-x"), timeout=120, cwd=folder)

    return prepare


def hows(where: str) -> list:
    """In-process and ``--stdio`` (ids how0 and how1), each call a spare background run."""
    return [pytest.param(how, marks=in_background(boom_call(where, how), spare=True), id=f"how{i}")
            for i, how in enumerate(([], ["--stdio"]))]  # fmt: skip


@pytest.mark.parametrize("how", hows("toyspec"))
def test_an_unexpected_error_says_unexpected_error_and_its_type(background_run: Finished, how: list[str]) -> None:
    """M17's other half: a tool's crash reaches ``ultra call`` (in-process and over MCP stdio) as the documented
    ``unexpected error: <Type>: <message>``, never the bare message."""
    done = background_run.done
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "Error executing tool boom: unexpected error: RuntimeError: cannot count apples-x" in done.stderr


@pytest.mark.parametrize("how", hows("mine/toyspec"))
def test_ultra_call_on_a_server_named_by_its_path(background_run: Finished, how: list[str]) -> None:
    """``ultra call mine/toyspec.boom``: the server's log is named without the slash (it was a missing folder)."""
    done = background_run.done
    assert done.returncode == 1 and "No such file" not in done.stderr, done.stderr
    assert "unexpected error: RuntimeError: cannot count apples-x" in done.stderr and "mine_toyspec" in done.stderr
