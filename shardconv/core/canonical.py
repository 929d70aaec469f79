"""The one canonicalisation routine for iota tile assignments, as XLA applies it on construction.

Works on plain tuples so the model, the converters and the parsers can all call it without cycles.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shardconv.core.model import HloSharding, SubgroupType, TileAssignment


def canonical_iota(reshape_dims: Sequence[int], perm: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """XLA's CanonicalizeIotaDims: drop size-1 dims and fold runs of consecutive source dims, until stable."""
    dims = list(reshape_dims)
    prm = list(perm)
    if len(dims) <= 1:
        return (tuple(dims) or (1,), tuple(prm) or (0,))
    while True:
        # Drop dimensions of size one and renumber the permutation.
        if any(d == 1 for d in dims):
            old_to_new: list[int] = []
            kept: list[int] = []
            for d in dims:
                old_to_new.append(len(kept) if d != 1 else -1)
                if d != 1:
                    kept.append(d)
            prm = [old_to_new[p] for p in prm if old_to_new[p] >= 0]
            dims = kept
        changed = False
        base = 0
        for i in range(1, len(dims)):
            base_dim, dim = prm[base], prm[i]
            if base_dim + (i - base) == dim:
                dims[base_dim] *= dims[dim]
                dims[dim] = 1
                changed = True
            else:
                base = i
        if not changed:
            break
    if not dims:
        return (1,), (0,)
    return tuple(dims), tuple(prm)


def transpose_iota(
    dims: Sequence[int], reshape_dims: Sequence[int], perm: Sequence[int], tperm: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """XLA's IotaTileAssignment::Transpose: the iota of the tile array transposed by ``tperm``, or None.

    Each tile dim is matched against the transposed reshape dims (splitting one when the tile dim is a
    factor of it); when neither divides the other XLA materialises the array, and so do callers here.
    """
    moved = [p for p in tperm if dims[p] != 1]
    if moved == sorted(moved):  # only size-1 dims move: a reshape, which keeps the iota as it is
        return tuple(reshape_dims), tuple(perm)
    seq = [[p, reshape_dims[p]] for p in perm]  # [source dim, size still available] major->minor
    pieces: list[tuple[int, int]] = []  # (source dim, size) in the order they are cut
    groups: list[list[int]] = [[] for _ in dims]
    j = 0
    for t, size in enumerate(dims):
        rem = size
        while rem > 1:
            while seq[j][1] == 1:
                j += 1
            src, avail = seq[j]
            if rem % avail == 0:
                take = avail
            elif avail % rem == 0:
                take = rem
            else:
                return None
            seq[j][1] = avail // take
            rem //= take
            groups[t].append(len(pieces))
            pieces.append((src, take))
    # Refined reshape dims: each source dim's pieces in cut order (major->minor), sources in order.
    order = sorted(range(len(pieces)), key=lambda k: (pieces[k][0], k))
    index = {k: i for i, k in enumerate(order)}
    new_reshape = [pieces[k][1] for k in order]
    new_perm = [index[k] for t in tperm for k in groups[t]]
    return canonical_iota(new_reshape or [1], new_perm or [0])


def group_sorted_iota(
    reshape_dims: Sequence[int], perm: Sequence[int], group: int
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """XLA's PartialTile fast path: an iota whose trailing groups of ``group`` devices are sorted, or None.

    Walks ``perm`` from the minor end taking whole reshape dims that divide what is left of the group,
    splits the first larger one, then sorts the taken tail so each group is ascending.
    """
    reshape = list(reshape_dims)
    prm = list(perm)
    if reshape[prm[-1]] == group:
        return tuple(reshape), tuple(prm)
    rem = group
    i = len(prm) - 1
    while rem > 1:
        d = prm[i]
        size = reshape[d]
        if rem % size == 0:
            rem //= size
            i -= 1
        elif size % rem == 0:
            reshape[d : d + 1] = [size // rem, rem]
            prm = [q + 1 if q > d else q for q in prm]
            prm.insert(i + 1, d + 1)
            rem = 1
        else:
            return None
    prm[i + 1 :] = sorted(prm[i + 1 :])
    return canonical_iota(reshape, prm)


def canonical_tiled(tile: "TileAssignment", subgroups: tuple["SubgroupType", ...], **kw: Any) -> "HloSharding":
    """XLA's HloSharding::Subgroup: drop size-1 subgroup dims, merge repeats, order manual < unreduced <
    replicated (transposing the devices), collapse to {manual}/{replicated}/{unreduced}, sort groups."""
    HloSharding, Kind, SubgroupType = _model.HloSharding, _model.Kind, _model.SubgroupType
    dims = tile.dims
    if len(subgroups) > len(dims):
        from shardconv.core.errors import ShardingValidationError

        raise ShardingValidationError(
            f"{len(subgroups)} subgroup types but the tile array has only {len(dims)} dims"
        )
    if not subgroups:
        return HloSharding(Kind.TILED, tile=tile, **kw)
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
            return HloSharding(Kind.TILED, tile=tile, subgroups=types, **kw)
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
        tile = partial_tile(tile).tile  # type: ignore[assignment]
    return HloSharding(Kind.TILED, tile=tile, subgroups=types, **kw)


def _all_of(t: "SubgroupType", kw: dict[str, Any]) -> "HloSharding":
    """The sharding a tile array that is one subgroup of type ``t`` collapses to."""
    return _model.HloSharding(t.flag, **kw)


def partial_tile(tile: "TileAssignment", **kw: Any) -> "HloSharding":
    """XLA's HloSharding::PartialTile: last tile dim replicated, each replication group sorted by id."""
    HloSharding, Kind, SubgroupType, TileAssignment = (
        _model.HloSharding, _model.Kind, _model.SubgroupType, _model.TileAssignment
    )
    dims = tile.dims
    if len(dims) == 1 or dims[-1] == tile.num_devices:
        return HloSharding(Kind.REPLICATED, **kw)
    if dims[-1] == 1:
        return HloSharding(Kind.TILED, tile=tile.reshape(dims[:-1]), **kw)
    group = dims[-1]
    if tile.is_iota:
        assert tile.reshape_dims is not None and tile.perm is not None
        sorted_iota = group_sorted_iota(tile.reshape_dims, tile.perm, group)
        if sorted_iota is not None:
            new = TileAssignment(dims=dims, reshape_dims=sorted_iota[0], perm=sorted_iota[1])
            return HloSharding(Kind.TILED, tile=new, subgroups=(SubgroupType.REPLICATED,), **kw)
    devs = tile.devices
    ordered: list[int] = []
    for k in range(0, len(devs), group):
        ordered += sorted(devs[k : k + group])
    new = TileAssignment(dims=dims, explicit=tuple(ordered))
    return HloSharding(Kind.TILED, tile=new, subgroups=(SubgroupType.REPLICATED,), **kw)


# Last: model imports this module at its top (a cycle); functions above look names up at call time.
from shardconv.core import model as _model  # noqa: E402
