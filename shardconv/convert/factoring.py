"""The one factorisation routine: common factors of two shapes, and mesh-position pieces <-> axis refs.

``to_sdy``, ``xla_import`` and the suggestions all describe a device order as *pieces*: runs of the
flattened mesh position (size, stride). Naming a piece splits it at mesh-axis boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from shardconv.core.errors import NotExpressibleError
from shardconv.core.model import AxisRef, Mesh, SubAxis
from shardconv.core.records import record


@record
class Factor:
    """One common factor of two shapes: its size and the index of the dim it lies in, in each shape."""

    size: int
    a_dim: int
    b_dim: int


def common_factor_walk(a: Sequence[int], b: Sequence[int]) -> list[Factor] | None:
    """XLA's common-factor walk (major end first, 1s skipped); None when the shapes do not refine."""
    out: list[Factor] = []
    i = j = 0
    ra = rb = 1
    while True:
        while ra == 1 and i < len(a):
            ra = a[i]
            i += 1
        while rb == 1 and j < len(b):
            rb = b[j]
            j += 1
        if ra == 1 or rb == 1:
            return out if ra == 1 and rb == 1 else None
        small, big = min(ra, rb), max(ra, rb)
        if big % small:
            return None
        out.append(Factor(small, i - 1, j - 1))
        ra //= small
        rb //= small


def common_factors(a: Sequence[int], b: Sequence[int]) -> list[int] | None:
    """Sizes of the common refinement of two shapes (``f([4,8],[8,4]) == [4,2,4]``), None if none exists."""
    walk = common_factor_walk(a, b)
    return None if walk is None else [f.size for f in walk]


class Piece(NamedTuple):
    """A run of the flattened mesh position: ``size`` consecutive digit values with weight ``stride``.

    A NamedTuple, not a dataclass: conversions build several per call and this is their hot path."""

    size: int
    stride: int

    @property
    def end(self) -> int:
        return self.size * self.stride


def axis_strides(mesh: Mesh) -> list[int]:
    """Weight of each mesh axis in the row-major flattened mesh position."""
    return list(mesh._axis_strides)


def piece_to_axes(piece: Piece, mesh: Mesh) -> list[tuple[int, AxisRef]]:
    """Split a piece at mesh-axis boundaries, major axis first: (axis index, whole axis or sub-axis)."""
    out: list[tuple[int, AxisRef]] = []
    lo, hi = piece.stride, piece.size * piece.stride
    covered = 1
    for idx, (axis, st) in enumerate(zip(mesh.axes, mesh._axis_strides)):
        a_lo, a_hi = st, st * axis.size
        if lo >= a_hi or a_lo >= hi or a_lo >= a_hi or lo >= hi:  # no overlap: max(lo, a_lo) >= min(hi, a_hi)
            continue
        o_lo, o_hi = max(lo, a_lo), min(hi, a_hi)
        if o_lo % a_lo or o_hi % a_lo or (o_hi // a_lo) % (o_lo // a_lo) or axis.size % (o_hi // a_lo):
            raise NotExpressibleError(
                f"a run of {piece.size} mesh positions with step {piece.stride} cuts axis "
                f"{axis.name!r} (size {axis.size}) at a point that is not a sub-axis boundary"
            )
        minor, top = o_lo // a_lo, o_hi // a_lo
        size = top // minor
        if size == axis.size:
            out.append((idx, AxisRef(axis.name)))
        else:
            out.append((idx, AxisRef(axis.name, SubAxis(axis.size // top, size))))
        covered *= size
    if covered != piece.size:
        raise NotExpressibleError(
            f"a run of {piece.size} mesh positions with step {piece.stride} does not fit the mesh "
            f"{mesh.shape_str()}"
        )
    return out


def merge_refs(refs: Sequence[tuple[int, AxisRef]], mesh: Mesh) -> tuple[AxisRef, ...]:
    """Merge adjacent sub-axes of one axis (major then minor) and promote full coverage to the whole axis."""
    if len(refs) == 1 and (refs[0][1].sub_axis is None or refs[0][1].sub_axis.size != mesh.axes[refs[0][0]].size):
        return (refs[0][1],)  # nothing to merge, and not a sub-axis spanning its whole axis
    out: list[tuple[int, int, int]] = []  # (axis index, pre_size, size)
    for idx, ref in refs:
        n = mesh.axes[idx].size
        pre, size = (ref.sub_axis.pre_size, ref.sub_axis.size) if ref.sub_axis else (1, n)
        if out and out[-1][0] == idx and out[-1][1] * out[-1][2] == pre:
            out[-1] = (idx, out[-1][1], out[-1][2] * size)
        else:
            out.append((idx, pre, size))
    result = []
    for idx, pre, size in out:
        axis = mesh.axes[idx]
        result.append(AxisRef(axis.name) if size == axis.size else AxisRef(axis.name, SubAxis(pre, size)))
    return tuple(result)


def pieces_to_refs(pieces: Sequence[Piece], mesh: Mesh) -> tuple[AxisRef, ...]:
    """Name the pieces of one ordered dim (major -> minor) as merged axis refs."""
    if not pieces:
        return ()
    return merge_refs([r for p in pieces for r in piece_to_axes(p, mesh)], mesh)


def mesh_sorted_refs(pieces: Sequence[Piece], mesh: Mesh) -> tuple[AxisRef, ...]:
    """Name an unordered set of pieces (replicated/unreduced) as refs in mesh order."""
    refs = [r for p in pieces for r in piece_to_axes(p, mesh)]
    refs.sort(key=lambda r: (r[0], r[1].sub_axis.pre_size if r[1].sub_axis else 1))
    return merge_refs(refs, mesh)


def ref_range(ref: AxisRef, mesh: Mesh) -> Piece:
    """The piece of the flattened mesh position an axis ref stands for."""
    idx = mesh.axis_names.index(ref.name)
    n = mesh.axes[idx].size
    st = mesh._axis_strides[idx]
    if ref.sub_axis is None:
        return Piece(n, st)
    minor = n // (ref.sub_axis.pre_size * ref.sub_axis.size)
    return Piece(ref.sub_axis.size, st * minor)
