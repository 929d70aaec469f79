"""XLA's normalisations of a tiled sharding (``HloSharding::Subgroup`` and ``::PartialTile``), applied
when one is built: beside ``core/canonical.py``'s iota forms, on the model's own types."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

from shardconv.core.canonical import group_sorted_iota
from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import HloSharding, Kind, SubgroupType, TileAssignment


def canonical_tiled(tile: TileAssignment, subgroups: Sequence[SubgroupType] = (), **kw: Any) -> HloSharding:
    """XLA's HloSharding::Subgroup: drop size-1 subgroup dims, merge repeats, order manual < unreduced <
    replicated (transposing the devices), collapse to {manual}/{replicated}/{unreduced}, sort groups."""
    subgroups = tuple(subgroups)
    dims = tile.dims
    if len(subgroups) > len(dims):
        raise ShardingValidationError(f"{len(subgroups)} last_tile_dims but only {len(dims)} tile dims")
    if not subgroups:
        return HloSharding(kind=Kind.TILED, tile=tile, **kw)
    data = len(dims) - len(subgroups)
    if len(subgroups) == 1:  # the common case: nothing to merge or reorder
        if prod(dims[:data]) == 1:
            return _all_of(subgroups[0], kw)
        if dims[-1] != 1:
            types = tuple(subgroups)
            if types[0] is SubgroupType.REPLICATED:
                return partial_tile(tile, **kw)
            if types[0] is SubgroupType.MANUAL and tile.num_devices == dims[-1]:
                return HloSharding.manual(**kw)
            return HloSharding(kind=Kind.TILED, tile=tile, subgroups=types, **kw)
    if len(set(subgroups)) == 1 and prod(dims[:data]) == 1:
        return _all_of(subgroups[0], kw)
    by_type: dict[SubgroupType, list[int]] = {}
    removed: list[int] = []
    needs_merging = False
    for i, t in enumerate(subgroups):
        if dims[data + i] == 1:
            removed.append(data + i)
            needs_merging = True
            continue
        needs_merging |= t in by_type
        by_type.setdefault(t, []).append(data + i)
    needs_merging |= len(by_type) > 1
    types = tuple(subgroups)
    if needs_merging:
        perm = list(range(data))
        shape = list(dims[:data])
        merged: list[SubgroupType] = []
        for t in sorted(by_type, key=lambda t: t.order):
            perm += by_type[t]
            shape.append(prod(dims[d] for d in by_type[t]))
            merged.append(t)
        tile = tile.transpose(tuple(perm + removed)).reshape(tuple(shape))
        types = tuple(merged)
    if types == (SubgroupType.REPLICATED,):
        return partial_tile(tile, **kw)
    if types == (SubgroupType.MANUAL,) and tile.num_devices == tile.dims[-1]:
        return HloSharding.manual(**kw)
    if types and types[-1] is SubgroupType.REPLICATED:
        sorted_groups = partial_tile(tile).tile
        assert sorted_groups is not None  # the last dim holds more than one device: partial_tile keeps a tile
        tile = sorted_groups
    return HloSharding(kind=Kind.TILED, tile=tile, subgroups=types, **kw)


def _all_of(t: SubgroupType, kw: dict[str, Any]) -> HloSharding:
    """The sharding a tile array that is one subgroup of type ``t`` collapses to."""
    return HloSharding(kind=t.flag, **kw)


def partial_tile(tile: TileAssignment, **kw: Any) -> HloSharding:
    """XLA's HloSharding::PartialTile: last tile dim replicated, each replication group sorted by id."""
    dims = tile.dims
    if len(dims) == 1 or dims[-1] == tile.num_devices:
        return HloSharding(kind=Kind.REPLICATED, **kw)
    if dims[-1] == 1:
        return HloSharding(kind=Kind.TILED, tile=tile.reshape(dims[:-1]), **kw)
    group = dims[-1]
    if tile.is_iota:
        assert tile.reshape_dims is not None and tile.perm is not None
        sorted_iota = group_sorted_iota(tile.reshape_dims, tile.perm, group)
        if sorted_iota is not None:
            new = TileAssignment(dims=dims, reshape_dims=sorted_iota[0], perm=sorted_iota[1])
            return HloSharding(kind=Kind.TILED, tile=new, subgroups=(SubgroupType.REPLICATED,), **kw)
    devs = tile.devices
    ordered: list[int] = []
    for k in range(0, len(devs), group):
        ordered += sorted(devs[k : k + group])
    new = TileAssignment(dims=dims, explicit=tuple(ordered))
    return HloSharding(kind=Kind.TILED, tile=new, subgroups=(SubgroupType.REPLICATED,), **kw)
