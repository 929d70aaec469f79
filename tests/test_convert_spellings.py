"""HLO spellings (V1 explicit, V2 iota, V3 mesh-based, V3 → V2) as library converters, with XLA as the
oracle for V3 → V2."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from hlo_strategies import v3, v3_is_valid
from oracle_xla import xla_v3_to_v2
from shardconv.convert import to_hlo, to_v1, to_v2, to_v3, v3_to_v2
from shardconv.errors import NotExpressibleError, ShardingValidationError
from shardconv.model import Mesh
from shardconv.parsing import parse_hlo, parse_sdy


def test_to_v1_lists_the_iota_devices_and_leaves_explicit_alone() -> None:
    assert str(to_v1(parse_hlo("{devices=[2,2]<=[2,2]T(1,0)}"))) == "{devices=[2,2]0,2,1,3}"
    explicit = parse_hlo("{devices=[2]1,0}")
    assert to_v1(explicit) is explicit
    assert str(to_v1(parse_hlo("{{devices=[2]<=[2]}, {replicated}}"))) == "{{devices=[2]0,1}, {replicated}}"


def test_to_v2_finds_the_iota_or_says_why_not() -> None:
    assert str(to_v2(parse_hlo("{devices=[2,2]0,2,1,3}"))) == "{devices=[2,2]<=[2,2]T(1,0)}"
    with pytest.raises(NotExpressibleError, match="reshape\\+transpose of iota"):
        to_v2(parse_hlo("{devices=[4]0,3,1,2}"))


def test_to_v3_closes_dims_and_keeps_the_mesh() -> None:
    mesh = Mesh.of({"a": 2, "b": 4})
    s = parse_sdy('#sdy.sharding<@mesh, [{"a", ?}, {"b"}p1]>')
    assert str(to_v3(s, mesh)) == "{mesh['a'=2,'b'=4], [{'a'}, {'b'}]}"
    with pytest.raises(ShardingValidationError, match="manual"):
        to_v3(s, mesh, manual_axes=("a",))


def test_to_v3_spells_manual_axes_as_the_export_does() -> None:
    """V3 → V2 of the manual spelling is the manual_computation export (FORMATS §3.1 step 3)."""
    mesh = Mesh.of({"a": 2, "b": 4, "c": 2})
    s = parse_sdy('#sdy.sharding<@mesh, [{}, {"b"}]>')
    v3 = to_v3(s, mesh, manual_axes=("a", "c"))
    assert str(v3) == "{mesh['a'=2,'b'=4,'c'=2], [{}, {'b'}], manual={'a', 'c'}}"
    assert v3_to_v2(v3) == to_hlo(s, mesh, manual_axes=("a", "c"))
    with pytest.raises(NotExpressibleError, match="mesh order"):
        to_v3(s, mesh, manual_axes=("c", "a"))


def test_v3_to_v2_leaves_other_kinds_alone() -> None:
    h = parse_hlo("{devices=[2]<=[2]}")
    assert v3_to_v2(h) is h
    assert str(v3_to_v2(parse_hlo("{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced={'b'}}"))) == (
        "{devices=[2,1,4]<=[8] last_tile_dims={unreduced}}"
    )


# XLA's V3 → V2 with manual axes: manual refs (sub-axes, size 1) form the MANUAL subgroup like unreduced
# refs form theirs; a one-device mesh keeps it ({manual}, or all-ones tile dims next to unreduced).
MANUAL_V3_TO_V2 = [
    ("{mesh['a'=8], [], manual={'a':(2)2}}", "{devices=[2,4]<=[2,2,2]T(1,0,2) last_tile_dims={manual, replicated}}"),
    ("{mesh['a'=8], [{'a':(1)2}], manual={'a':(2)4}}", "{devices=[2,4]<=[8] last_tile_dims={manual}}"),
    ("{mesh['a'=8,'b'=2], [{}], manual={'a':(2)2, 'b'}}",
     "{devices=[1,4,4]<=[2,2,2,2]T(1,3,0,2) last_tile_dims={manual, replicated}}"),
    ("{mesh['a'=4,'b'=2], [], manual={'a':(2)2, 'b'}, unreduced={'a':(1)2}}",
     "{devices=[4,2]<=[2,4]T(1,0) last_tile_dims={manual, unreduced}}"),
    ("{mesh['a'=8], [{}], manual={'a':(4)2}, replicated={'a':(1)2}}",
     "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dims={manual, replicated}}"),
    ("{mesh['a'=4,'b'=2], device_ids=(7,6,5,4,3,2,1,0), [{}], manual={'a':(1)2, 'b'}}",
     "{devices=[1,4,2]5,7,4,6,1,3,0,2 last_tile_dims={manual, replicated}}"),
    ("{mesh['a'=1,'b'=2], [], manual={'a'}}", "{replicated}"),
    ("{mesh['a'=2,'b'=1], [{}, {}], manual={'b'}, unreduced={'a'}}", "{devices=[1,1,2]<=[2] last_tile_dims={unreduced}}"),
    ("{mesh['a'=1,'b'=1,'c'=1], [{'b'}], manual={'a'}}", "{manual}"),
    ("{mesh['a'=1,'b'=1], [{}, {}], manual={'a'}, unreduced={'b'}}", "{devices=[1,1]<=[1]}"),
    ("{mesh['a'=1,'b'=1], [], manual={'a'}, unreduced={'b'}}", "{devices=[]<=[1]}"),
]


@pytest.mark.parametrize(("s", "expected"), MANUAL_V3_TO_V2)
def test_v3_to_v2_manual_axes(s: str, expected: str) -> None:
    assert str(v3_to_v2(parse_hlo(s))) == expected


@pytest.mark.oracle
@pytest.mark.parametrize(("s", "expected"), MANUAL_V3_TO_V2)
def test_v3_to_v2_manual_axes_examples_are_xla(s: str, expected: str) -> None:
    assert xla_v3_to_v2(s) == expected


@pytest.mark.oracle
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(v3().filter(v3_is_valid))
def test_v3_to_v2_matches_xla(s: str) -> None:
    """Same text as XLA, or else the same tile array, devices and subgroups (compared as explicit
    lists: a mesh's device_ids=(iota) can come out of XLA as an iota and out of shardconv as a list)."""
    ours, xla = v3_to_v2(parse_hlo(s)), xla_v3_to_v2(s)
    if str(ours) != xla:
        assert str(to_v1(ours)) == str(to_v1(parse_hlo(xla))), s
