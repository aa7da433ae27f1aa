"""The fast paths of reading a reply agree with the slow definitions: the bracket depth outside strings (a loop
over every character), and a one-field JMESPath read with dict.get (jmespath's own interpreter)."""

from __future__ import annotations

import json

import jmespath
from hypothesis import given
from hypothesis import strategies as st

from servers.target.kinds.replies import FieldFirst, _depth_of_text

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
