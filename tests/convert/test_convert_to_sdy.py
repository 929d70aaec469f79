"""to_sdy on the user's global mesh: docs/formats.md §3.3 golden cases, the seed scenario, permuted device
lists (right answer or NotExpressibleError, never a wrong one), checked against XLA's export."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.convert import to_hlo, to_sdy, to_sdy_manual
from shardconv.core.placement import same_assignment
from shardconv.convert.suggest import mesh_for, whole_axis_alternative
from shardconv.core.errors import NotExpressibleError, ShardingValidationError
from shardconv.core.model import (
    DimSharding,
    HloSharding,
    ManualAxes,
    Mesh,
    MeshSharding,
    SubgroupType,
    TensorSharding,
    TensorShardingPerValue,
    TileAssignment,
)
from shardconv.core.normalise import canonical_tiled
from shardconv.formats import parse_hlo, parse_mesh, parse_sdy
from shardconv.formats.sdy.verify import verify

from support.convert_cases import meshes, shardings_on
from support.oracle_export import ExportCase, xla_export

SEED_MESH = parse_mesh('<["batch"=2, "model"=4]>')


def sdy(text: str) -> TensorSharding:
    s = parse_sdy(text)
    assert isinstance(s, TensorSharding)
    return s


def test_seed_scenario() -> None:
    h = parse_hlo("{devices=[1,4,2]<=[8] last_tile_dim_replicate}")
    got = to_sdy(h, SEED_MESH)
    assert got == sdy('#sdy.sharding<@mesh, [{}, {"batch", "model":(1)2}]>')
    assert str(to_hlo(sdy('#sdy.sharding<@mesh, [{}, {"model"}]>'), SEED_MESH)) == (
        "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    )
    alt = whole_axis_alternative(h, SEED_MESH)
    assert alt == sdy('#sdy.sharding<@mesh, [{}, {"model"}]>')


def test_replicated_group_is_a_set() -> None:
    mesh = parse_mesh('<["tp"=2, "pp"=2], device_ids=[1, 3, 2, 0]>')
    h = parse_hlo("{devices=[2,1,2]1,3,0,2 last_tile_dim_replicate}")
    assert to_sdy(h, mesh) == sdy('#sdy.sharding<@mesh, [{"tp"}, {}]>')
    # The same groups written in the other order inside a group are the same sharding.
    h2 = HloSharding(kind=h.kind, tile=TileAssignment.from_devices((2, 1, 2), (3, 1, 2, 0)), subgroups=h.subgroups)
    assert to_sdy(h2, mesh) == sdy('#sdy.sharding<@mesh, [{"tp"}, {}]>')


def test_not_expressible_explains_and_suggests() -> None:
    h = parse_hlo("{devices=[2,4]0,1,2,3,5,4,6,7}")
    with pytest.raises(NotExpressibleError) as info:
        to_sdy(h, SEED_MESH)
    err = info.value
    msg = str(err)
    assert "tile [1, 1]" in msg and "holds devices {4}" in msg
    assert err.suggestions[0].value == '<@mesh, [{"batch"}, {"model"}]>  =  {devices=[2,4]<=[8]}'
    new = parse_mesh(err.suggestions[1].value)
    assert new.explicit_device_ids == (0, 1, 2, 3, 5, 4, 6, 7)
    assert same_assignment(to_hlo(sdy('#sdy.sharding<@mesh, [{"batch"}, {"model"}]>'), new), h)


def test_order_break_is_located() -> None:
    h = parse_hlo("{devices=[2,3]<=[2,3]T(1,0)}")
    with pytest.raises(NotExpressibleError, match=r"along tile dim 1 the mesh positions go 0, 3, 1"):
        to_sdy(h, parse_mesh('<["a"=2, "b"=3]>'))


def test_no_whole_axis_alternative_offers_a_per_dim_mesh() -> None:
    h = parse_hlo("{devices=[3,2]0,3,1,4,2,5}")
    mesh = parse_mesh('<["a"=6]>')
    got = to_sdy(h, mesh)
    assert got == sdy('#sdy.sharding<@mesh, [{"a":(2)3}, {"a":(1)2}]>')
    with pytest.raises(NotExpressibleError) as info:
        to_sdy(parse_hlo("{devices=[3,2]0,2,4,1,3,5}"), mesh)
    assert "one axis per tile dim" in info.value.suggestions[0].description


def test_kinds() -> None:
    m = SEED_MESH
    assert to_sdy(parse_hlo("{replicated}"), m, rank=2) == sdy("#sdy.sharding<@mesh, [{}, {}]>")
    assert to_sdy(parse_hlo("{unknown}"), m, rank=2) == sdy("#sdy.sharding<@mesh, [{?}, {?}]>")
    assert to_sdy(parse_hlo("{unreduced}"), m, rank=1) == sdy('#sdy.sharding<@mesh, [{}], unreduced={"batch", "model"}>')
    assert to_sdy_manual(parse_hlo("{manual}"), m, rank=1) == (sdy("#sdy.sharding<@mesh, [{}]>"), ManualAxes(("batch", "model")))
    with pytest.raises(NotExpressibleError, match="to_sdy_manual"):
        to_sdy(parse_hlo("{manual}"), m, rank=1)
    with pytest.raises(ShardingValidationError, match="rank"):
        to_sdy(parse_hlo("{replicated}"), m)
    mx = to_sdy(parse_hlo("{maximal device=4}"), m)
    assert isinstance(mx, TensorSharding) and mx.dims == () and isinstance(mx.mesh, Mesh)
    assert mx.mesh.name == "maximal_mesh_4" and str(to_hlo(mx)) == "{maximal device=4}"
    tup = to_sdy(HloSharding.tuple_of([parse_hlo("{devices=[2,4]<=[8]}"), parse_hlo("{maximal device=1}")]), m)
    assert isinstance(tup, TensorShardingPerValue) and tup.shardings[0] == sdy('#sdy.sharding<@mesh, [{"batch"}, {"model"}]>')
    unred = parse_hlo("{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dims={unreduced}}")
    assert to_sdy(unred, m) == sdy('#sdy.sharding<@mesh, [{"model"}, {}], unreduced={"batch"}>')


def test_v3_converts_through_its_own_mesh() -> None:
    own = Mesh.of({"a": 2, "b": 4})
    v3 = HloSharding(kind=HloSharding.replicated().kind.__class__("mesh"), mesh_sharding=MeshSharding(mesh=own, dims=(DimSharding(), DimSharding((parse_sdy('#sdy.sharding<@m, [{"b"}]>').dims[0].axes)))))
    assert to_sdy(v3, SEED_MESH) == sdy('#sdy.sharding<@mesh, [{}, {"model"}]>')
    assert to_sdy(v3, own) == sdy('#sdy.sharding<@mesh, [{}, {"b"}]>')


def test_rank_mismatch() -> None:
    with pytest.raises(ShardingValidationError, match="rank"):
        to_sdy(parse_hlo("{devices=[2,4]<=[8]}"), SEED_MESH, rank=3)
    with pytest.raises(NotExpressibleError, match="16 devices"):
        to_sdy(parse_hlo("{devices=[4,4]<=[16]}"), SEED_MESH)


def test_symbolic_at_65536_devices() -> None:
    mesh = Mesh.of({"x": 16, "y": 64, "z": 64})
    s = sdy('#sdy.sharding<@mesh, [{"z", "x":(2)4}, {"y":(1)8}]>')
    h = to_hlo(s, mesh)
    assert to_sdy(h, mesh) == s
    assert h.tile is not None and "devices" not in h.tile.__dict__  # never materialised


def _tile_shapes(n: int) -> st.SearchStrategy[tuple[tuple[int, ...], bool]]:
    divs = [d for d in range(1, n + 1) if n % d == 0]

    @st.composite
    def shape(draw: st.DrawFn) -> tuple[tuple[int, ...], bool]:
        dims: list[int] = []
        left = n
        for _ in range(draw(st.integers(1, 3))):
            d = draw(st.sampled_from([x for x in divs if left % x == 0]))
            dims.append(d)
            left //= d
        dims.append(left)
        return tuple(dims), draw(st.booleans()) and left > 1

    return shape()


@settings(max_examples=150)
@given(st.data())
def test_permuted_device_lists(data: st.DataObject) -> None:
    """A random device list either converts and re-exports to the same device array, or is refused."""
    mesh = data.draw(meshes(max_devices=24))
    n = mesh.num_devices
    dims, rep = data.draw(_tile_shapes(n))
    if not rep:
        dims = dims[:-1] + (dims[-1],)
    devices = data.draw(st.permutations(range(n)))
    if len(dims) == 1 and dims[0] == 1:
        return
    h = canonical_tiled(TileAssignment.from_devices(dims, devices), (SubgroupType.REPLICATED,) if rep else ())
    if not h.is_tiled:
        return
    try:
        got = to_sdy(h, mesh)
    except NotExpressibleError as e:
        assert e.message
        return
    assert isinstance(got, TensorSharding)
    verify(got, mesh)
    assert same_assignment(to_hlo(got, mesh), h)


@settings(max_examples=60)
@given(st.data())
def test_structured_orders_across_meshes(data: st.DataObject) -> None:
    """Export on one mesh, import on another of the same size; successes must re-export identically,
    per XLA's own exporter too."""
    src = data.draw(meshes(max_devices=32))
    n = src.num_devices
    dst = data.draw(meshes(max_devices=32).filter(lambda m: m.num_devices == n))
    hs = [to_hlo(data.draw(shardings_on(src, unreduced=False, replicated=False)), src) for _ in range(20)]
    done = []
    for h in hs:
        if not h.is_tiled:
            continue
        try:
            got = to_sdy(h, dst)
        except NotExpressibleError:
            continue
        assert isinstance(got, TensorSharding)
        verify(got, dst)
        done.append((h, got))
    want = xla_export([ExportCase(dst, g) for _, g in done])
    for (h, g), w in zip(done, want):
        assert w is not None and same_assignment(parse_hlo(w), h), (str(h), str(g), str(dst), w)


def test_mesh_for_makes_a_whole_axis_sharding_exact() -> None:
    h = parse_hlo("{devices=[1,4,2]<=[8] last_tile_dim_replicate}")
    alt = sdy('#sdy.sharding<@mesh, [{}, {"model"}]>')
    new = mesh_for(h, alt, SEED_MESH)
    assert new.explicit_device_ids == (0, 2, 4, 6, 1, 3, 5, 7)
    assert to_sdy(h, new) == alt


def test_rank0_tile_of_one_subgroup_type_is_that_flag() -> None:
    """Found by the coverage fuzzer: XLA's non-fixed-point rank-0 print must convert, not hit the
    internal re-export check."""
    from shardconv.formats import parse_hlo, parse_mesh

    mesh = parse_mesh("batch=2,model=4")
    for text, flag in [("{devices=[8,1,1,1]<=[2,4]T(0,1) last_tile_dims={unreduced, manual, manual, manual}}", "unreduced"),
                       ("{devices=[8]<=[8] last_tile_dims={unreduced}}", "unreduced")]:
        s = to_sdy(parse_hlo(text), mesh, rank=0)
        assert str(s) == '#sdy.sharding<@mesh, [], unreduced={"batch", "model"}>'
        assert str(to_hlo(s, mesh)) == "{" + flag + "}"


def test_single_tile_of_one_subgroup_type_is_that_flag() -> None:
    from shardconv.formats import parse_hlo, parse_mesh

    mesh = parse_mesh("a=2")
    s = to_sdy(parse_hlo("{devices=[1,2,1]<=[2] last_tile_dims={unreduced, manual}}"), mesh)
    assert str(s) == '#sdy.sharding<@mesh, [{}], unreduced={"a"}>'
    assert str(to_hlo(s, mesh)) == "{unreduced}"


# XLA's sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir (mixed_tuple_sharding_placeholder): beside V3
# elements, a V1/V2 {replicated} is a placeholder (every dim open) and a single-device element keeps its own mesh.
@pytest.mark.parametrize(
    ("element", "want"),
    [
        ("{replicated}", "<@mesh, [{?}, {?}]>"),
        ("{maximal device=5}", "<mesh<[], device_ids=[5]>, []>"),
        ("{maximal_mesh[device_id=5]}", "<mesh<[], device_ids=[5]>, []>"),
        ("{single_device[device_id=5]}", "<mesh<[], device_ids=[5]>, []>"),
    ],
)
def test_placeholders_beside_v3_tuple_elements(element: str, want: str) -> None:
    got = to_sdy("{{mesh['a'=2,'b'=2], [{'a'}, {}]}, " + element + "}", rank=[2, 2])
    assert str(got) == '#sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>, ' + want + "]>"


def test_open_v3_dims_stay_open_on_another_mesh() -> None:
    """frontend_attr_not_sharding in the same file: the mesh is deduplicated, the ``?`` kept."""
    got = to_sdy("{mesh['a'=1,'b'=4,'c'=1], [{'b'},{?}]}", '<["a"=2, "b"=2]>')
    assert str(got) == '#sdy.sharding<@mesh, [{"a", "b"}, {?}]>'
