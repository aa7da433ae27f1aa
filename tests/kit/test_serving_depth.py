"""serving's depth rules: the SDK parser's limit found by trying it, nesting depth, and which refused lines are
requests answered with their id."""

from __future__ import annotations

import mcp_types
import pytest

from ultra_kit.serving import (
    INVALID_REQUEST,
    PARSE_ERROR,
    _classify,
    _too_deep_request,
    nesting_depth,
    parser_depth_limit,
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


def test_nesting_depth_counts_objects_and_arrays() -> None:
    assert [nesting_depth(v) for v in (1, "s", [], {}, [1], {"a": [[]]}, [{"a": 1}, [[[2]]]])] == [0, 0, 1, 1, 1, 3, 4]
    deep: list = []
    for _ in range(4999):
        deep = [deep]
    assert nesting_depth(deep) == 5000  # walked without recursion


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
    assert _too_deep_request(refusal(wrapped(100_000))) == (None, 0)  # too deep for the json module as well
    assert _too_deep_request(refusal("not json")) == (None, 0)
    assert _too_deep_request(refusal('{"jsonrpc": "2.0", "id": 1, "method": "x", "params": NaN}')) == (None, 0)
    assert _classify(refusal('{"jsonrpc": "2.0", "id": 7}'))[0] == INVALID_REQUEST
