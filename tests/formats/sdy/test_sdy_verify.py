"""The verifier against Shardy's: same accept/reject and the same message, rule by rule and over
thousands of generated (mostly invalid) shardings verified in batched modules."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.oracle_sdy import sdy_mesh_error, sdy_verify_many
from support.sdy_strategies import RandomModels
from shardconv.core.errors import ShardingError, ShardingValidationError
from shardconv.core.model import Mesh, TensorSharding
from shardconv.formats.sdy.read import parse_mesh, parse_sdy
from shardconv.formats.sdy.write import print_mesh, print_sharding
from shardconv.core.mesh_invariants import verify_mesh
from shardconv.formats.sdy.verify import verify

MESH = '<["a"=2, "b"=4, "c"=8, "d"=16]>'
MESHES = [("mesh", MESH), ("mx", "<[], device_ids=[3]>"), ("e", "<[]>"), ("perm", '<["a"=2, "b"=2], device_ids=[3, 1, 2, 0]>')]
_BY_NAME = {name: replace(parse_mesh(body), name=name) for name, body in MESHES}


def ours(text: str, rank: int) -> str | None:
    try:
        verify(parse_sdy(text), _BY_NAME, rank)
        return None
    except ShardingValidationError as e:
        return e.message


RULES = [
    ('<@mesh, [{"a"}, {}]>', None),
    ('<@nomesh, [{"a"}, {}]>', "unknown mesh: @nomesh"),
    ('<@mesh, [{"q"}, {}]>', 'unknown axis name: "q"'),
    ('<@mesh, [{"a"}, {"a"}]>', 'duplicate axis ref: "a"'),
    ('<@mesh, [{"a"}, {}], replicated={"a"}>', 'duplicate axis ref: "a"'),
    ('<@mesh, [{}, {}], replicated={"a"}, unreduced={"a"}>', 'duplicate axis ref: "a"'),
    ('<@mesh, [{"a"}]>', "sharding doesn't match tensor rank: 1 != 2"),
    ('<@mesh, [{"a"}, {}p1]>', "dim 1 is empty and closed but has a priority"),
    ('<@mesh, [{"a"}, {?}p1]>', None),
    ('<@mesh, [{"c":(1)2, "c":(2)2}, {}]>', 'two consecutive sub-axes can be merged: "c":(1)2, "c":(2)2'),
    ('<@mesh, [{"c":(2)2, "c":(1)2}, {}]>', None),
    ('<@mesh, [{}, {}], replicated={"b", "a"}>', "replicated axes are not ordered w.r.t. mesh"),
    ('<@mesh, [{}, {}], unreduced={"b", "a"}>', "unreduced axes are not ordered w.r.t. mesh"),
    ('<@mesh, [{}, {}], replicated={"c":(2)2, "c":(1)2}>', "replicated axes are not ordered w.r.t. mesh"),
    ('<@mesh, [{"c":(1)2}, {"c"}]>', 'both sub-axis and full-axis are used for axis name: "c"'),
    ('<@mesh, [{"c":(0)2}, {}]>', 'sub-axis pre-size must be at least 1: "c":(0)2'),
    ('<@mesh, [{"c":(1)1}, {}]>', 'sub-axis sizes must be greater than 1: "c":(1)1'),
    ('<@mesh, [{"c":(2)8}, {}]>', "sub-axis next pre-size 16 doesn't divide the size of the full axis 8: \"c\":(2)8"),
    ('<@mesh, [{"c":(1)8}, {}]>', 'sub-axis size is equal to the full axis size: "c":(1)8'),
    ('<@mesh, [{"c":(1)4}, {"c":(2)2}]>', 'overlapping sub-axes: "c":(1)4, "c":(2)2'),
    ('<@mesh, [{"d":(1)2}, {"d":(4)2}], replicated={"d":(2)2}>', None),
    ('<@mx, []>', None),
    ('<@mx, [{?}, {?}]>', "a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes."),
    ('<@e, [{}, {}]>', None),
    ('<@perm, [{"b"}, {"a"}]>', None),
    ('<mesh<["z"=3]>, [{"z"}, {}]>', None),
    ('<mesh<["z"=3]>, [{"a"}, {}]>', 'unknown axis name: "a"'),
]


@pytest.mark.parametrize("text, message", RULES)
def test_rule_by_rule(text: str, message: str | None) -> None:
    assert ours(text, 2) == message
    assert sdy_verify_many(MESHES, [("#sdy.sharding" + text, (8, 8))]) == [message]


def test_non_divisible_dims_are_legal() -> None:
    text = '#sdy.sharding<@mesh, [{"c"}, {"b"}]>'
    assert sdy_verify_many(MESHES, [(text, (3, 5))]) == [None]
    verify(parse_sdy(text), _BY_NAME, 2)


def test_leading_zero_priority_is_a_parse_error() -> None:
    with pytest.raises(ShardingError, match="priorities with leading zeros are not allowed, got: p01"):
        parse_sdy('<@mesh, [{"a"}p01]>')


def test_manual_axes_come_first() -> None:
    s = parse_sdy('<@mesh, [{"b", "a"}, {}]>')
    verify(s, _BY_NAME, 2)
    verify(s, _BY_NAME, 2, manual_axes=("b",))
    with pytest.raises(ShardingValidationError, match='Saw manual axis "a" after free axis "b"'):
        verify(s, _BY_NAME, 2, manual_axes=("a",))
    with pytest.raises(ShardingValidationError, match='unknown axis name: "q"'):
        verify(s, _BY_NAME, 2, manual_axes=("q",))


def test_per_value_and_mesh_resolution() -> None:
    from shardconv.formats.sdy.read import parse_sdy_per_value

    v = parse_sdy_per_value('#sdy.sharding_per_value<[<@mesh, [{"a"}]>, <@mx, []>]>')
    verify(v, _BY_NAME, [1, 0])
    with pytest.raises(ShardingValidationError, match="doesn't match tensor rank: 1 != 3"):
        verify(v, _BY_NAME, 3)
    with pytest.raises(ShardingValidationError, match="unknown mesh: @mesh"):
        verify(parse_sdy('<@mesh, []>'), None)
    verify(parse_sdy('<@mesh, [{"a"}]>'), parse_mesh(MESH))  # an unnamed mesh stands for any symbol
    with pytest.raises(ShardingValidationError, match="unknown mesh: @mesh"):
        verify(parse_sdy('<@mesh, []>'), _BY_NAME["mx"])


@settings(max_examples=100)
@given(st.integers(0, 2**32))
def test_generated_shardings_verify_as_shardy_does(seed: int) -> None:
    """100 seeds x 80 shardings (about half invalid) against one random mesh, one module per seed."""
    models = RandomModels(seed, raw_bytes=False)
    mesh = models.mesh(max_axes=3)
    pool = list(mesh.axis_names) + ["q"] if mesh.axes else ["q", "a"]
    named = Mesh(axes=mesh.axes, explicit_device_ids=mesh.explicit_device_ids, name="mesh")
    cases: list[tuple[TensorSharding, int]] = []
    for _ in range(80):
        s = models.sharding("mesh", pool=pool, ref_mesh=mesh, rank=models.r.choice([1, 2, 2, 2, 3]))
        cases.append((s, 2))
    expected = sdy_verify_many([("mesh", print_mesh(mesh))], [(print_sharding(s), (8,) * r) for s, r in cases])
    for (s, r), want in zip(cases, expected):
        try:
            verify(s, named, r)
            got = None
        except ShardingValidationError as e:
            got = e.message
        assert (got is None) == (want is None), print_sharding(s)
        if _same_message_expected(s, mesh):
            assert got == want, print_sharding(s)


def _same_message_expected(s: TensorSharding, mesh: Mesh) -> bool:
    """Same verdict always; same first message unless (a) sub-axes of two or more axis names are used
    (Shardy checks them per name in LLVM hash-map order) or (b) a replicated/unreduced list holds an
    unknown axis or a sub-axis with pre-size or size below 1 (Shardy's mesh-order comparator is not
    meaningful on those, so "not ordered" may win over "unknown axis name" or the other way round)."""
    refs = [r for d in s.dims for r in d.axes] + list(s.replicated) + list(s.unreduced)
    names = {r.name for r in refs if r.sub_axis is not None}
    lists = (*s.replicated, *s.unreduced)
    odd = any(r.sub_axis is not None and min(r.sub_axis.pre_size, r.sub_axis.size) < 1 for r in lists)
    unknown = any(not mesh.has_axis(r.name) for r in lists)
    return len(names) <= 1 and not odd and not unknown


@settings(max_examples=100)
@given(st.integers(0, 2**32))
def test_generated_meshes_verify_as_shardy_does(seed: int) -> None:
    """100 seeds x 20 (mostly invalid) meshes: same verdict and message as Shardy's mesh parser."""
    models = RandomModels(seed, raw_bytes=False)
    for _ in range(20):
        mesh = models.mesh(valid=models.r.random() < 0.3)
        text = print_mesh(mesh)
        want = sdy_mesh_error(text)
        try:
            verify_mesh(mesh)
            got = None
        except ShardingValidationError as e:
            got = e.message
        assert got == want, text
        try:
            parse_mesh(text)
            parsed = None
        except ShardingError as e:
            parsed = e.message
        assert parsed == want, text
