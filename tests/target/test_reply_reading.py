"""The fast paths of reading a reply agree with the slow definitions: the bracket depth outside strings (a loop
over every character), a one-field JMESPath read with dict.get (jmespath's own interpreter), and orjson's
reading and writing with the standard library's."""

from __future__ import annotations

import json

import jmespath
from hypothesis import given
from hypothesis import strategies as st

from servers.target import fastjson
from servers.target.kinds.base import TargetCallError
from servers.target.kinds.replies import FieldFirst, _depth_of_text, load_json

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:'),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet='[]{}"\\ab'), inner, max_size=4),
    max_leaves=30,
)


def depth_by_characters(text: str) -> int:
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


@given(JSON)
def test_the_depth_of_any_json_text_is_the_character_loops(document: object) -> None:
    text = json.dumps(document)
    assert _depth_of_text(text) == depth_by_characters(text) == _depth_of_text(text.encode())


@given(JSON, st.sampled_from(["answer", "text", "a.b", "contexts[0]", "@", "items[*].id"]))
def test_a_field_path_reads_as_jmespath_does(document: object, expression: str) -> None:
    compiled = jmespath.compile(expression)
    for value in (document, {"answer": document, "text": [document], "a": {"b": document}}):
        assert FieldFirst(compiled).search(value) == compiled.search(value)


SCALARS = (
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80) | st.floats(allow_nan=True)
    | st.text(max_size=8)
)  # fmt: skip
DOCUMENTS = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30,
)  # fmt: skip


def same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN, and of the same types (an int is not its float)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)  # type: ignore[union-attr,index]
    return a == b


@given(DOCUMENTS, st.integers(min_value=0, max_value=6))
def test_a_reply_reads_as_json_loads_reads_it_and_its_depth_is_the_text_s(document: object, limit: int) -> None:
    """orjson where it agrees with json, json where it does not (NaN, integers past 64 bits): the same values,
    and the same depth verdict as the bracket count of the text."""
    text = json.dumps(document)
    deep = _depth_of_text(text) > limit
    try:
        read = load_json(text.encode(), max_bytes=10**7, max_depth=limit)
    except TargetCallError as exc:
        assert deep and "max_json_depth" in exc.detail
        return
    assert not deep and same(read, json.loads(text))


def test_a_reply_orjson_refuses_is_read_by_json_and_deep_text_is_refused_before():
    read = load_json(b'{"answer": NaN, "id": 1}', max_bytes=100, max_depth=4)
    assert read["answer"] != read["answer"] and read["id"] == 1  # NaN, as json reads it
    read = load_json(b'{"answer": "a", "id": 123456789012345678901234567890}', max_bytes=100, max_depth=4)
    assert read == {"answer": "a", "id": 123456789012345678901234567890} and isinstance(read["id"], int)
    for deep in (b"[" * 2000 + b"]" * 2000, b"[" * 2000):  # past orjson's own limit; valid and cut
        try:
            load_json(deep, max_bytes=10**6, max_depth=64)
        except TargetCallError as exc:
            assert "max_json_depth 64" in exc.detail
        else:
            raise AssertionError("a deep reply was read")


def test_a_record_is_written_as_json_would_read_it_back():
    record = {"id": "q1", "answer": "é\u2028\x00", "big": 2**70, "score": 0.1, "contexts": [{"text": "t"}]}
    assert json.loads(fastjson.dumps(record)) == record
    assert json.loads(fastjson.dumps({1: "a"})) == {"1": "a"}  # a key orjson refuses: json's way
