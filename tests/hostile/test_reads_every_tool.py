"""Every path a tool reads is confined: each built-in tool, given a path outside the read roots for each of its
path settings in turn, refuses the call naming that path, and never returns the planted canary.

The path settings are found by name in the tools' schemas (``*path``, ``*_paths``, ``*_dir``, ``*_dirs``,
``*_files``, mappings of names to paths, and the ``path`` of a mapping setting), so a new one is covered
without an edit here.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from ultra_base.errors import InputError
from ultra_client.calls.locate import builtin_servers, locate_named_server
from ultra_kit.inprocess import ToolFailure, call_local_tool, input_schema, load_spec, local_tools

PATH_NAME = re.compile(r"(path|_paths|_dir|_dirs|_files)$")  # the answer caches: test_an_answer_cache_...
# settings a tool writes to, confined to output/ by ultra_kit.files (tests/hostile/test_files_results.py)
WRITES = {"save_path", "out_dir", "index_path", "table_path"}
WRITES_OF = {"generate_queries": {"dataset_dir"}}  # where it writes its query set; risk_* read it


PLACEHOLDERS = {"string": "x", "object": {}, "integer": 1, "number": 1.0, "boolean": False}


def placeholder(schema: dict[str, Any]) -> Any:
    """A value of ``schema``'s type: "x", ["x"], [["x"]] ..."""
    schema = next((s for s in schema.get("anyOf", []) if s.get("type") != "null"), schema)
    if schema.get("type") == "array":
        return [placeholder(schema.get("items", {}))]
    return PLACEHOLDERS.get(schema.get("type"), "x")


def placeholders(schema: dict[str, Any]) -> dict[str, Any]:
    """A value for each required argument (the questions, answers ... a pipeline would pass)."""
    properties = schema.get("properties", {})
    return {name: placeholder(properties[name]) for name in schema.get("required", [])}


def path_settings() -> list[tuple[str, str, str, bool]]:
    """(server, tool, setting, takes a list) of every path a built-in tool reads; ``a.path`` for a mapping's."""
    found = []
    for server in builtin_servers():
        location = locate_named_server(server)
        spec = load_spec(location.module, location.root)
        for name, tool in local_tools(spec).items():
            for setting, schema in input_schema(tool).get("properties", {}).items():
                default = schema.get("default")
                if isinstance(default, dict) and "path" in default:
                    found.append((server, name, f"{setting}.path", False))
                elif PATH_NAME.search(setting) and setting not in WRITES | WRITES_OF.get(name, set()):
                    found.append((server, name, setting, isinstance(placeholder(schema), list)))
    return found


SETTINGS = path_settings()


def test_the_scan_finds_the_known_input_paths() -> None:
    names = {f"{tool}.{setting}" for _, tool, setting, _ in SETTINGS}
    expected = {"get_data.benchmark.path", "evaluate_trec.run_path", "select_qrels.qrels_path"}
    expected |= {"umbrela_judge.corpus_path", "report.result_paths", "qa_boxed.template_dirs", "risk_route.dataset_dir"}
    assert expected <= names, sorted(names)


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """The working directory is a project under tmp_path; a folder beside it holds a canary in every shape."""
    monkeypatch.delenv("ULTRA_READ_ROOTS", raising=False)
    monkeypatch.delenv("ULTRA_ALLOW_OUTSIDE_READS", raising=False)
    monkeypatch.delenv("ULTRA_HOME", raising=False)
    project, folder = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    folder.mkdir()
    monkeypatch.chdir(project)
    secret = f"sk-CANARY-{uuid.uuid4().hex}"
    for name in ("canary.txt", "queries.jsonl", "corpus.jsonl", "run.trec", "qrels.trec", "result.json", "x.jinja"):
        (folder / name).write_text(f"OPENAI_API_KEY={secret}\n", encoding="utf-8")
    return folder, secret


@pytest.mark.parametrize(("server", "tool", "setting", "is_list"), SETTINGS, ids=lambda v: str(v))
def test_each_tool_refuses_a_path_outside_the_read_roots(
    server: str, tool: str, setting: str, is_list: bool, outside: tuple[Path, str]
) -> None:
    folder, secret = outside
    target = folder if setting.endswith(("_dir", "_dirs")) else folder / "canary.txt"
    value: Any = [str(target)] if is_list else str(target)
    name, _, key = setting.partition(".")
    location = locate_named_server(server)
    local = local_tools(load_spec(location.module, location.root))[tool]
    if not key and placeholder(input_schema(local)["properties"][name]) == {}:  # {name: path}, e.g. judged_files
        value = {"system": str(target)}
    arguments = {**placeholders(input_schema(local)), name: {key: value} if key else value}

    async def call() -> None:
        with anyio.fail_after(60):
            await call_local_tool(local, arguments, abandon_on_cancel=True)

    with pytest.raises(ToolFailure) as caught:
        anyio.run(call)
    message = str(caught.value)
    assert f"resolves to {target}" in message and "outside the folders tools may read" in message, message
    assert "ULTRA_READ_ROOTS" in message and "ULTRA_ALLOW_OUTSIDE_READS=1" in message
    assert secret not in message


def test_an_answer_cache_outside_the_read_roots_is_not_opened(outside: tuple[Path, str]) -> None:
    from ultra_base.errors import confined_reads
    from ultra_llm.cache import open_cache

    folder, _ = outside
    with confined_reads(), pytest.raises(InputError, match="the answer cache file resolves to .*outside the folders"):
        open_cache(folder / "cache.sqlite")
    assert not (folder / "cache.sqlite").exists()
    with confined_reads():
        open_cache("output/cache.sqlite").close()  # inside the project: opened
