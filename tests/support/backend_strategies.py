"""Hypothesis strategies for backend tests: meshes of up to 8 devices and Shardy shardings on them
(whole axes and sub-axes, optional device_ids), plus shapes that may not divide evenly."""

from __future__ import annotations

from hypothesis import strategies as st

from shardconv.core.model import AxisRef, DimSharding, Mesh, SubAxis, TensorSharding

NAMES = ("a", "b", "c")


@st.composite
def meshes(draw: st.DrawFn, max_devices: int = 8) -> Mesh:
    sizes: list[int] = []
    for _ in range(draw(st.integers(1, 3))):
        room = max_devices // max(1, _prod(sizes))
        if room < 2:
            break
        sizes.append(draw(st.sampled_from([s for s in (2, 4, 8) if s <= room])))
    n = _prod(sizes)
    ids = draw(st.one_of(st.none(), st.permutations(list(range(n)))))
    return Mesh.of([(NAMES[i], s) for i, s in enumerate(sizes)], device_ids=ids)


def _pieces(mesh: Mesh) -> list[AxisRef]:
    """Every axis as a whole, or split into two sub-axes when its size is 4 or 8."""
    return [AxisRef(a.name) for a in mesh.axes]


@st.composite
def shardings(draw: st.DrawFn, mesh: Mesh, rank: int) -> TensorSharding:
    """A valid sharding: each axis used whole, split into sub-axes spread over dims, or not at all."""
    dims: list[list[AxisRef]] = [[] for _ in range(rank)]
    for axis in mesh.axes:
        how = draw(st.sampled_from(["none", "whole", "split"] if axis.size >= 4 else ["none", "whole"]))
        if how == "whole":
            dims[draw(st.integers(0, rank - 1))].append(AxisRef(axis.name))
        elif how == "split":  # "x":(1)k and "x":(k)size/k in two different dims (unmergeable)
            k = draw(st.sampled_from([d for d in (2, 4) if d < axis.size]))
            if rank < 2:
                dims[0].append(AxisRef(axis.name))
                continue
            i, j = draw(st.permutations(list(range(rank))))[:2]
            dims[i].append(AxisRef(axis.name, SubAxis(1, k)))
            dims[j].append(AxisRef(axis.name, SubAxis(k, axis.size // k)))
    return TensorSharding(mesh="mesh", dims=tuple(DimSharding(tuple(d)) for d in dims))


def _prod(xs: list[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p
