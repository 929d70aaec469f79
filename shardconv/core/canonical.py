"""XLA's canonical forms of iota tile assignments (canonicalise, transpose, sort groups), on plain tuples.

Below the model: ``core.model`` builds its TileAssignment and HloSharding normalisations on these."""

from __future__ import annotations

from collections.abc import Sequence


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
