"""sdy -> HLO exactly as XLA's Shardy export does it (docs/formats.md §3.1), symbolic for iota meshes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from shardconv.convert.reduction import with_hlo_reduction
from shardconv.core.arguments import type_error
from shardconv.core.device_order import transposed_indices
from shardconv.core.errors import ShardingValidationError, did_you_mean
from shardconv.core.model import (
    AxisRef,
    HloSharding,
    Kind,
    Mesh,
    SubgroupType,
    TensorSharding,
    TensorShardingPerValue,
    TileAssignment,
)
from shardconv.core.normalise import canonical_tiled
from shardconv.core.records import record
from shardconv.core.sources import pointing_into
from shardconv.formats.coerce import SdyArg, as_mesh_arg, as_sdy
from shardconv.formats.sdy.verify import verify_on

MeshArg = Mesh | Mapping[str, Mesh] | None


@record
class ExportLayout:
    """Tile dims, iota reshape dims/perm over the mesh pieces, and subgroup types of an export."""

    tile_dims: tuple[int, ...]
    reshape_dims: tuple[int, ...]
    perm: tuple[int, ...]
    subgroups: tuple[SubgroupType, ...]


def resolve(sharding: TensorSharding, mesh: MeshArg) -> Mesh:
    """The mesh a sharding lives on: inlined, the mesh passed in, or looked up by name in a mapping."""
    if type(mesh) is Mesh and type(sharding.mesh) is str and mesh.name in (None, sharding.mesh):
        return mesh  # the common case, decided without the ABC checks below
    if isinstance(sharding.mesh, Mesh):
        return sharding.mesh
    if isinstance(mesh, Mapping):
        if sharding.mesh not in mesh:
            raise ShardingValidationError(
                f"unknown mesh: @{sharding.mesh}", suggestions=did_you_mean(sharding.mesh, mesh.keys(), spelled="@{}")
            )
        return mesh[sharding.mesh]
    if mesh is not None and mesh.name is not None and mesh.name != sharding.mesh:
        raise ShardingValidationError(f"sharding refers to @{sharding.mesh} but the mesh given is @{mesh.name}")
    return sharding.resolve_mesh(mesh)


def _check_manual(sharding: TensorSharding, mesh: Mesh, manual_axes: Sequence[str]) -> None:
    """``manual_axes`` name distinct mesh axes that the (verified) sharding itself does not use."""
    seen: set[str] = set()
    refs = [r for d in sharding.dims for r in d.axes] + list(sharding.unreduced) + list(sharding.replicated)
    for name in manual_axes:
        if not mesh.has_axis(name):
            raise ShardingValidationError(f"unknown manual axis: {name!r}")
        if name in seen:
            raise ShardingValidationError(f"manual axis {name!r} given twice")
        seen.add(name)
    for ref in refs:
        if ref.name in seen:
            raise ShardingValidationError(f"axis {ref.name!r} is manual and cannot also shard the value")


def export_layout(sharding: TensorSharding, mesh: Mesh, manual_axes: Sequence[str] = ()) -> ExportLayout:
    """XLA's convertToHloSharding up to building the tile assignment (mesh must have axes)."""
    return ExportLayout(*_layout(sharding, mesh, manual_axes))


PieceKey = str | tuple[str, int, int]  # a whole axis by name, a sub-axis as (name, pre_size, size)


def _key(ref: AxisRef) -> PieceKey:
    sub = ref.sub_axis
    return ref.name if sub is None else (ref.name, sub.pre_size, sub.size)


def _layout(
    sharding: TensorSharding, mesh: Mesh, manual_axes: Sequence[str]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[SubgroupType, ...]]:
    """``export_layout`` as a plain tuple (tile dims, reshape dims, perm, subgroups).

    Each used axis or sub-axis takes the next position; the mesh pieces (axes cut at sub-axis
    boundaries) are permuted to those positions, the unused ones trailing as the replicated subgroup.
    """
    size = mesh._size_by_name
    tile_dims = [1] * sharding.rank
    pos: dict[PieceKey, int] = {}
    whole_axes = True
    for i, dim in enumerate(sharding.dims):
        for ref in dim.axes:
            if ref.sub_axis is None:
                tile_dims[i] *= size[ref.name]
                pos[ref.name] = len(pos)
            else:
                whole_axes = False
                tile_dims[i] *= ref.sub_axis.size
                pos[_key(ref)] = len(pos)
    if whole_axes and all(r.sub_axis is None for r in sharding.unreduced):
        pieces: list[tuple[PieceKey, int]] = list(zip(mesh.axis_names, mesh.axis_sizes))
    else:
        pieces = _ordered_pieces(sharding, mesh)
    types: list[SubgroupType] = []
    subgroup_refs = (
        (SubgroupType.MANUAL, [AxisRef(n) for n in manual_axes]), (SubgroupType.UNREDUCED, sharding.unreduced)
    )
    for kind, group in subgroup_refs:
        if group:
            types.append(kind)
            tile_dims.append(1)
            for ref in group:
                tile_dims[-1] *= size[ref.name] if ref.sub_axis is None else ref.sub_axis.size
                pos[_key(ref)] = len(pos)
    perm = [0] * len(pieces)
    nxt = len(pos)
    replicated = 1
    for idx, (key, piece_size) in enumerate(pieces):
        at = pos.get(key)
        if at is None:
            perm[nxt] = idx
            nxt += 1
            replicated *= piece_size
        else:
            perm[at] = idx
    if replicated > 1:
        tile_dims.append(replicated)
        types.append(SubgroupType.REPLICATED)
    if nxt != len(pieces):
        raise ShardingValidationError("axis refs overlap or repeat (the sharding is not valid on its mesh)")
    return tuple(tile_dims), tuple(sz for _, sz in pieces), tuple(perm), tuple(types)


def _ordered_pieces(sharding: TensorSharding, mesh: Mesh) -> list[tuple[PieceKey, int]]:
    """Every mesh axis split at the sub-axis boundaries used by dims and unreduced axes, in mesh order."""
    cuts: dict[str, set[int]] = {a.name: {1, a.size} for a in mesh.axes}
    for ref in [r for d in sharding.dims for r in d.axes] + list(sharding.unreduced):
        if ref.sub_axis is not None:
            pre, size, whole = ref.sub_axis.pre_size, ref.sub_axis.size, mesh.axis_size(ref.name)
            if pre < 1 or size < 1 or whole % (pre * size):
                raise ShardingValidationError(f"sub-axis {ref.name}:({pre}){size} does not fit axis size {whole}")
            cuts[ref.name].update((pre, pre * size))
    out: list[tuple[PieceKey, int]] = []
    for axis in mesh.axes:
        points = sorted(cuts[axis.name])
        if len(points) == 1:  # a size-1 axis: one empty piece, dropped again by iota canonicalisation
            out.append((axis.name, 1))
            continue
        for lo, hi in pairwise(points):
            size = hi // lo
            out.append((axis.name if size == axis.size else (axis.name, lo, size), size))
    return out


def _to_hlo_one(sharding: TensorSharding, mesh: MeshArg, manual_axes: Sequence[str], explicit: bool) -> HloSharding:
    """The export, carrying a reduction other than sum as XLA head does (in the metadata)."""
    return with_hlo_reduction(_export_one(sharding, mesh, manual_axes, explicit), sharding.unreduced_op)


def _export_one(sharding: TensorSharding, mesh: MeshArg, manual_axes: Sequence[str], explicit: bool) -> HloSharding:
    m = resolve(sharding, mesh)
    verify_on(sharding, m)
    if not m.axes:
        if m.explicit_device_ids:
            return HloSharding.maximal(m.explicit_device_ids[0])
        return HloSharding.replicated()
    if manual_axes:
        _check_manual(sharding, m, manual_axes)
        if len(manual_axes) == len(m.axes):
            return HloSharding.manual()
    if m.num_devices == 1:  # XLA: a one-device tile is {unreduced} / {replicated} (rank 0: no sharding)
        return HloSharding.unreduced() if sharding.unreduced else HloSharding.replicated()
    tile_dims, reshape_dims, perm, subgroups = _layout(sharding, m, manual_axes)
    ids = m.explicit_device_ids
    if ids is None and not explicit:
        return canonical_tiled(TileAssignment.iota(_nonempty(tile_dims), reshape_dims, perm), subgroups)
    # An explicit list. The verified mesh ids are a permutation of 0..n-1 and the reshape and tile dims
    # both multiply to n, so the tile array needs none of from_devices' checks.
    order = transposed_indices(reshape_dims, perm)
    devices = order if ids is None else list(map(ids.__getitem__, order))
    dims = _nonempty(tile_dims)
    if not subgroups:
        return HloSharding(kind=Kind.TILED, tile=TileAssignment(dims, explicit=tuple(devices)))
    if subgroups == _REPLICATED and dims[-1] < len(devices):
        # canonical_tiled's partial_tile, without building the unsorted array first: sort each group.
        g = dims[-1]
        grouped: list[int] = []
        for k in range(0, len(devices), g):
            grouped += sorted(devices[k : k + g])
        return HloSharding(kind=Kind.TILED, tile=TileAssignment(dims, explicit=tuple(grouped)), subgroups=subgroups)
    return canonical_tiled(TileAssignment(dims, explicit=tuple(devices)), subgroups)


_REPLICATED = (SubgroupType.REPLICATED,)


def _nonempty(dims: tuple[int, ...]) -> tuple[int, ...]:
    # A rank-0 value on a mesh whose axes are all size 1 has no tile dims; XLA treats it as one tile.
    return dims or (1,)


def to_hlo(
    sharding: SdyArg,
    mesh: MeshArg | str = None,
    *,
    manual_axes: Sequence[str] = (),
    explicit: bool = False,
) -> HloSharding:
    """The HLO sharding XLA exports for ``sharding`` (a model or its text; a ``@name`` resolves against ``mesh``).

    ``manual_axes`` are those of the enclosing ``sdy.manual_computation``; ``explicit=True`` gives the
    V1 explicit device list (torch-xla's V1 path) even on an iota mesh. Invalid input raises Shardy's
    verifier message with the mesh appended (``verify.verify_on``), pointing into the text it was parsed from.
    """
    s = as_sdy(sharding, "to_hlo")
    m = as_mesh_arg(mesh, "to_hlo")
    if isinstance(manual_axes, str):
        raise type_error("to_hlo", "manual_axes", "a sequence of axis names", manual_axes)
    with pointing_into(s):
        if isinstance(s, TensorShardingPerValue):
            return HloSharding.tuple_of([_to_hlo_one(e, m, tuple(manual_axes), explicit) for e in s.shardings])
        return _to_hlo_one(s, m, tuple(manual_axes), explicit)
