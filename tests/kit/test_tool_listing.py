"""Every tool of every built-in server as an MCP client sees it over stdio: its annotations state
readOnlyHint and destructiveHint, and every LLM mapping setting carries the one generated description."""

from __future__ import annotations

import functools
import re
import sys
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from tests.conftest import ROOT
from tests.support.together import at_once
from ultra_kit.inprocess import load_spec
from ultra_kit.llm_mapping import llm_mapping_description
from ultra_llm.settings import LLM_KEYS, POOL_ENTRY_KEYS

SERVERS = sorted(path.parent.name for path in (ROOT / "servers").glob("*/parameter.yaml"))


def llm_settings(server: str) -> list[str]:
    """The server's settings that are LLM mappings: a mapping with a backend and only keys the LLM settings accept."""
    defaults = yaml.safe_load((ROOT / "servers" / server / "parameter.yaml").read_text(encoding="utf-8")) or {}
    return [
        name
        for name, value in defaults.items()
        if isinstance(value, dict) and "backend" in value and set(value) <= LLM_KEYS
    ]


LLM_SERVERS = [server for server in SERVERS if llm_settings(server)]


def listed(server: str) -> dict[str, Any]:
    """The server's tools as ``python -m servers.<server>`` lists them to a real stdio client, by name."""
    got = listings()[server]
    if isinstance(got, Exception):  # that server's own failure, in its own test
        raise got
    return got


@functools.cache
def listings() -> dict[str, dict[str, Any] | Exception]:
    """Every built-in server's listing (or what its listing raised), the servers started at once (each its own
    client, in a thread of its own), once for the module: the tests only read them."""

    def listing_or_error(server: str) -> dict[str, Any] | Exception:
        try:
            return listing(server)
        except Exception as exc:  # noqa: BLE001 - raised again by listed(server)
            return exc

    return at_once({server: functools.partial(listing_or_error, server) for server in SERVERS})


def listing(server: str) -> dict[str, Any]:
    async def list_tools() -> dict[str, Any]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", f"servers.{server}"], cwd=str(ROOT), env={"PYTHONPATH": str(ROOT)}
        )
        async with Client(params) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    return anyio.run(list_tools)


def declared_hints(server: str) -> dict[str, dict[str, bool]]:
    """Each tool's hints as its ``tool_hints`` decorator records them."""
    spec = load_spec(f"servers.{server}", ROOT)
    assert spec is not None, f"servers.{server} has no SPEC"
    return {fn.__name__: fn.__tool_hints__ for fn in spec.load_tools()}


@pytest.mark.parametrize("server", SERVERS)
def test_every_tool_states_read_only_and_destructive(server: str) -> None:
    tools, hints = listed(server), declared_hints(server)
    assert sorted(tools) == sorted(hints)
    for name, tool in tools.items():
        stated = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
        assert {"readOnlyHint", "destructiveHint"} <= stated.keys(), f"{server}.{name} states {stated}"
        assert stated["readOnlyHint"] is hints[name]["read_only"], f"{server}.{name}"
        assert stated["destructiveHint"] is hints[name]["destructive"], f"{server}.{name}"
        assert not (stated["readOnlyHint"] and stated["destructiveHint"]), f"{server}.{name}"


def test_a_tool_that_replaces_files_it_did_not_create_says_so() -> None:
    """generate_queries writes fixed names into the dataset_dir it is given; evaluate_trec reserves new files."""
    assert listed("synth")["generate_queries"].annotations.destructive_hint is True
    assert listed("evaluation")["evaluate_trec"].annotations.destructive_hint is False
    assert listed("retriever")["retriever_index"].annotations.destructive_hint is False  # replaces only its own index


def test_the_llm_mapping_description_names_every_key_the_settings_accept() -> None:
    description = llm_mapping_description()
    words = set(re.findall(r"[a-z_]+", description))
    missing = sorted((LLM_KEYS | set(POOL_ENTRY_KEYS)) - words)
    assert not missing, f"the description leaves out {missing}"


@pytest.mark.parametrize(
    "server",
    LLM_SERVERS,
)
def test_every_llm_mapping_setting_publishes_the_generated_description(server: str) -> None:
    settings = llm_settings(server)
    published = [
        (name, tool.input_schema["properties"][name].get("description"))
        for tool in listed(server).values()
        for name in settings
        if name in tool.input_schema.get("properties", {})
    ]
    assert published, f"no tool of {server} takes {settings}"
    for name, description in published:
        assert description == llm_mapping_description(), f"{server}: {name}"


def test_the_servers_that_take_an_llm_are_found() -> None:
    assert {"evaluation", "generation", "judge", "synth"} <= set(LLM_SERVERS)
