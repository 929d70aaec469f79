"""HLO spellings (V1 explicit, V2 iota, V3 mesh-based, V3 → V2) as library converters, with XLA as the
oracle for V3 → V2."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from support.hlo_strategies import v3, v3_has_iota_ids, v3_is_valid
from support.oracle_xla import xla_sharding, xla_v3_to_v2
from shardconv.convert import to_hlo, to_v1, to_v2, to_v3, v3_to_v2
from shardconv.core.errors import NotExpressibleError, ShardingValidationError
from shardconv.core.model import Mesh
from shardconv.formats import parse_hlo, parse_sdy
from shardconv.formats.proto import to_proto_bytes


def test_to_v1_lists_the_iota_devices_and_leaves_explicit_alone() -> None:
    assert str(to_v1(parse_hlo("{devices=[2,2]<=[2,2]T(1,0)}"))) == "{devices=[2,2]0,2,1,3}"
    explicit = parse_hlo("{devices=[2]1,0}")
    assert to_v1(explicit) is explicit
    assert str(to_v1(parse_hlo("{{devices=[2]<=[2]}, {replicated}}"))) == "{{devices=[2]0,1}, {replicated}}"


def test_to_v2_finds_the_iota_or_says_why_not() -> None:
    assert str(to_v2(parse_hlo("{devices=[2,2]0,2,1,3}"))) == "{devices=[2,2]<=[2,2]T(1,0)}"
    with pytest.raises(NotExpressibleError, match="reshape\\+transpose of iota"):
        to_v2(parse_hlo("{devices=[4]0,3,1,2}"))


def test_to_v3_keeps_open_dims_drops_priorities_and_keeps_the_mesh() -> None:
    mesh = Mesh.of({"a": 2, "b": 4})
    s = parse_sdy('#sdy.sharding<@mesh, [{"a", ?}, {"b"}p1]>')
    assert str(to_v3(s, mesh)) == "{mesh['a'=2,'b'=4], [{'a', ?}, {'b'}]}"
    with pytest.raises(ShardingValidationError, match="manual"):
        to_v3(s, mesh, manual_axes=("a",))


def test_to_v3_spells_manual_axes_as_the_export_does() -> None:
    """V3 → V2 of the manual spelling is the manual_computation export (docs/formats.md §3.1 step 3)."""
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


# A mesh whose device_ids are an iota: XLA reshapes, transposes and reshapes that iota tile array, so the V2
# result stays an iota unless IotaTileAssignment::Transpose cannot split the dims (then it lists devices).
IOTA_IDS_V3_TO_V2 = [
    ("{mesh['x'=4], device_ids=([2,2]T(1,0)), [{'x'}]}", "{devices=[4]<=[2,2]T(1,0)}"),
    ("{mesh['a'=3,'b'=4,'x'=3], device_ids=([2,2,3,3]T(2,1,0,3)), [{'x', 'a'}]}",
     "{devices=[9,4]<=[4,3,3]T(2,1,0) last_tile_dim_replicate}"),
    ("{mesh['b'=3,'x'=8], device_ids=([4,2,3]T(1,2,0)), [{'x':(4)2, 'x':(1)4}, {'b'}]}",
     "{devices=[8,3]<=[2,2,3,2]T(1,3,0,2)}"),
    ("{mesh['x'=8], device_ids=([4,2]T(1,0)), [{}, {'x':(4)2}], manual={'x':(1)4}}",
     "{devices=[1,2,4]<=[2,4]T(1,0) last_tile_dims={manual}}"),
    ("{mesh['a'=8,'b'=8], device_ids=([8,2,4]T(0,2,1)), [], replicated={'b':(1)4}, manual={'a'}}",
     "{devices=[8,8]<=[64] last_tile_dims={manual, replicated}}"),
    ("{mesh['a'=3,'b'=4], device_ids=([3,2,2]T(2,1,0)), [{'b'}, {}]}",
     "{devices=[4,1,3]0,6,9,3,4,10,1,7,8,2,5,11 last_tile_dim_replicate}"),
    ("{mesh['a'=3,'b'=4], device_ids=([2,3,2]T(2,1,0)), [{'b':(1)2}]}",
     "{devices=[2,6]0,3,4,6,9,10,1,2,5,7,8,11 last_tile_dim_replicate}"),
]


@pytest.mark.parametrize(("s", "expected"), IOTA_IDS_V3_TO_V2)
def test_v3_to_v2_keeps_iota_device_ids_iota(s: str, expected: str) -> None:
    assert str(v3_to_v2(parse_hlo(s))) == expected


@pytest.mark.oracle
@pytest.mark.parametrize(("s", "expected"), IOTA_IDS_V3_TO_V2)
def test_v3_to_v2_iota_device_ids_examples_are_xla(s: str, expected: str) -> None:
    assert xla_v3_to_v2(s) == expected


def test_v3_to_v2_keeps_metadata() -> None:
    """XLA's V2 result carries the V3 metadata (only the proto shows it)."""
    h = parse_hlo("{mesh['x'=4], device_ids=([2,2]T(1,0)), [{'x'}], metadata={{op_name=\"a\"}, {}}}")
    assert v3_to_v2(h).metadata == h.metadata


def _assert_v3_to_v2_is_xla(s: str) -> None:
    """Identical canonical text and identical OpSharding bytes (metadata included) to XLA's V3 → V2."""
    ours, xla = v3_to_v2(parse_hlo(s)), xla_sharding(s).v3_to_v2_sharding()
    assert str(ours) == repr(xla), s
    assert to_proto_bytes(ours) == xla.to_proto().SerializeToString(), s


@pytest.mark.oracle
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(v3().filter(v3_is_valid))
def test_v3_to_v2_matches_xla(s: str) -> None:
    _assert_v3_to_v2_is_xla(s)


@pytest.mark.oracle
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(v3(id_kinds=("iota",)).filter(v3_has_iota_ids))
def test_v3_to_v2_matches_xla_on_iota_device_ids(s: str) -> None:
    _assert_v3_to_v2_is_xla(s)
