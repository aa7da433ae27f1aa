"""A server outside ``servers/``, named in a pipeline by its path, whose own ``parameter.yaml`` caps the limits of a
mapping setting: ``ultra build`` and ``ultra run`` hold the pipeline's parameter file to those caps, as they hold a
shipped server's to ``servers/<name>/parameter.yaml`` (before, a server elsewhere was not checked: a
``max_workers`` of 1,000,000 against a cap of 8 built and ran). Real CLI subprocesses on a real server package."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error

SERVER = {
    "__init__.py": '"""A custom server outside servers/."""\n',
    "__main__.py": "from mine.server import SPEC\n\nSPEC.main()\n",
    "server.py": (
        "from pathlib import Path\n\nfrom mine.tools import load_tools\nfrom ultra_kit.factory import ServerSpec\n\n"
        'SPEC = ServerSpec("mine", Path(__file__).parent, load_tools)\n'
    ),
    "tools/__init__.py": 'from ultra_kit.factory import tool_modules\n\nload_tools = tool_modules(__name__, "score")\n',
    "tools/score.py": (
        "from typing import Any\n\nfrom typing_extensions import TypedDict\n\n\nclass Scores(TypedDict):\n"
        "    scores: list[float]\n\n\ndef score(my_llm: dict[str, Any]) -> Scores:\n"
        '    """The workers it was given, as its score."""\n'
        '    return {"scores": [float(my_llm["max_workers"])]}\n\n\nTOOLS = [score]\n'
    ),
    "parameter.yaml": (
        "my_llm:\n  backend: openai\n  base_url: http://127.0.0.1:9/v1\n  model_id: m\n  api_key: ''\n"
        "  max_retries: 2\n  max_workers: 4\ncaps:\n  max_retries: 5\n  max_workers: 8\n"
    ),
}
PARAMETERS = """\
mine:
  my_llm:
    backend: openai
    base_url: http://127.0.0.1:9/v1
    model_id: m
    api_key: ''
    max_retries: 2
    max_workers: {workers}
"""


def project(tmp_path: Path, workers: int) -> tuple[Path, Path]:
    """The server package ``tmp_path/ext/mine``, a pipeline naming it by path, and its parameter file."""
    for name, text in SERVER.items():
        (tmp_path / "ext" / "mine" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ext" / "mine" / name).write_text(text, encoding="utf-8")
    pipeline = tmp_path / "pipe.yaml"
    pipeline.write_text("servers:\n  mine: ext/mine\npipeline:\n  - mine.score\n", encoding="utf-8")
    params = tmp_path / "parameters" / "pipe_parameter.yaml"
    params.parent.mkdir()
    params.write_text(PARAMETERS.format(workers=workers), encoding="utf-8")
    return pipeline, params


def test_a_custom_servers_own_caps_hold_at_build_and_run(tmp_path: Path) -> None:
    pipeline, params = project(tmp_path, 1_000_000)
    message = (
        f"mine.my_llm: {params}:8: my_llm.max_workers 1,000,000 is more than the cap caps.max_workers = 8 of the mine "
        f"server; it multiplies the work of the call. Use a smaller value, or raise the cap in "
        f"{tmp_path / 'ext' / 'mine' / 'parameter.yaml'}"
    )
    clear_error(run_ultra("build", str(pipeline), cwd=tmp_path), message)
    assert params.read_text(encoding="utf-8") == PARAMETERS.format(workers=1_000_000)  # not rewritten
    clear_error(run_ultra("run", str(pipeline), cwd=tmp_path), message)
    assert not (tmp_path / "output").exists()  # refused before the first step


def test_a_value_equal_to_the_custom_cap_builds_and_runs(tmp_path: Path) -> None:
    pipeline, _ = project(tmp_path, 8)
    done = run_ultra("run", str(pipeline), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "scores: 1 item: 8.0000 (mine.score)" in done.stdout
