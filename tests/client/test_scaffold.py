"""``python -m ultra_client.scaffold``: a new server's common files, which load as a server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ultra_client.scaffold import scaffold

ROOT = Path(__file__).resolve().parents[2]


def test_the_common_files_make_a_server_that_loads(tmp_path: Path) -> None:
    written = scaffold(tmp_path, "demo", "score", "scores answers by length")
    assert sorted(str(p.relative_to(tmp_path)) for p in written) == [
        "docs/tools/demo.md",
        "servers/demo/__init__.py",
        "servers/demo/__main__.py",
        "servers/demo/parameter.yaml",
        "servers/demo/server.py",
        "servers/demo/tools/__init__.py",
        "tests/demo/__init__.py",
    ]
    assert (
        "<!-- generated: tool demo.score -->\n<!-- end generated -->" in (tmp_path / "docs/tools/demo.md").read_text()
    )
    tool = tmp_path / "servers/demo/tools/score.py"
    tool.write_text(
        "from ultra_kit.factory import tool_hints\n\n\n@tool_hints(read_only=True)\n"
        'def score(pred_ls: list[str], threshold: float) -> dict:\n    """Scores."""\n'
        '    return {"scores": [float(len(p) > threshold) for p in pred_ls]}\n\n\nTOOLS = [score]\n'
    )
    (tmp_path / "servers/demo/parameter.yaml").write_text("threshold: 3\n")
    (tmp_path / "servers/__init__.py").write_text("")
    code = (
        "import sys; from pathlib import Path; from ultra_kit.inprocess import load_spec, local_tools; "
        f"spec = load_spec('servers.demo', Path({str(tmp_path)!r})); tool = local_tools(spec)['score']; "
        "print(tool.function(pred_ls=['ab', 'abcdef'], **tool.settings))"
    )
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'scores': [0.0, 1.0]}"


def test_nothing_is_overwritten_and_names_are_checked(tmp_path: Path) -> None:
    scaffold(tmp_path, "demo", "score", "x")
    before = (tmp_path / "servers/demo/server.py").read_text()
    with pytest.raises(SystemExit, match="nothing written: .*already exist"):
        scaffold(tmp_path, "demo", "other", "y")
    assert (tmp_path / "servers/demo/server.py").read_text() == before
    assert not (tmp_path / "servers/demo/tools/other.py").exists()
    with pytest.raises(SystemExit, match="must be lower-case"):
        scaffold(tmp_path, "My-Server", "score", "x")
