"""The everyday Shardy spellings, read without the grammar (a dump's meshes and shardings), give the
grammar's answer; a spelling the grammar refuses, or one outside that set, is left to the grammar."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.explore import examples
from support.fast_paths import answer_or_error, same_as_grammar
from shardconv.formats.sdy.read import (
    _everyday_mesh,
    _everyday_per_value,
    _everyday_sharding,
    _parse_sdy_text,
    parse_mesh,
    parse_sdy,
)

# As Shardy prints them (jax's lower().as_text() with Shardy on).
PRINTED_SHARDINGS = [
    '#sdy.sharding<@mesh, [{"batch"}, {}]>',
    '#sdy.sharding<@mesh, [{}, {"model"}]>',
    '#sdy.sharding<@mesh, [{"batch", "model"}, {}]>',
    '<@mesh, [{"batch"}, {"model"}]>',
    "#sdy.sharding<@mesh, []>",
    '<@mesh_1, [{}, {}, {"x"}]>',
]
PRINTED_MESHES = ['<["batch"=2, "model"=4]>', '#sdy.mesh<["x"=8]>', "<[]>", '<["data"=2, "fsdp"=2, "tp"=2]>']


def by_grammar(start: str, text: str) -> Any:
    return answer_or_error(lambda: _parse_sdy_text(start, text))


def assert_same_as_grammar(start: str, text: str) -> Any:
    ours = (_everyday_sharding if start == "sharding_start" else _everyday_mesh)(text)
    return same_as_grammar(ours, lambda: by_grammar(start, text), text)


@pytest.mark.parametrize("text", PRINTED_SHARDINGS)
def test_printed_shardings_are_read_as_the_grammar_reads_them(text: str) -> None:
    assert assert_same_as_grammar("sharding_start", text) is not None
    assert parse_sdy(text) == by_grammar("sharding_start", text)


@pytest.mark.parametrize("text", PRINTED_MESHES)
def test_printed_meshes_are_read_as_the_grammar_reads_them(text: str) -> None:
    assert assert_same_as_grammar("mesh_start", text) is not None
    assert parse_mesh(text) == by_grammar("mesh_start", text)


_NAME = st.sampled_from(["a", "batch", "model", "x_1", "_", "a", "b", "", "a b", "a\\22", "1x", "é", "a-b", "mesh"])
_SIZE = st.sampled_from(["1", "2", "4", "8", "0", "02", "-2", "0x4", str(2**63 - 1), str(2**63), str(10**18), str(10**19)])
_SEP = st.sampled_from([", ", ", ", ", ", ",", " , ", ",  "])


@st.composite
def near_everyday_meshes(draw: st.DrawFn) -> str:
    """Meshes inside the everyday set and just outside it: odd names, sizes (zero, signs, hex, leading
    zeros, beyond int64), duplicate names, other separators, device ids."""
    axes = draw(st.lists(st.tuples(_NAME, _SIZE), max_size=4))
    body = draw(_SEP).join(f'"{n}"={s}' for n, s in axes)
    tail = draw(st.sampled_from(["", "", "", ", device_ids=[0]", " "]))
    return draw(st.sampled_from(["", "", "#sdy.mesh", "#sdy.mesh ", "sdy.mesh @m = "])) + f"<[{body}]{tail}>"


@st.composite
def near_everyday_shardings(draw: st.DrawFn) -> str:
    """Shardings inside the everyday set and just outside it: open dims, priorities, sub-axes, replicated
    and unreduced lists, odd names and mesh symbols, other separators."""
    dims = []
    for axes in draw(st.lists(st.lists(_NAME, max_size=3), max_size=4)):
        inner = draw(_SEP).join(f'"{a}"' for a in axes)
        inner += draw(st.sampled_from(["", "", "", ", ?", "?", ':(1)2']))
        dims.append("{" + inner + "}" + draw(st.sampled_from(["", "", "", "p0", " p1", "p01"])))
    tail = draw(st.sampled_from(["", "", "", ', replicated={"z"}', ', unreduced={"z"}', " "]))
    mesh = draw(st.sampled_from(["@mesh", "@mesh", "@m1", '@"q m"', "@1m", "@", 'mesh<["x"=2]>', "@a.b"]))
    prefix = draw(st.sampled_from(["", "", "#sdy.sharding", "#sdy.sharding ", "#sdy.shard"]))
    return f"{prefix}<{mesh}{draw(_SEP)}[{draw(_SEP).join(dims)}]{tail}>"


@settings(max_examples=examples(700), suppress_health_check=list(HealthCheck))
@given(near_everyday_meshes())
def test_near_everyday_meshes_give_the_grammars_answer_or_go_to_it(text: str) -> None:
    assert_same_as_grammar("mesh_start", text)


@settings(max_examples=examples(700), suppress_health_check=list(HealthCheck))
@given(near_everyday_shardings())
def test_near_everyday_shardings_give_the_grammars_answer_or_go_to_it(text: str) -> None:
    assert_same_as_grammar("sharding_start", text)


@st.composite
def near_everyday_per_values(draw: st.DrawFn) -> str:
    """Per-value shardings of near-everyday items, with other separators and ends."""
    items = draw(st.lists(near_everyday_shardings().map(lambda t: t.removeprefix("#sdy.sharding")), max_size=4))
    end = draw(st.sampled_from(["]>", "]>", "]>", ", ]>", "] >", "]"]))
    start = draw(st.sampled_from(["#sdy.sharding_per_value<[", "#sdy.sharding_per_value< ["]))
    return start + draw(_SEP).join(items) + end


@settings(max_examples=examples(700), suppress_health_check=list(HealthCheck))
@given(near_everyday_per_values())
def test_near_everyday_per_values_give_the_grammars_answer_or_go_to_it(text: str) -> None:
    same_as_grammar(_everyday_per_value(text), lambda: by_grammar("per_value_start", text), text)
