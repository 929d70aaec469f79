"""The one canonicalisation routine for iota tile assignments, as XLA applies it on construction.

Works on plain tuples so the model, the converters and the parsers can all call it without cycles.
"""

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
