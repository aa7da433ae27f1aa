"""serving's depth rules: the SDK parser's limit found by trying it, nesting depth, and which refused lines are
requests answered with their id."""

from __future__ import annotations

import json

import mcp_types
import pytest

from ultra_kit.serving import (
    INVALID_REQUEST,
    PARSE_ERROR,
    _classify,
    _too_deep_request,
    parser_depth_limit,
    top_level_members,
)


def refusal(line: str) -> Exception:
    """The exception the SDK's stdio transport hands on for ``line``."""
    with pytest.raises(Exception) as caught:  # noqa: PT011 - whatever the SDK raises is what serving sees
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    return caught.value


def wrapped(depth: int) -> str:
    """A tools/list request whose params hold a value so that the whole message is ``depth`` levels deep."""
    inner = "[" * (depth - 2) + "0" + "]" * (depth - 2)
    return '{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"x": ' + inner + "}}"


def test_top_level_members_and_depth_match_the_json_module() -> None:
    good = {
        "{}": ({}, 1),
        '{"a": 1}': ({"a": "1"}, 1),
        ' {"x":-0.5e3 , "y":null, "z": "\\u00e9\\n" } \n': ({"x": "-0.5e3", "y": "null", "z": '"\\u00e9\\n"'}, 1),
        '{"id": 3, "method": "x", "params": [[[]]]}': ({"id": "3", "method": '"x"', "params": None}, 4),
        '{"a": [1, {"b": []}], "c": {"id": 2}, "id": "q"}': ({"a": None, "c": None, "id": '"q"'}, 4),
        '{"a\\"b": {}}': ({'a"b': None}, 2),
    }
    for text, expected in good.items():
        assert isinstance(json.loads(text), dict)
        assert top_level_members(text) == expected, text
    not_objects = ["[1, 2]", "1", '"s"', "[]"]  # JSON, but no message
    not_json = ['{"a": 1', '{"a": 1}x', '{"a": [1,]}', '{"a" 1}', "{,}", '{"a": [}', '{"a": {]}', '{"a": 01}']
    not_json += ['{"a": "x\ty"}', '{"a": NaN}', '{"a": [1] ]}', '{"a": 1,}']  # a raw tab; NaN is not strict JSON
    for text in not_objects + not_json:
        assert top_level_members(text) is None, text


def test_any_depth_is_read_without_recursion() -> None:
    for levels in (1_004, 100_000):
        line = '{"id": 5, "method": "tools/call", "params": ' + '[{"a": ' * levels + "1" + "}]" * levels + "}"
        assert top_level_members(line) == ({"id": "5", "method": '"tools/call"', "params": None}, 2 * levels + 1)
        assert top_level_members(line[:-2] + "}") is None  # one bracket short


def test_the_limit_is_the_sdk_parser_s_own() -> None:
    limit = parser_depth_limit()
    assert limit == 200  # pydantic-core's JSON parser today; found by trying it, so it follows the SDK
    mcp_types.jsonrpc_message_adapter.validate_json(wrapped(limit), by_name=False)  # the limit itself is read
    assert _classify(refusal(wrapped(limit + 1)))[0] == PARSE_ERROR


def test_only_a_too_deep_request_is_recovered() -> None:
    assert _too_deep_request(refusal(wrapped(201))) == (3, 201)
    assert _too_deep_request(refusal(wrapped(900).replace('"id": 3', '"id": "abc"'))) == ("abc", 900)
    notification = wrapped(300).replace('"id": 3, ', "")
    assert _too_deep_request(refusal(notification)) == (None, 0)  # no id: nothing to answer to
    assert _too_deep_request(refusal(wrapped(300).replace('"id": 3', '"id": true'))) == (None, 0)
    assert _too_deep_request(refusal(wrapped(300).replace('"id": 3', '"id": null'))) == (None, 0)
    assert _too_deep_request(refusal(wrapped(1_004))) == (3, 1_004)  # too deep for the json module as well
    assert _too_deep_request(refusal(wrapped(100_000))) == (3, 100_000)
    assert _too_deep_request(refusal(wrapped(100_000)[:-1])) == (None, 0)  # cut short: not JSON
    assert _too_deep_request(refusal("not json")) == (None, 0)
    assert _too_deep_request(refusal('{"jsonrpc": "2.0", "id": 1, "method": "x", "params": NaN}')) == (None, 0)
    assert _classify(refusal('{"jsonrpc": "2.0", "id": 7}'))[0] == INVALID_REQUEST
