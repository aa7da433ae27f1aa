"""Hostile templates: files outside the template folders, endless loops, huge output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from servers.prompt.server import SPEC
from tests.conftest import ROOT, run_ultra
from tests.support.together import at_once
from ultra_kit import jinja_sandbox as sandbox
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools


def qa_boxed(**arguments):
    tool = local_tools(SPEC)["qa_boxed"]
    return anyio.run(call_local_tool, tool, {"q_ls": ["Who?"], **arguments})


@pytest.mark.parametrize("reference", ["/etc/passwd", "/proc/self/environ", "../../../../etc/hostname"])
def test_files_outside_the_template_folders_are_refused(reference: str) -> None:
    with pytest.raises(ToolFailure) as caught:
        qa_boxed(qa_template=reference)
    message = str(caught.value)
    assert reference in message and "Available: ['qa_boxed', 'qa_rag_boxed']" in message
    assert "root:" not in message


def test_jinja_named_files_outside_and_links_out_are_refused(tmp_path: Path) -> None:
    mine, elsewhere = tmp_path / "mine", tmp_path / "elsewhere"
    mine.mkdir(), elsewhere.mkdir()
    (elsewhere / "secret.jinja").write_text("SECRET {{ question }}")
    (mine / "ok.jinja").write_text("OK {{ question }}")
    (mine / "leak.jinja").symlink_to(elsewhere / "secret.jinja")
    dirs = [str(mine)]
    assert qa_boxed(qa_template="ok", template_dirs=dirs)["prompt_ls"] == ["OK Who?\n"]
    for reference in ["leak", str(mine / "leak.jinja"), str(elsewhere / "secret.jinja"), "../elsewhere/secret.jinja"]:
        with pytest.raises(ToolFailure, match="outside the template folders") as caught:
            qa_boxed(qa_template=reference, template_dirs=dirs)
        assert "'leak', 'ok', 'qa_boxed'" in str(caught.value)


def test_huge_output_is_stopped(tmp_path: Path) -> None:
    (tmp_path / "flood.jinja").write_text("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}")
    with pytest.raises(ToolFailure, match=r"flood.jinja: template stopped: the prompt is longer than 4000000"):
        qa_boxed(qa_template="flood", template_dirs=[str(tmp_path)])


@pytest.mark.parametrize(
    "source",
    [
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
    ],
)
def test_endless_rendering_meets_the_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    monkeypatch.setattr(sandbox, "RENDER_SECONDS", 0.3)
    (tmp_path / "slow.jinja").write_text(source)
    with pytest.raises(ToolFailure, match=r"slow.jinja: template stopped: rendering one prompt took longer than 0.3 s"):
        qa_boxed(qa_template="slow", template_dirs=[str(tmp_path)])


@pytest.mark.parametrize(
    "source",
    [
        "{{ 'x' * 100000000 }}",
        "{{ '%999999999d' % 1 }}",
        "{{ '{:>999999999}'.format(1) }}",
        "{{ 'x'.center(999999999) }}",
        "{{ 'x'|center(999999999) }}",
        "{{ 2 ** 100000000 }}",
    ],
)
def test_huge_values_are_refused_before_they_are_built(tmp_path: Path, source: str) -> None:
    (tmp_path / "big.jinja").write_text(source)
    with pytest.raises(ToolFailure, match="big.jinja: template stopped"):
        qa_boxed(qa_template="big", template_dirs=[str(tmp_path)])


def test_a_template_file_too_large_is_refused(tmp_path: Path) -> None:
    (tmp_path / "fat.jinja").write_text("x" * 1_000_001)
    with pytest.raises(ToolFailure, match="fat.jinja: template file is larger than 1000000 bytes"):
        qa_boxed(qa_template="fat", template_dirs=[str(tmp_path)])


def test_ultra_call_refuses_the_password_file(tmp_path: Path) -> None:
    ran = at_once(
        {  # both calls at once
            "done": lambda: run_ultra("call", "prompt.qa_boxed", 'q_ls=["x"]', "qa_template=/etc/passwd", cwd=ROOT),
            "ok": lambda: run_ultra("call", "prompt.qa_boxed", 'q_ls=["x"]', cwd=ROOT),
        }
    )
    done, ok = ran["done"], ran["ok"]
    assert done.returncode != 0 and "root:" not in done.stdout + done.stderr
    assert "'/etc/passwd' is outside the template folders" in done.stderr and "Traceback" not in done.stderr
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["prompt_ls"][0].rstrip().endswith("x")
    assert os.path.exists("/etc/passwd")
