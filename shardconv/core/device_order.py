"""The one device-order routine: row-major reshape + transpose of a flat device list.

Every place that turns (reshape dims, permutation) into a concrete device order calls ``transposed``
or ``iota_order`` here, so iota materialisation, explicit-list transposes and mesh device_ids agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod


def strides(dims: Sequence[int]) -> list[int]:
    """Row-major strides of an array with shape ``dims``."""
    out = [1] * len(dims)
    acc = 1
    for i in range(len(dims) - 1, -1, -1):
        out[i] = acc
        acc *= dims[i]
    return out


def unravel(flat: int, dims: Sequence[int]) -> tuple[int, ...]:
    """Row-major coordinates of position ``flat`` in an array with shape ``dims``."""
    out = []
    for d in reversed(dims):
        flat, r = divmod(flat, d)
        out.append(r)
    return tuple(reversed(out))


def transposed_indices(dims: Sequence[int], perm: Sequence[int]) -> list[int]:
    """Flat source index of every element of ``arange(prod(dims)).reshape(dims).transpose(perm)``."""
    src_strides = strides(dims)
    idx = [0]
    for p in perm:
        size, step = dims[p], src_strides[p]
        if size == 1:
            continue
        offsets = range(0, size * step, step)
        idx = [base + off for base in idx for off in offsets]
    return idx


def iota_order(reshape_dims: Sequence[int], perm: Sequence[int]) -> list[int]:
    """Devices of the iota tile assignment ``<=[reshape_dims]T(perm)`` in row-major tile order."""
    return transposed_indices(reshape_dims, perm)


def transposed(values: Sequence[int], dims: Sequence[int], perm: Sequence[int]) -> list[int]:
    """``numpy.asarray(values).reshape(dims).transpose(perm).ravel()`` without numpy."""
    if prod(dims) != len(values):
        raise ValueError(f"cannot reshape {len(values)} values into {list(dims)}")
    return [values[i] for i in transposed_indices(dims, perm)]


def inverse_permutation(perm: Sequence[int]) -> list[int]:
    """``inv`` with ``inv[perm[i]] == i``."""
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def position_of(values: Sequence[int]) -> dict[int, int]:
    """Map each value to its index (device id -> position in an ordering)."""
    return {v: i for i, v in enumerate(values)}
