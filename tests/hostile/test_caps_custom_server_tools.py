"""A server outside ``servers/`` runs its tools with the caps and defaults of its own ``parameter.yaml``, the file
``ultra build`` holds it to (``tests/hostile/test_caps_custom_server.py``): called directly with ``ultra call``, in
process and over MCP stdio, so no build check stands in front. Before, a tool read only ``servers/<name>/``: a server
``mine`` could not read its own caps at all, and a copy of the shipped ``generation`` server placed elsewhere ran
within the shipped caps (``caps.max_workers`` 1024) instead of its own (8). Real server packages in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error

TOOLS = '''\
from typing import Any

from typing_extensions import TypedDict

from ultra_kit.llm_mapping import settings_for
from ultra_kit.settings import defaults


class Scores(TypedDict):
    scores: list[float]


def score({name}_llm: dict[str, Any]) -> Scores:
    """The requests in flight its LLM mapping allows, as its score."""
    return {{"scores": [float(settings_for({name}_llm, server="{name}", setting="{name}_llm").max_workers)]}}


def peek() -> Scores:
    """How many settings the judge server has."""
    return {{"scores": [float(len(defaults("judge")))]}}


TOOLS = [score, peek]
'''
SERVER = {
    "__init__.py": '"""A server outside servers/."""\n',
    "__main__.py": "from {name}.server import SPEC\n\nSPEC.main()\n",
    "server.py": (
        "from pathlib import Path\n\nfrom {name}.tools import load_tools\nfrom ultra_kit.factory import ServerSpec\n\n"
        'SPEC = ServerSpec("{name}", Path(__file__).parent, load_tools)\n'
    ),
    "tools/__init__.py": 'from ultra_kit.factory import tool_modules\n\nload_tools = tool_modules(__name__, "score")\n',
    "tools/score.py": TOOLS,
    "parameter.yaml": (
        "{name}_llm:\n  backend: openai\n  base_url: http://127.0.0.1:9/v1\n  model_id: m\n  api_key: ''\n"
        "  timeout: 5\n  max_retries: 2\n  max_workers: 4\ncaps:\n  max_retries: 5\n  max_workers: 8\n"
    ),
}
# mine: no server of that name under servers/; generation: a copy of the shipped one (caps.max_workers 1024) elsewhere
NAMES = ["mine", "generation"]
STDIO = [pytest.param(False, id="in-process"), pytest.param(True, id="stdio")]


def server(tmp_path: Path, name: str) -> Path:
    """The package ``tmp_path/ext/<name>``."""
    for file, text in SERVER.items():
        (tmp_path / "ext" / name / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ext" / name / file).write_text(text.format(name=name), encoding="utf-8")
    return tmp_path / "ext" / name


def call(tmp_path: Path, name: str, stdio: bool, *args: str):  # noqa: ANN201 - a CompletedProcess
    return run_ultra("call", f"ext/{name}.score", *args, *(["--stdio"] if stdio else []), cwd=tmp_path)


@pytest.mark.parametrize("stdio", STDIO)
@pytest.mark.parametrize("name", NAMES)
def test_a_value_over_the_servers_own_cap_is_refused_inside_its_tool(tmp_path: Path, name: str, stdio: bool) -> None:
    own = server(tmp_path, name) / "parameter.yaml"
    done = call(tmp_path, name, stdio, f"{name}_llm.max_workers=100")  # within the shipped generation's 1024
    clear_error(
        done,
        f"{name}_llm.max_workers 100 is more than the cap caps.max_workers = 8 of the {name} server; it multiplies "
        f"the work of the call. Use a smaller value, or raise the cap in {own}",
    )


@pytest.mark.parametrize("stdio", STDIO)
@pytest.mark.parametrize("name", NAMES)
def test_the_servers_own_defaults_and_caps_run(tmp_path: Path, name: str, stdio: bool) -> None:
    server(tmp_path, name)
    at_cap = call(tmp_path, name, stdio, f"{name}_llm.max_workers=8")
    assert at_cap.returncode == 0, at_cap.stderr
    assert json.loads(at_cap.stdout) == {"scores": [8.0]}
    default = call(tmp_path, name, stdio)
    assert default.returncode == 0, default.stderr
    assert json.loads(default.stdout) == {"scores": [4.0]}  # its own parameter.yaml's max_workers


@pytest.mark.parametrize("stdio", STDIO)
def test_a_tool_reads_no_other_servers_settings(tmp_path: Path, stdio: bool) -> None:
    own = server(tmp_path, "mine") / "parameter.yaml"
    done = run_ultra("call", "ext/mine.peek", *(["--stdio"] if stdio else []), cwd=tmp_path)
    clear_error(
        done,
        f"a tool of the mine server asked for the settings of the 'judge' server; a server's tools read only its "
        f"own parameter.yaml ({own})",
    )
