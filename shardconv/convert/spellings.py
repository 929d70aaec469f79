"""The HLO spellings of one sharding: V1 explicit device list, V2 iota, V3 mesh-based, and V3 → V2.

Model → model (text is taken too, as by every public entry point); the CLI's ``--to v1/v2/v3`` and
every HLO input that arrives as V3 call these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise

from shardconv.convert.reduction import with_hlo_reduction
from shardconv.convert.to_hlo import _check_manual, export_layout, to_hlo
from shardconv.convert.to_sdy import to_sdy, to_sdy_manual
from shardconv.core.arguments import type_error
from shardconv.core.errors import NotExpressibleError
from shardconv.core.model import (
    AxisRef,
    DimSharding,
    HloSharding,
    Kind,
    Mesh,
    MeshAxis,
    MeshSharding,
    SubgroupType,
    TensorSharding,
    TileAssignment,
)
from shardconv.core.normalise import canonical_tiled
from shardconv.formats.coerce import HloArg, MeshLike, SdyArg, as_hlo, as_mesh, as_sdy
from shardconv.formats.sdy.verify import verify_on


def to_v1(hlo: HloArg) -> HloSharding:
    """The same sharding with an explicit device list (V1); tuples element-wise, V3 through ``v3_to_v2``."""
    hlo = as_hlo(hlo, "to_v1", "hlo")
    if hlo.kind is Kind.TUPLE:
        return HloSharding.tuple_of([to_v1(e) for e in hlo.elements])
    if hlo.kind is Kind.MESH:
        return to_v1(v3_to_v2(hlo))
    if hlo.tile is None or not hlo.tile.is_iota:
        return hlo
    return replace(hlo, tile=TileAssignment.from_devices(hlo.tile.dims, hlo.tile.devices))


def to_v2(hlo: HloArg) -> HloSharding:
    """The same sharding as an iota (V2): found by reading the device order on a one-axis mesh,
    which succeeds exactly when the order is a reshape+transpose of iota."""
    hlo = as_hlo(hlo, "to_v2", "hlo")
    if hlo.kind is Kind.TUPLE:
        return HloSharding.tuple_of([to_v2(e) for e in hlo.elements])
    if hlo.kind is Kind.MESH:
        return to_v2(v3_to_v2(hlo))
    if hlo.tile is None or hlo.tile.is_iota:
        return hlo
    line = Mesh.of([("d", hlo.tile.num_devices)])
    try:
        out = to_hlo(to_sdy(hlo, line), line)
    except NotExpressibleError:
        out = None
    if (
        out is None
        or out.tile is None
        or (out.tile.dims, out.tile.devices, out.subgroups) != (hlo.tile.dims, hlo.tile.devices, hlo.subgroups)
    ):
        raise NotExpressibleError("the explicit device order is not a reshape+transpose of iota")
    return out


def to_v3(sharding: SdyArg, mesh: MeshLike, *, manual_axes: Sequence[str] = ()) -> HloSharding:
    """HLO V3 (mesh-based) spelling: Shardy's structure in XLA's syntax, on ``mesh`` itself. Open dims
    stay open (``{'a', ?}``, as XLA's NamedSharding keeps them); priorities go, as XLA has none.

    ``manual_axes`` (of an enclosing manual_computation) become ``manual={...}``, which XLA needs in mesh order."""
    given, mesh = as_sdy(sharding, "to_v3"), as_mesh(mesh, "to_v3")
    if not isinstance(given, TensorSharding):
        if isinstance(sharding, str):  # text of another kind of value: a wrong value, not a wrong argument
            raise NotExpressibleError(f"{given} holds several values: HLO V3 spells one, so convert each")
        raise type_error("to_v3", "sharding", "a TensorSharding or its text (one value)", given)
    sharding = given
    verify_on(sharding, mesh)
    _check_manual(sharding, mesh, manual_axes)
    order = {n: i for i, n in enumerate(mesh.axis_names)}
    if list(manual_axes) != sorted(manual_axes, key=order.__getitem__):
        raise NotExpressibleError(
            f"HLO V3 lists manual axes in mesh order, and manual_axes={tuple(manual_axes)} is not: "
            "the manual subgroup would enumerate the devices in another order"
        )
    dims = tuple(replace(d, priority=None) for d in sharding.dims)
    manual = tuple(AxisRef(n) for n in manual_axes)
    return HloSharding(
        kind=Kind.MESH,
        mesh_sharding=MeshSharding(
            mesh=mesh, dims=dims, replicated=sharding.replicated, unreduced=sharding.unreduced, manual=manual,
            unreduced_op=sharding.unreduced_op,
        ),
    )


def v3_to_v2(hlo: HloArg) -> HloSharding:
    """A V3 (mesh-based) sharding as the tile-array sharding XLA derives from it, metadata kept as XLA
    keeps it (the proto must match too); tuples element-wise; others unchanged."""
    hlo = as_hlo(hlo, "v3_to_v2", "hlo")
    if hlo.kind is Kind.TUPLE:
        return replace(hlo, elements=tuple(map(v3_to_v2, hlo.elements)))
    if hlo.kind is not Kind.MESH or hlo.mesh_sharding is None:
        return hlo
    ms = hlo.mesh_sharding
    if ms.manual:
        out = _manual_v3_to_v2(ms)
    else:
        sharding, manual = to_sdy_manual(hlo, ms.mesh)
        assert isinstance(sharding, TensorSharding)  # a V3 sharding is one tensor's, never a tuple's
        out = _export(sharding, ms.mesh, manual.axes, ms.device_iota)
    out = replace(out, metadata=hlo.metadata) if hlo.metadata else out
    return with_hlo_reduction(out, ms.unreduced_op)  # XLA head's V2 spelling of the reduction


def _export(
    sharding: TensorSharding,
    mesh: Mesh,
    manual_axes: Sequence[str],
    device_iota: tuple[tuple[int, ...], tuple[int, ...]] | None,
) -> HloSharding:
    """``to_hlo``, except that ids written as an iota stay one: XLA reshapes, transposes and reshapes the
    mesh's iota tile array (TileAssignment ops keep iota where they can) instead of listing the ids."""
    out = to_hlo(sharding, mesh, manual_axes=manual_axes)
    if device_iota is None or out.tile is None:
        return out
    layout = export_layout(sharding, mesh, manual_axes)
    ids = TileAssignment.iota(mesh.axis_sizes, *device_iota)
    tile = ids.reshape(layout.reshape_dims).transpose(layout.perm).reshape(layout.tile_dims or (1,))
    return canonical_tiled(tile, layout.subgroups)


def _manual_v3_to_v2(ms: MeshSharding) -> HloSharding:
    """XLA's V3 → V2 with manual axes: the manual refs (sub-axes too, size 1 too) form the MANUAL subgroup
    just as unreduced refs form theirs (docs/formats.md §3.1 steps 3-4), so sub-axes become whole axes first."""
    mesh = ms.mesh
    if mesh.num_devices == 1:
        # Unlike to_hlo's one-device shortcut, XLA keeps the subgroups: {manual}, or all-ones tile dims when
        # unreduced is there too ({devices=[]<=[1]} at rank 0).
        types = (SubgroupType.MANUAL,) + ((SubgroupType.UNREDUCED,) if ms.unreduced else ())
        return canonical_tiled(TileAssignment.iota((1,) * (len(ms.dims) + len(types)), (1,), (0,)), types)
    split, pieces = _split_mesh(mesh, [r for d in ms.dims for r in d.axes] + list(ms.unreduced) + list(ms.manual))

    def whole(refs: Sequence[AxisRef]) -> tuple[AxisRef, ...]:
        return tuple(AxisRef(n) for r in refs for n in pieces[r])

    dims = tuple(DimSharding(whole(d.axes)) for d in ms.dims)
    sharding = TensorSharding(mesh=split, dims=dims, unreduced=whole(ms.unreduced), unreduced_op=ms.unreduced_op)
    return _export(sharding, split, tuple(r.name for r in whole(ms.manual)), ms.device_iota)


def _split_mesh(mesh: Mesh, refs: Sequence[AxisRef]) -> tuple[Mesh, dict[AxisRef, tuple[str, ...]]]:
    """``mesh`` with each axis cut at the sub-axis boundaries in ``refs`` into whole axes (same device
    order), and the new axis names each ref covers, major to minor."""
    cuts: dict[str, set[int]] = {a.name: {1, a.size} for a in mesh.axes}
    for r in refs:
        if r.sub_axis is not None:
            cuts[r.name] |= {r.sub_axis.pre_size, r.sub_axis.pre_size * r.sub_axis.size}
    taken = set(mesh.axis_names)
    axes: list[MeshAxis] = []
    spans: dict[str, list[tuple[int, str]]] = {}
    for a in mesh.axes:
        points = sorted(cuts[a.name])
        if len(points) <= 2:
            axes.append(a)
            spans[a.name] = [(1, a.name)]
            continue
        for lo, hi in pairwise(points):
            name = f"{a.name}:({lo}){hi // lo}"
            while name in taken:
                name += "'"
            taken.add(name)
            axes.append(MeshAxis(name, hi // lo))
            spans.setdefault(a.name, []).append((lo, name))
    pieces: dict[AxisRef, tuple[str, ...]] = {}
    for r in refs:
        sub = r.sub_axis
        pieces[r] = tuple(n for at, n in spans[r.name] if sub is None or sub.pre_size <= at < sub.pre_size * sub.size)
    return Mesh.of(tuple(axes), mesh.explicit_device_ids), pieces
