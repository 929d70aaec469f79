"""The model on its own: smart constructors that refuse what XLA and Shardy refuse, frozen values with
the equality their notations define, and printing (through ``core.printing``) that reads back as itself."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardconv.core.device_order import iota_order
from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import (
    AxisRef,
    DimSharding,
    HloSharding,
    Kind,
    ManualAxes,
    Mesh,
    MeshAxis,
    OpMetadata,
    PartitionSpec,
    SubAxis,
    SubgroupType,
    TensorSharding,
    TensorShardingPerValue,
    TileAssignment,
    UNCONSTRAINED,
)
from shardconv.core.normalise import canonical_tiled
from shardconv.formats.hlo.read import parse_hlo
from shardconv.formats.sdy.read import parse_mesh, parse_sdy, parse_sdy_per_value


@st.composite
def iotas(draw: st.DrawFn) -> TileAssignment:
    """An iota tile assignment: tile dims, and reshape dims with a transpose over the same devices."""
    reshape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    perm = draw(st.permutations(range(len(reshape))))
    n = int(np.prod(reshape))
    dims: list[int] = []
    left = n
    while left > 1 and len(dims) < 3:
        d = draw(st.sampled_from([f for f in range(1, left + 1) if left % f == 0]))
        dims.append(d)
        left //= d
    dims.append(left)
    return TileAssignment.iota(dims, reshape, perm)


# --- TileAssignment --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: TileAssignment.iota([]), "tile dims are empty"),
        (lambda: TileAssignment.iota([2, 0]), "tile dims [2,0] contain 0"),
        (lambda: TileAssignment.iota([4], [2, 2], [0, 0]), "iota transpose T(0,0) is not a permutation of 0..1"),
        (lambda: TileAssignment.iota([4], [2, 4]), "iota <=[2,4] has 8 devices but the tile dims [4] need 4"),
        (lambda: TileAssignment.from_devices([2, 2], [0, 1, 2]), "device list has 3 entries but the tile dims"),
        (lambda: TileAssignment.from_devices([2], [1, 1]), "device 1 appears more than once"),
        (lambda: TileAssignment.from_devices([2], [-1, 0]), "negative device id -1"),
    ],
)
def test_tile_assignments_refuse_what_xla_refuses(build: object, message: str) -> None:
    with pytest.raises(ShardingValidationError) as e:
        build()  # type: ignore[operator]
    assert message in e.value.message


@given(iotas())
def test_iota_devices_are_numpys_reshape_transpose(t: TileAssignment) -> None:
    assert t.is_iota and t.num_devices == len(t.devices)
    assert sorted(t.devices) == list(range(t.num_devices))
    assert t.reshape_dims is not None and t.perm is not None
    explicit = TileAssignment.from_devices(t.dims, list(t.devices))
    assert not explicit.is_iota and explicit.devices == t.devices
    assert explicit != t  # the model keeps the spelling: iota and explicit lists are different values


@given(iotas(), st.data())
def test_transpose_and_reshape_move_devices_as_numpy_does(t: TileAssignment, data: st.DataObject) -> None:
    perm = tuple(data.draw(st.permutations(range(len(t.dims)))))
    want = np.asarray(t.devices).reshape(t.dims).transpose(perm).ravel().tolist()
    moved = t.transpose(perm)
    assert list(moved.devices) == want and moved.dims == tuple(t.dims[p] for p in perm)
    explicit = TileAssignment.from_devices(t.dims, list(t.devices)).transpose(perm)
    assert list(explicit.devices) == want and not explicit.is_iota
    flat = t.reshape((t.num_devices,))
    assert flat.devices == t.devices and flat.is_iota
    with pytest.raises(ShardingValidationError, match="cannot reshape"):
        t.reshape((t.num_devices + 1,))


def test_tile_assignment_iota_matches_its_devices() -> None:
    t = TileAssignment.iota([2, 4], [2, 4], [1, 0])
    assert list(t.devices) == iota_order([2, 4], [1, 0])
    assert TileAssignment.from_devices([2, 4], list(t.devices)).devices == t.devices


# --- HloSharding -----------------------------------------------------------------------------------


def test_hlo_sharding_constructors_and_queries() -> None:
    assert HloSharding.replicated().kind is Kind.REPLICATED and HloSharding.replicated().rank is None
    assert HloSharding.maximal(3).device == 3
    with pytest.raises(ShardingValidationError, match="maximal device id -1 is negative"):
        HloSharding.maximal(-1)
    tiled = canonical_tiled(TileAssignment.iota([2, 2, 2]), [SubgroupType.REPLICATED])
    assert tiled.is_tiled and tiled.rank == 2 and tiled.tile_counts == (2, 2) and tiled.replicate_on_last_tile_dim
    t = HloSharding.tuple_of([tiled, HloSharding.manual()])
    assert t.is_tuple and t.elements == (tiled, HloSharding.manual()) and t.rank is None


def test_hlo_equality_ignores_metadata_as_xlas_does() -> None:
    meta = (OpMetadata((("op_name", "a"), ("source_line", 3))),)
    plain = HloSharding.maximal(1)
    tagged = plain.with_metadata(meta)
    assert tagged == plain and hash(tagged) == hash(plain) and tagged.metadata == meta
    assert meta[0].get("source_line") == 3 and meta[0].get("missing") is None
    assert tagged.to_text() == "{maximal device=1}"
    assert tagged.to_text(include_metadata=True) == '{maximal device=1 metadata={op_name="a" source_line=3}}'


@pytest.mark.parametrize(
    "value",
    [
        HloSharding.replicated(),
        TileAssignment.iota([2]),
        Mesh.of({"a": 2}),
        MeshAxis("a", 2),
        AxisRef("a", SubAxis(1, 2)),
        DimSharding(),
        TensorSharding(mesh="mesh"),
        PartitionSpec(("a",)),
    ],
)
def test_values_are_frozen(value: object) -> None:
    field = dataclasses.fields(value)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, None)
    hash(value)


# --- Mesh ------------------------------------------------------------------------------------------


def test_mesh_equality_ignores_name_and_axis_types() -> None:
    a = Mesh.of({"x": 2, "y": 4}, name="m")
    b = Mesh(axes=(MeshAxis("x", 2), MeshAxis("y", 4)), axis_types=("Explicit", "Auto"))
    assert a == b and hash(a) == hash(b) and a.symbol == "m" and b.symbol == "mesh"
    assert a != Mesh.of({"x": 4, "y": 2}) and a != Mesh.of({"x": 2, "z": 4})
    assert a != Mesh.of({"x": 2, "y": 4}, [1, 0, 2, 3, 4, 5, 6, 7])


def test_mesh_of_drops_iota_device_ids_and_keeps_others() -> None:
    m = Mesh.of({"a": 2, "b": 2}, [0, 1, 2, 3])
    assert m.explicit_device_ids is None and m.device_ids == (0, 1, 2, 3)
    m = Mesh.of([("a", 2), ("b", 2)], [3, 1, 2, 0], name="m")
    assert m.explicit_device_ids == (3, 1, 2, 0) and m.name == "m"
    assert m.axes == (MeshAxis("a", 2), MeshAxis("b", 2)) and m.num_devices == 4


def test_mesh_queries() -> None:
    m = Mesh.of([("x", 2), ("y", 3)], [5, 4, 3, 2, 1, 0])
    assert m.axis_names == ("x", "y") and m.axis_sizes == (2, 3) and m.num_devices == 6
    assert m.axis_size("y") == 3 and m.has_axis("x") and not m.has_axis("z")
    assert m.device_ids == (5, 4, 3, 2, 1, 0) and m._position_of[0] == 5
    assert m.shape_str() == "x=2,y=3" and m.sizes_text() == "2x3"
    assert Mesh.of({"x": 2}).device_ids == (0, 1)
    empty, single = Mesh(), Mesh.of([], [7])
    assert empty.is_empty and not empty.is_maximal and empty.sizes_text() == "empty"
    assert single.is_maximal and single.num_devices == 1 and single.device_ids == (7,)


# --- printing round trips --------------------------------------------------------------------------


@given(iotas(), st.data())
def test_tiled_shardings_print_and_read_back(t: TileAssignment, data: st.DataObject) -> None:
    n_sub = data.draw(st.integers(0, len(t.dims)))
    subgroups = data.draw(st.lists(st.sampled_from(list(SubgroupType)), min_size=n_sub, max_size=n_sub))
    for tile in (t, TileAssignment.from_devices(t.dims, list(t.devices))):
        h = canonical_tiled(tile, subgroups)
        if h.tile is not None and h.tile.num_devices == 1 and not h.tile.is_iota:  # as XLA's parser refuses it
            with pytest.raises(ShardingValidationError, match="needs more than one device"):
                parse_hlo(str(h))
        elif h.tile is not None and len(set(h.subgroups)) == 1 and all(c == 1 for c in h.tile_counts):
            # XLA prints a lone subgroup left after merging as a tile array and reads it back as the flag
            assert parse_hlo(str(h)) == HloSharding(kind=h.subgroups[0].flag), str(h)
        else:
            assert parse_hlo(str(h)) == h, str(h)


@pytest.mark.parametrize(
    "value",
    [
        HloSharding.replicated(),
        HloSharding.manual(),
        HloSharding.unknown(),
        HloSharding.unreduced(),
        HloSharding.maximal(5),
        HloSharding.tuple_of([HloSharding.maximal(0), HloSharding.replicated()]),
        HloSharding(kind=Kind.TILED, tile=TileAssignment.from_devices([2, 2], [3, 1, 2, 0])),
    ],
)
def test_hlo_flags_print_and_read_back(value: HloSharding) -> None:
    assert parse_hlo(str(value)) == value


def test_shardy_values_print_and_read_back() -> None:
    mesh = Mesh.of({"x": 2, "y": 4}, [0, 2, 4, 6, 1, 3, 5, 7])
    assert str(mesh) == '<["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>' and parse_mesh(str(mesh)) == mesh
    s = TensorSharding(
        mesh="mesh",
        dims=(DimSharding((AxisRef("x"),), is_closed=False), DimSharding((AxisRef("y", SubAxis(2, 2)),), priority=1)),
        replicated=(AxisRef("y", SubAxis(1, 2)),),
    )
    text = '#sdy.sharding<@mesh, [{"x", ?}, {"y":(2)2}p1], replicated={"y":(1)2}>'
    assert str(s) == text and parse_sdy(text) == s
    assert s.to_text(attribute=False) == text.removeprefix("#sdy.sharding")
    inline = TensorSharding(mesh=mesh, dims=(DimSharding((AxisRef("x"),)),))
    assert parse_sdy(str(inline)) == inline and inline.resolve_mesh() is mesh
    per = TensorShardingPerValue((s, TensorSharding(mesh="mesh", dims=(DimSharding(),))))
    assert parse_sdy_per_value(str(per)) == per
    assert str(ManualAxes(("x", "y"))) == 'manual_axes={"x", "y"}'
    assert str(AxisRef("y", SubAxis(1, 2))) == '"y":(1)2'


def test_a_sharding_by_name_needs_its_mesh() -> None:
    mesh = Mesh.of({"x": 2})
    s = TensorSharding(mesh="m")
    assert s.mesh_name == "m" and s.resolve_mesh(mesh) is mesh and s.rank == 0
    with pytest.raises(ShardingValidationError, match="unknown mesh: @m"):
        s.resolve_mesh()


def test_partition_specs_print_as_jax_writes_them() -> None:
    assert str(PartitionSpec((None, ("d", "b"), "c"))) == "P(None, ('d', 'b'), 'c')"
    assert str(PartitionSpec(("a", UNCONSTRAINED), unreduced=("x",))) == "P('a', P.UNCONSTRAINED, unreduced={'x'})"


def test_printers_are_looked_up_by_type_and_loaded_on_first_use() -> None:
    """``core.printing`` is the model's one bridge to the formats: a type with no printer says so."""
    from shardconv.core import printing

    class Unprinted:
        pass

    with pytest.raises(LookupError, match="no text printer for Unprinted"):
        printing.render_text(Unprinted())
    assert printing.render_html(Unprinted()) is None  # no picture: Jupyter shows the text
    loaded: list[str] = []

    class Late:
        pass

    def loader() -> None:
        loaded.append("ran")
        printing.printer(Late)(lambda obj, **kw: "late!")

    printing.load_printers_with(loader, forms=("text",))
    assert loaded == []  # nothing runs until a printer is missing
    assert printing.render_text(Late()) == "late!" and loaded == ["ran"]
    assert printing.render_text(Late()) == "late!" and loaded == ["ran"]  # once
