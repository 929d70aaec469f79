"""Hypothesis strategies for the converter tests: valid (mesh, sharding) pairs with sub-axes,
device_ids, explicit replicated and unreduced axes; plus the canonical form HLO can carry."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from shardconv.convert.factoring import merge_refs
from shardconv.core.model import AxisRef, DimSharding, Mesh, SubAxis, TensorSharding

SIZES = (1, 2, 3, 4, 6, 8)
NAMES = ("a", "b", "c", "x", "y", "model", "batch")


@dataclass(frozen=True)
class Case:
    mesh: Mesh
    sharding: TensorSharding


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def meshes(draw: st.DrawFn, max_devices: int = 64, max_axes: int = 4, device_ids: bool = True) -> Mesh:
    n_axes = draw(st.integers(1, max_axes))
    names = draw(st.permutations(NAMES))[:n_axes]
    sizes: list[int] = []
    total = 1
    for _ in range(n_axes):
        s = draw(st.sampled_from([s for s in SIZES if total * s <= max_devices]))
        sizes.append(s)
        total *= s
    ids = None
    if device_ids and draw(st.booleans()):
        ids = draw(st.permutations(range(total)))
    return Mesh.of(list(zip(names, sizes)), device_ids=ids, name="mesh")


@st.composite
def chunks(draw: st.DrawFn, mesh: Mesh) -> list[tuple[int, AxisRef]]:
    """Every mesh axis cut into a random chain of sub-axes (whole axis when uncut)."""
    out = []
    for idx, axis in enumerate(mesh.axes):
        if axis.size == 1:
            out.append((idx, AxisRef(axis.name)))
            continue
        at = 1
        while at < axis.size:
            nxt = draw(st.sampled_from([d for d in _divisors(axis.size) if d > at and d % at == 0]))
            size = nxt // at
            ref = AxisRef(axis.name) if size == axis.size else AxisRef(axis.name, SubAxis(axis.size // nxt, size))
            out.append((idx, ref))
            at = nxt
    return out


def _sorted(refs: list[tuple[int, AxisRef]], mesh: Mesh) -> tuple[AxisRef, ...]:
    refs = sorted(refs, key=lambda r: (r[0], r[1].sub_axis.pre_size if r[1].sub_axis else 1))
    return merge_refs(refs, mesh)


@st.composite
def shardings_on(
    draw: st.DrawFn, mesh: Mesh, unreduced: bool = True, replicated: bool = True, max_rank: int = 3
) -> TensorSharding:
    """A valid sharding on ``mesh`` using random sub-axes of every axis."""
    rank = draw(st.integers(0 if mesh.num_devices > 1 else 1, max_rank))
    dims: list[list[tuple[int, AxisRef]]] = [[] for _ in range(rank)]
    unred: list[tuple[int, AxisRef]] = []
    repl: list[tuple[int, AxisRef]] = []
    lo = -1 - int(unreduced) - int(replicated)
    for piece in draw(chunks(mesh)):
        dest = draw(st.integers(lo, rank - 1))
        if dest >= 0:
            dims[dest].append(piece)
        elif dest == -2 and unreduced:
            unred.append(piece)
        elif dest < -1:
            repl.append(piece)
    dim_shardings = []
    for d in dims:
        order = draw(st.permutations(d)) if len(d) > 1 else d
        dim_shardings.append(DimSharding(merge_refs(order, mesh)))
    return TensorSharding(
        mesh="mesh", dims=tuple(dim_shardings), replicated=_sorted(repl, mesh), unreduced=_sorted(unred, mesh)
    )


@st.composite
def cases(draw: st.DrawFn, max_devices: int = 64, device_ids: bool = True, **kw: bool) -> Case:
    mesh = draw(meshes(max_devices=max_devices, device_ids=device_ids))
    return Case(mesh, draw(shardings_on(mesh, **kw)))


@st.composite
def batches(draw: st.DrawFn, size: int, max_devices: int = 64, **kw: bool) -> list[Case]:
    """Many shardings on one mesh: one oracle module each (XLA's mesh dedup aborts on some mixes)."""
    mesh = draw(meshes(max_devices=max_devices))
    return [Case(mesh, draw(shardings_on(mesh, **kw))) for _ in range(size)]


def hlo_visible(s: TensorSharding, mesh: Mesh) -> TensorSharding:
    """What survives sdy -> HLO -> sdy: no size-1 axes, no explicit replicated, closed dims, no priorities."""

    def keep(refs: tuple[AxisRef, ...]) -> tuple[AxisRef, ...]:
        kept = [(mesh.axis_names.index(r.name), r) for r in refs if r.size(mesh) > 1]
        return merge_refs(kept, mesh)  # dropping a size-1 axis can make neighbours mergeable

    # On a one-device mesh XLA keeps {unreduced}, which comes back as every (size-1) axis.
    unreduced = tuple(AxisRef(n) for n in mesh.axis_names) if s.unreduced and mesh.num_devices == 1 else keep(s.unreduced)
    return TensorSharding(
        mesh=s.mesh, dims=tuple(DimSharding(keep(d.axes)) for d in s.dims), replicated=(), unreduced=unreduced
    )
