"""``ppi`` and ``compare_judged`` name the bad value (issue 40, M15-M17), through a real MCP stdio client."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.client.test_run_in_process import TOY_SPEC
from tests.hostile.test_caps import refused_over_mcp
from tests.support.background import Command, Finished, Prepare, in_background

JUDGED = {"a": {str(i): 0.1 * (i % 7) for i in range(30)}}
HUMAN = {"a": {str(i): float(i % 2) for i in range(12)}}


@pytest.mark.parametrize(("label", "shown"), [("yes", "got a string ('yes')"), (None, "got null")])
def test_ppi_names_a_label_that_is_not_a_number(tmp_path: Path, label: object, shown: str) -> None:
    human = {"a": {**HUMAN["a"], "3": label}}
    refused_over_mcp(tmp_path, "evaluation", "ppi", {"judged": JUDGED, "human": human,
                     "save_path": str(tmp_path / "p.json")}, f"`human.a.3` must be a number, {shown}")  # fmt: skip


def test_compare_judged_names_a_sample_that_is_not_a_number(tmp_path: Path) -> None:
    samples = {"a": {"1": [0.5, "x"], "2": [0.1]}, "b": {"1": [0.2], "2": [0.3]}}
    expected = "`samples.a.1[1]` must be a number, got a string ('x')"
    refused_over_mcp(tmp_path, "evaluation", "compare_judged", {"samples": samples,
                     "save_path": str(tmp_path / "c.json")}, expected)  # fmt: skip


def test_ppi_refuses_scores_that_overflow(tmp_path: Path) -> None:
    judged = {"a": {str(i): (1e308 if i % 2 else -1e308) for i in range(30)}}
    refused_over_mcp(tmp_path, "evaluation", "ppi", {"judged": judged, "human": HUMAN,
                     "save_path": str(tmp_path / "p.json")}, "must lie within ±1e+100")  # fmt: skip


def test_compare_judged_with_sample_values_a_list(tmp_path: Path) -> None:
    items = [{"id": "1", "f": 0.5, "status": "ok", "sample_values": [1, 2]}] * 2
    refused_over_mcp(tmp_path, "evaluation", "compare_judged",
                     {"judged_items": items, "system_ls": ["a", "b"], "judge_metric": "f",
                      "save_path": str(tmp_path / "c.json")},
                     "item 1's sample_values must be a mapping {metric: [k samples]}", "got list")  # fmt: skip


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
