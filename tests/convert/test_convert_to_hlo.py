"""to_hlo against XLA's own Shardy export, byte for byte, plus the docs/formats.md §3.1 golden cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from shardconv.convert import to_hlo, to_sdy, to_sdy_manual
from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import Kind, ManualAxes, Mesh, TensorShardingPerValue
from shardconv.formats import parse_mesh, parse_sdy, parse_sdy_per_value

from support.convert_cases import batches, hlo_visible
from support.oracle_export import ExportCase, xla_export
from support.validate import validate_all

GOLDEN_31 = [
    ('<["x"=2,"y"=4,"z"=4]>', '[{"x"}, {}]', "{devices=[2,1,16]<=[32] last_tile_dim_replicate}"),
    ('<["x"=2,"y"=4,"z"=4]>', '[{}, {"y"}]', "{devices=[1,4,8]<=[2,4,4]T(1,0,2) last_tile_dim_replicate}"),
    ('<["x"=2,"y"=4,"z"=4]>', '[{"x","y"}, {"z"}]', "{devices=[8,4]<=[32]}"),
    ('<["x"=2,"y"=4,"z"=4]>', '[{}, {}], replicated={"x"}', "{replicated}"),
    (
        '<["x"=2,"y"=4,"z"=4]>',
        '[{"y"}, {}], unreduced={"x"}',
        "{devices=[4,1,2,4]<=[2,4,4]T(1,0,2) last_tile_dims={unreduced, replicated}}",
    ),
    ('<["x"=8,"y"=4]>', '[{"y"}, {"x":(2)2}]', "{devices=[4,2,4]<=[2,2,2,4]T(3,1,0,2) last_tile_dim_replicate}"),
    ('<["x"=8,"y"=4]>', '[{"x":(1)2}, {"x":(2)4}]', "{devices=[2,4,4]<=[32] last_tile_dim_replicate}"),
    ('<["x"=8,"y"=4]>', '[{"x":(1)2, "x":(4)2}, {}]', "{devices=[4,1,8]<=[2,2,2,4]T(0,2,1,3) last_tile_dim_replicate}"),
    ('<["x"=8,"y"=4]>', '[{"y", "x"}, {}]', "{devices=[32,1]<=[8,4]T(1,0)}"),
    ('<["x"=2,"y"=2], device_ids=[3,1,2,0]>', '[{"x"}, {}]', "{devices=[2,1,2]1,3,0,2 last_tile_dim_replicate}"),
    ('<["x"=2,"y"=2], device_ids=[3,1,2,0]>', '[{"y"}, {"x"}]', "{devices=[2,2]3,2,1,0}"),
    ('<["a"=1,"b"=4]>', '[{"a"}, {"b"}]', "{devices=[1,4]<=[4]}"),
    ('<["a"=2,"b"=3]>', '[{"b"}, {"a"}]', "{devices=[3,2]<=[2,3]T(1,0)}"),
    ('<["batch"=2,"model"=4]>', '[{}, {"model"}]', "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
    ('<[]>', "[{}, {}]", "{replicated}"),
    ("<[], device_ids=[3]>", "[]", "{maximal device=3}"),
]


def _case(mesh_text: str, dims: str) -> tuple[Mesh, object]:
    mesh = parse_mesh(mesh_text)
    return mesh, parse_sdy(f"#sdy.sharding<@mesh, {dims}>")


@pytest.mark.parametrize(("mesh_text", "dims", "expected"), GOLDEN_31)
def test_golden(mesh_text: str, dims: str, expected: str) -> None:
    validate_all(f"#sdy.sharding<@mesh, {dims}>", mesh=parse_mesh(mesh_text), hlo=expected)


def test_golden_agrees_with_xla() -> None:
    cases_ = [ExportCase(*_case(m, d)) for m, d, _ in GOLDEN_31]
    assert xla_export(cases_) == [e for _, _, e in GOLDEN_31]


def test_inlined_mesh_needs_no_mesh_argument() -> None:
    s = parse_sdy('#sdy.sharding<mesh<["a"=2, "b"=2]>, [{"b"}, {}]>')
    assert str(to_hlo(s)) == "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"


def test_reference_needs_the_mesh() -> None:
    s = parse_sdy('#sdy.sharding<@mesh, [{"a"}]>')
    with pytest.raises(ShardingValidationError, match="@mesh"):
        to_hlo(s)
    with pytest.raises(ShardingValidationError, match="unknown axis"):
        to_hlo(s, Mesh.of({"b": 2}))
    assert str(to_hlo(s, {"mesh": Mesh.of({"a": 2})})) == "{devices=[2]<=[2]}"


def test_per_value_gives_a_tuple() -> None:
    mesh = Mesh.of({"a": 2, "b": 4})
    pv = parse_sdy_per_value('#sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>, <@mesh, []>]>')
    assert isinstance(pv, TensorShardingPerValue)
    assert str(to_hlo(pv, mesh)) == "{{devices=[2,1,4]<=[8] last_tile_dim_replicate}, {replicated}}"


def test_explicit_v1_form() -> None:
    mesh, s = _case('<["batch"=2,"model"=4]>', '[{}, {"model"}]')
    h = to_hlo(s, mesh, explicit=True)
    assert str(h) == "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"


def test_manual_axes_add_a_manual_subgroup() -> None:
    mesh = Mesh.of({"a": 2, "b": 4})
    s = parse_sdy('#sdy.sharding<@mesh, [{}, {"b"}]>')
    h = to_hlo(s, mesh, manual_axes=("a",))
    assert str(h) == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}"
    assert to_sdy_manual(h, mesh) == (s, ManualAxes(("a",)))
    assert to_hlo(parse_sdy("#sdy.sharding<@mesh, [{}, {}]>"), mesh, manual_axes=("a", "b")).kind is Kind.MANUAL
    with pytest.raises(ShardingValidationError, match="manual"):
        to_hlo(parse_sdy('#sdy.sharding<@mesh, [{"a"}, {}]>'), mesh, manual_axes=("a",))


def test_symbolic_at_65536_devices() -> None:
    mesh = Mesh.of({"x": 16, "y": 64, "z": 64})
    s = parse_sdy('#sdy.sharding<@mesh, [{"z", "x":(2)4}, {"y":(1)8}]>')
    h = to_hlo(s, mesh)
    assert h.tile is not None and h.tile.is_iota and "devices" not in h.tile.__dict__


BATCH = 60


@settings(max_examples=80)
@given(batches(BATCH))
def test_matches_xla_export(batch: list) -> None:
    """Byte-identical to XLA's export; and to_sdy brings back what HLO carries."""
    got = [to_hlo(c.sharding, c.mesh) for c in batch]
    want = xla_export([ExportCase(c.mesh, c.sharding) for c in batch])
    for c, g, w in zip(batch, got, want):
        assert str(g) == w, (str(c.mesh), str(c.sharding))
        assert to_sdy(g, c.mesh, rank=c.sharding.rank) == hlo_visible(c.sharding, c.mesh), (str(c.mesh), str(c.sharding))
        v1 = to_hlo(c.sharding, c.mesh, explicit=True)
        if g.kind is Kind.TILED:
            assert v1.tile is not None and not v1.tile.is_iota and v1.tile.devices == g.tile.devices  # type: ignore[union-attr]
        else:
            assert v1 == g


def test_replicated_sets_with_device_ids() -> None:
    """docs/formats.md §3.3: the second replica group 0,2 is mesh positions 3,2."""
    mesh = parse_mesh('<["tp"=2, "pp"=2], device_ids=[1, 3, 2, 0]>')
    s = parse_sdy('#sdy.sharding<@mesh, [{"tp"}, {}]>')
    h = to_hlo(s, mesh)
    assert str(h) == "{devices=[2,1,2]1,3,0,2 last_tile_dim_replicate}"
    assert to_sdy(h, mesh) == s


