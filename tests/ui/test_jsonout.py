"""``jsonout.dumps`` writes what ``json.dumps(doc, indent=2, ensure_ascii=False)`` writes, byte for byte,
whatever the document holds (it indents by itself: json's pure-Python indenting encoder was the slow side
of a long trace's output)."""

from __future__ import annotations

import enum
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from support.explore import examples
from shardconv.ui import jsonout

class Level(enum.IntEnum):
    LOW = 1


class Name(enum.StrEnum):
    A = "a\u00e9\n"


SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | st.text()
           | st.sampled_from([Level.LOW, Name.A, 2**70, -0.0]))  # (subclasses json writes as their base)
KEYS = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=examples(150))
@given(st.dictionaries(st.text(), VALUES, max_size=5))
def test_a_document_is_json_s_indented_text(doc: dict[str, Any]) -> None:
    assert jsonout.dumps(doc) == json.dumps(doc, indent=2, ensure_ascii=False)


def test_what_json_cannot_write_is_the_same_error() -> None:
    for bad in ({"a": {1, 2}}, {"a": [object()]}):
        try:
            json.dumps(bad, indent=2)
        except TypeError as e:
            want = str(e)
        try:
            jsonout.dumps(bad)
        except TypeError as e:
            assert str(e) == want
        else:
            raise AssertionError(f"{bad} was written")


@settings(max_examples=examples(70))
@given(st.lists(st.dictionaries(st.text(), VALUES, max_size=4), max_size=4))
def test_a_streamed_document_is_the_document(items: list[dict[str, Any]]) -> None:
    """Its items come one by one, each indented at its depth: joined, the text ``dumps`` writes whole."""
    streamed = "".join(jsonout.dumps_streamed("check", "files", items))
    assert streamed == json.dumps(jsonout.document("check", files=items), indent=2, ensure_ascii=False)


@settings(max_examples=200)
@given(st.lists(st.lists(st.dictionaries(st.text(), VALUES, max_size=3), max_size=3), min_size=1, max_size=3),
       VALUES)
def test_a_document_of_several_streamed_lists_is_the_document(lists: list[list[dict[str, Any]]], last: Any) -> None:
    """Lists given as iterators, anywhere in the document, are written an item at a time: joined, the text
    ``dumps`` writes whole."""
    fields = {f"list{i}": items for i, items in enumerate(lists)}
    streamed = "".join(jsonout.document_pieces("check", **{k: iter(v) for k, v in fields.items()}, last=last))
    assert streamed == jsonout.dumps(jsonout.document("check", **fields, last=last))
    assert streamed == json.dumps(jsonout.document("check", **fields, last=last), indent=2, ensure_ascii=False)


@settings(max_examples=examples(150))
@given(st.dictionaries(st.text(), VALUES, min_size=1, max_size=5), st.sampled_from(["", "  ", "    "]))
def test_an_object_template_filled_with_its_values_is_the_object_s_indented_text(
    obj: dict[str, Any], pad: str
) -> None:
    """A record written through ``object_template`` (a trace's changes) is what ``indented`` writes of it,
    braces in its keys and all."""
    filled = jsonout.object_template(tuple(obj), pad).format(*(jsonout.value_text(v, pad + "  ") for v in obj.values()))
    assert jsonout.escape_surrogates(filled) == jsonout.indented(obj, pad)
