"""The writer's hooks (``ultra_base.write_hooks``): a library's check runs on every atomic write once registered,
notes belong to one tool call, and the kit follows estimate mode without loading ``ultra_llm``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ultra_base import write_hooks
from ultra_base.environment import ESTIMATE_ENV
from ultra_base.errors import InputError
from ultra_kit.files import atomic_write_text

ROOT = Path(__file__).resolve().parents[2]


def test_a_registered_check_runs_on_every_write_and_may_refuse(tmp_path: Path, monkeypatch) -> None:
    seen: list[Path] = []

    def refuse_secrets(path: Path) -> None:
        seen.append(path)
        if path.name == "secret.txt":
            raise InputError("not this one", path=str(path))

    monkeypatch.setattr(write_hooks, "_checks", [])
    atomic_write_text(tmp_path / "before.txt", "x")  # nothing registered yet
    assert write_hooks.on_write(refuse_secrets) is refuse_secrets
    write_hooks.on_write(refuse_secrets)  # a second registration changes nothing
    atomic_write_text(tmp_path / "fine.txt", "x")
    with pytest.raises(InputError, match="not this one"):
        atomic_write_text(tmp_path / "secret.txt", "x")
    assert seen == [tmp_path / "fine.txt", tmp_path / "secret.txt"]
    assert not (tmp_path / "secret.txt").exists()


def test_notes_belong_to_one_tool_call() -> None:
    write_hooks.note("standin")  # outside a call: not counted anywhere
    assert write_hooks.noted("standin") == 0
    with write_hooks.tool_call():
        write_hooks.note("standin")
        write_hooks.note("standin")
        with write_hooks.tool_call():  # a call inside a call counts its own
            write_hooks.note("standin")
            assert write_hooks.noted("standin") == 1
        assert write_hooks.noted("standin") == 2
    assert write_hooks.noted("standin") == 0


def test_the_kit_follows_estimate_mode_without_loading_the_llm_library(tmp_path: Path) -> None:
    """In a fresh process: results go to the scratch folder, and nothing imported ``ultra_llm``."""
    code = (
        "import json, sys\n"
        "from ultra_kit.files import result_path\n"
        f"path = result_path({str(tmp_path / 'save')!r}, 'tool', '.json')\n"
        "print(json.dumps([str(path), sorted(m for m in sys.modules if m.startswith('ultra_llm'))]))\n"
    )
    env = {ESTIMATE_ENV: str(tmp_path / "scratch" / "requests.jsonl"), "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={"PATH": "", "PYTHONPATH": str(ROOT), **env},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    path, loaded = json.loads(done.stdout)
    assert Path(path).parent == (tmp_path / "scratch" / "results").resolve()
    assert loaded == []
    assert not (tmp_path / "save").exists()
