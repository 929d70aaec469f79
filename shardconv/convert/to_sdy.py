"""HLO -> sdy on the user's global mesh (docs/formats.md §3.3): decompose the device order into mesh axes.

``to_sdy`` returns the sharding; ``to_sdy_manual`` also returns the manual axes an HLO manual subgroup
stands for (a ``TensorSharding`` cannot carry them: they belong to the enclosing manual_computation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from math import prod
from typing import NamedTuple

from shardconv.convert.factoring import Piece, common_factor_walk, mesh_sorted_refs, pieces_to_refs
from shardconv.convert.reduction import hlo_reduction, with_sdy_reduction
from shardconv.convert.to_hlo import _to_hlo_one, to_hlo
from shardconv.core.arguments import rank_list
from shardconv.core.device_order import strides
from shardconv.core.errors import NotExpressibleError, ShardingValidationError
from shardconv.core.model import (
    AxisRef,
    DimSharding,
    HloSharding,
    Kind,
    ManualAxes,
    Mesh,
    SubgroupType,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.core.placement import same_assignment
from shardconv.core.sources import pointing_into
from shardconv.formats.coerce import HloArg, MeshLike, as_hlo, as_mesh
from shardconv.formats.xla_versions import DEFAULT_XLA_VERSION, check_xla_version

SdyValue = TensorSharding | TensorShardingPerValue
RankArg = int | Sequence[int | None] | None  # one rank, or one per tuple element


class Layout(NamedTuple):
    """A device order as mesh-position pieces: per ordered tile dim (major -> minor), plus the replicated set."""

    ordered: tuple[tuple[Piece, ...], ...]
    replicated: tuple[Piece, ...]


class _Broken(Exception):
    """The device order is not a reshape+transpose of the mesh; ``why`` says where it breaks."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def maximal_mesh(device: int, xla_version: str = DEFAULT_XLA_VERSION) -> Mesh:
    """The single-device mesh XLA's importer declares for ``{maximal device=N}``: ``@maximal_mesh_N`` up to
    jaxlib 0.10, ``@single_device_N`` at head (docs/releases.md)."""
    prefix = "single_device" if check_xla_version(xla_version) == "head" else "maximal_mesh"
    return Mesh.of([], device_ids=[device], name=f"{prefix}_{device}")


# --------------------------------------------------------------------------------------------------
# Layout of a tiled sharding on a mesh
# --------------------------------------------------------------------------------------------------


def iota_layout(hlo: HloSharding) -> Layout | None:
    """Symbolic layout of an iota tile array on an iota mesh of the same size; None if it does not refine."""
    tile = hlo.tile
    assert tile is not None and tile.reshape_dims is not None and tile.perm is not None
    rd, perm = tile.reshape_dims, tile.perm
    shape = [rd[p] for p in perm]
    walk = common_factor_walk(tile.dims, shape)
    if walk is None:
        return None
    rstride = strides(rd)
    inner = [1] * len(shape)
    stride_of: list[int] = [0] * len(walk)
    for k in range(len(walk) - 1, -1, -1):
        f = walk[k]
        stride_of[k] = rstride[perm[f.b_dim]] * inner[f.b_dim]
        inner[f.b_dim] *= f.size
    n_ordered = len(tile.dims) - (1 if hlo.subgroups and hlo.subgroups[-1] is SubgroupType.REPLICATED else 0)
    ordered: list[list[Piece]] = [[] for _ in range(n_ordered)]
    replicated: list[Piece] = []
    for f, st in zip(walk, stride_of):
        (ordered[f.a_dim] if f.a_dim < n_ordered else replicated).append(Piece(f.size, st))
    return Layout(tuple(tuple(p) for p in ordered), tuple(replicated))


def explicit_layout(hlo: HloSharding, mesh: Mesh, *, explain: bool = True) -> Layout:
    """Layout from the materialised device array; raises ``_Broken`` saying where the order breaks.

    ``explain=False`` skips the checks that only serve to say *where* an order breaks (tile positions
    regenerate, replica groups match): any order that fails them also fails the re-export comparison
    in ``tiled_to_sdy``, which then reruns this with the checks to word the error."""
    tile = hlo.tile
    assert tile is not None
    pos = _positions(tile.devices, mesh)
    dims = tile.dims
    g = dims[-1] if hlo.subgroups and hlo.subgroups[-1] is SubgroupType.REPLICATED else 1
    shape = dims[:-1] if g > 1 else dims
    mins = pos if g == 1 else list(map(min, *[pos[k::g] for k in range(g)]))
    if mins[0] != 0:
        raise _Broken(f"the first tile does not hold mesh position 0 (it holds {_fmt_set(pos[:g])})")
    steps = strides(shape)
    ordered = [_runs(mins, shape, d, steps[d]) if shape[d] > 1 else [] for d in range(len(shape))]
    if explain:
        _check_regenerates(mins, shape, ordered)
    replicated = _gaps([p for dim in ordered for p in dim], mesh.num_devices)
    if not explain:
        return Layout(tuple(map(tuple, ordered)), tuple(replicated))
    room = prod(p.size for p in replicated)
    if room != g:
        raise _Broken(
            f"the tiles use {mesh.num_devices // g} distinct mesh-position patterns but the order only "
            f"leaves room for {room} replicas per tile, not {g}"
        )
    if g > 1:
        span = sorted(_span(replicated))
        for t, base in enumerate(mins):
            group = sorted(pos[t * g : (t + 1) * g])
            expect = [base + s for s in span]
            if group != expect:
                raise _Broken(
                    f"replica group of tile {_index(t, shape)} holds mesh positions {_fmt_set(group)}, "
                    f"not {_fmt_set(expect)}"
                )
    return Layout(tuple(map(tuple, ordered)), tuple(replicated))


def _positions(devices: Sequence[int], mesh: Mesh) -> list[int]:
    if mesh.explicit_device_ids is None:
        n = mesh.num_devices
        if max(devices) >= n:
            bad = next(d for d in devices if d >= n)
            raise NotExpressibleError(f"device {bad} is not in the mesh {mesh.shape_str()} (devices 0..{n - 1})")
        return list(devices)
    where = mesh._position_of
    try:
        return list(map(where.__getitem__, devices))
    except KeyError as e:
        raise NotExpressibleError(f"device {e.args[0]} is not in the mesh's device_ids") from None


def _runs(flat: Sequence[int], shape: Sequence[int], dim: int, step: int | None = None) -> list[Piece]:
    """(size, stride) runs along one dim through the origin, major -> minor."""
    n = shape[dim]
    if n == 1:
        return []
    if step is None:
        step = strides(shape)[dim]
    seq = flat[: n * step : step] if step > 1 else flat[:n]
    out: list[Piece] = []
    every, remaining = 1, len(seq)
    while remaining > 1:
        s = seq[every]
        k = 1
        while k < remaining and seq[k * every] == k * s:
            k += 1
        if s <= 0 or remaining % k:
            shown = ", ".join(map(str, seq[: min(len(seq), 12)])) + (", ..." if len(seq) > 12 else "")
            raise _Broken(
                f"along tile dim {dim} the mesh positions go {shown}: after a run of {k} with step {s} the "
                f"order breaks (position {seq[k * every] if k < remaining else '?'} at index {k * every})"
            )
        out.append(Piece(k, s))
        every *= k
        remaining //= k
    out.reverse()
    return out


def _check_regenerates(flat: Sequence[int], shape: Sequence[int], ordered: Sequence[Sequence[Piece]]) -> None:
    """Every tile's position must be the sum of its per-dim offsets (catches orders runs cannot see)."""
    expect = [0]
    for d in ordered:
        if d:
            offs = _span(d)
            expect = [e + o for e in expect for o in offs]
    if list(flat) != expect:
        i = next(i for i, (a, b) in enumerate(zip(flat, expect)) if a != b)
        raise _Broken(f"tile {_index(i, shape)} is at mesh position {flat[i]}, the per-dim strides predict {expect[i]}")


def _span(pieces: Sequence[Piece]) -> list[int]:
    """All offsets spanned by some pieces, in row-major order of the pieces as given (first = major)."""
    out = [0]
    for p in pieces:
        out = [o + k * p.stride for o in out for k in range(p.size)]
    return out


def _gaps(pieces: Sequence[Piece], total: int) -> list[Piece]:
    """The mesh-position pieces no ordered dim uses (minor -> major weight order, sorted by stride)."""
    out: list[Piece] = []
    at = 1
    for p in sorted(pieces, key=lambda p: p.stride):
        if p.stride % at:
            raise _Broken(f"a run with step {p.stride} overlaps the run below it (which ends at {at})")
        if p.stride > at:
            out.append(Piece(p.stride // at, at))
        at = p.end
    if total % at:
        raise _Broken(f"the runs cover {at} mesh positions, which does not divide the mesh size {total}")
    if total > at:
        out.append(Piece(total // at, at))
    return out


def _index(flat: int, shape: Sequence[int]) -> list[int]:
    out = []
    for s, n in zip(strides(shape), shape):
        out.append(flat // s % n)
    return out


def _fmt_set(values: Sequence[int]) -> str:
    v = sorted(values)
    return "{" + ", ".join(map(str, v[:16])) + (", ..." if len(v) > 16 else "") + "}"


# --------------------------------------------------------------------------------------------------
# Layout -> sdy
# --------------------------------------------------------------------------------------------------


_EMPTY_DIM = DimSharding()  # frozen: safe to share
_NO_MANUAL_AXES = ManualAxes()


def layout_to_sdy(layout: Layout, hlo: HloSharding, mesh: Mesh, ref: str | Mesh) -> tuple[TensorSharding, ManualAxes]:
    """Name the pieces of a layout as dims, unreduced and manual axes on ``mesh``."""
    rank = hlo.rank
    assert rank is not None
    ordered = layout.ordered
    dims = tuple([DimSharding(pieces_to_refs(ordered[i], mesh)) if ordered[i] else _EMPTY_DIM for i in range(rank)])
    unreduced: tuple[AxisRef, ...] = ()
    manual: tuple[AxisRef, ...] = ()
    if hlo.subgroups == (SubgroupType.REPLICATED,) or not hlo.subgroups:
        return TensorSharding(mesh=ref, dims=dims), _NO_MANUAL_AXES
    for k, kind in enumerate(hlo.subgroups):
        if kind is SubgroupType.REPLICATED:
            continue
        refs = pieces_to_refs(layout.ordered[rank + k], mesh)
        if mesh_sorted_refs(layout.ordered[rank + k], mesh) != refs:
            raise NotExpressibleError(
                f"the {kind.value} subgroup orders its devices against the mesh ({', '.join(map(str, refs))}); "
                f"Shardy lists {kind.value} axes in mesh order"
            )
        if kind is SubgroupType.UNREDUCED:
            unreduced = refs
        else:
            manual = refs
    if any(r.sub_axis is not None for r in manual):
        raise NotExpressibleError(
            f"the manual subgroup needs sub-axes ({', '.join(map(str, manual))}); manual_axes take whole axes"
        )
    return TensorSharding(mesh=ref, dims=dims, unreduced=unreduced), ManualAxes(tuple(r.name for r in manual))


def tiled_to_sdy(hlo: HloSharding, mesh: Mesh, ref: str | Mesh) -> tuple[TensorSharding, ManualAxes]:
    """A tiled sharding on ``mesh``: symbolic for iota on iota, else from the device array; verified."""
    tile = hlo.tile
    assert tile is not None
    if tile.num_devices != mesh.num_devices:
        raise NotExpressibleError(
            f"the sharding spans {tile.num_devices} devices but the mesh {mesh.shape_str()} has {mesh.num_devices}"
        )
    layout = None
    if tile.is_iota and mesh.explicit_device_ids is None:
        layout = iota_layout(hlo)
    else:
        fast = _explicit_unexplained(hlo, mesh, ref)
        if fast is not None:
            return fast
    try:
        if layout is None:
            layout = explicit_layout(hlo, mesh)
        sharding, manual = layout_to_sdy(layout, hlo, mesh, ref)
    except _Broken as e:
        from shardconv.convert.suggest import suggestions  # only on failure: start-up never loads it

        raise NotExpressibleError(
            f"{hlo} is not a sharding on mesh {mesh.shape_str()}: {e.why}\n{tile_table(hlo, mesh)}",
            suggestions=suggestions(hlo, mesh),
        ) from None
    except NotExpressibleError as e:
        from shardconv.convert.suggest import suggestions

        raise NotExpressibleError(
            f"{hlo} is not a sharding on mesh {mesh.shape_str()}: {e.message}", suggestions=suggestions(hlo, mesh)
        ) from None
    back = to_hlo(sharding, mesh, manual_axes=manual.axes)
    if not same_assignment(back, hlo):
        raise AssertionError(f"internal error: {hlo} converted to {sharding} which exports as {back}")
    return sharding, manual


def _explicit_unexplained(hlo: HloSharding, mesh: Mesh, ref: str | Mesh) -> tuple[TensorSharding, ManualAxes] | None:
    """``tiled_to_sdy`` for a device array that decomposes cleanly, verified by the same re-export and
    comparison but without explicit_layout's explanatory checks. None on any failure: the caller then
    takes the checked path, which raises exactly what it always raised."""
    try:
        sharding, manual = layout_to_sdy(explicit_layout(hlo, mesh, explain=False), hlo, mesh, ref)
        back = _to_hlo_one(sharding, mesh, manual.axes, False)  # to_hlo for one sharding
    except Exception:  # noqa: BLE001 - any failure is re-derived (and worded) by the checked path
        return None
    return (sharding, manual) if same_assignment(back, hlo) else None


def tile_table(hlo: HloSharding, mesh: Mesh, limit: int = 8) -> str:
    """Which tile holds which devices (first few), for error messages."""
    tile = hlo.tile
    assert tile is not None and hlo.rank is not None
    rank = hlo.rank
    n_tiles = prod(tile.dims[:rank]) * prod(
        tile.dims[rank + k] for k, t in enumerate(hlo.subgroups) if t is not SubgroupType.REPLICATED
    )
    per = tile.num_devices // n_tiles
    devs = tile.devices
    shape = tile.dims[: len(tile.dims) - (1 if per > 1 else 0)]
    lines = [
        f"  tile {_index(t, shape)} holds devices {_fmt_set(devs[t * per : (t + 1) * per])}"
        for t in range(min(n_tiles, limit))
    ]
    if n_tiles > limit:
        lines.append(f"  ... ({n_tiles - limit} more tiles)")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------------


_ANY_RANK = (Kind.REPLICATED, Kind.MANUAL, Kind.UNKNOWN, Kind.UNREDUCED)  # flags with no dims of their own


def _need_rank(hlo: HloSharding, rank: int | None) -> int:
    if rank is None:
        raise ShardingValidationError(
            f"{hlo} applies to any rank: give its rank (rank= in Python, --rank on the command line)"
        )
    return rank


def _convert(hlo: HloSharding, mesh: Mesh, rank: RankArg) -> tuple[SdyValue, ManualAxes]:
    """``hlo`` on ``mesh``; the reduction its metadata names (XLA head's spelling) goes to the unreduced axes."""
    sharding, manual = _convert_kind(hlo, mesh, rank)
    if isinstance(sharding, TensorSharding):
        sharding = with_sdy_reduction(sharding, hlo_reduction(hlo))
    return sharding, manual


def _convert_kind(hlo: HloSharding, mesh: Mesh, rank: RankArg) -> tuple[SdyValue, ManualAxes]:
    ref: str | Mesh = mesh.symbol
    kind = hlo.kind
    if kind is Kind.TUPLE:
        ranks = rank_list(rank, len(hlo.elements), "to_sdy")
        for i, (e, r) in enumerate(zip(hlo.elements, ranks)):
            if r is None and e.kind in _ANY_RANK:
                raise ShardingValidationError(
                    f"tuple element {i} ({e}) applies to any rank: give one rank for all or one per element "
                    "(rank=[...] in Python, --rank 2,2,0 on the command line)"
                )
        placeholders = own_mesh(hlo) is not None
        parts = [_convert_element(e, mesh, r, placeholders) for e, r in zip(hlo.elements, ranks)]
        manual = {p[1] for p in parts if p[1].axes}
        if len(manual) > 1:
            raise NotExpressibleError("tuple elements are manual over different axes")
        sh = tuple(p[0] for p in parts if isinstance(p[0], TensorSharding))
        if len(sh) != len(parts):
            raise NotExpressibleError("nested tuple shardings have no Shardy form")
        return TensorShardingPerValue(sh), next(iter(manual), ManualAxes())
    if kind is Kind.MAXIMAL:
        assert hlo.device is not None
        if hlo.device not in set(mesh.device_ids):
            raise NotExpressibleError(f"device {hlo.device} is not in the mesh {mesh.shape_str()}")
        return TensorSharding(mesh=maximal_mesh(hlo.device), dims=()), ManualAxes()
    if not isinstance(rank, (int, type(None))):
        raise ShardingValidationError(f"{hlo} is not a tuple: it takes one rank, not {list(rank)}")
    if kind is Kind.MESH:
        return _from_v3(hlo, mesh, rank)
    if kind is Kind.TILED:
        if rank is not None and hlo.rank != rank:
            raise ShardingValidationError(f"{hlo} is for rank {hlo.rank}, not {rank}")
        return tiled_to_sdy(hlo, mesh, ref)
    r = _need_rank(hlo, rank)
    if kind is Kind.UNKNOWN:
        return TensorSharding(mesh=ref, dims=(DimSharding(is_closed=False),) * r), ManualAxes()
    empty = (DimSharding(),) * r
    if kind is Kind.MANUAL:
        return TensorSharding(mesh=ref, dims=empty), ManualAxes(tuple(a.name for a in mesh.axes if a.size > 1))
    if kind is Kind.UNREDUCED:
        axes = tuple(AxisRef(a.name) for a in mesh.axes if a.size > 1 or mesh.num_devices == 1)
        return TensorSharding(mesh=ref, dims=empty, unreduced=axes), ManualAxes()
    return TensorSharding(mesh=ref, dims=empty), ManualAxes()


def _convert_element(
    hlo: HloSharding, mesh: Mesh, rank: int | None, placeholders: bool
) -> tuple[SdyValue, ManualAxes]:
    """One tuple element. Beside V3 elements (XLA's ``sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir``,
    ``mixed_tuple_sharding_placeholder``) a V1/V2 ``{replicated}`` is a placeholder that leaves every dim
    open, and ``{maximal device=N}`` keeps its own single-device mesh, whatever devices the V3 mesh has."""
    if placeholders and hlo.kind is Kind.REPLICATED and rank is not None:
        return TensorSharding(mesh=mesh.symbol, dims=(DimSharding(is_closed=False),) * rank), ManualAxes()
    if placeholders and hlo.kind is Kind.MAXIMAL and hlo.device is not None:
        return TensorSharding(mesh=maximal_mesh(hlo.device), dims=()), ManualAxes()
    ms = hlo.mesh_sharding
    if placeholders and ms is not None and ms.mesh.is_maximal and ms.mesh.explicit_device_ids and mesh != ms.mesh:
        return TensorSharding(mesh=maximal_mesh(ms.mesh.explicit_device_ids[0]), dims=()), ManualAxes()
    return _convert(hlo, mesh, rank)


def _from_v3(hlo: HloSharding, mesh: Mesh, rank: int | None) -> tuple[SdyValue, ManualAxes]:
    """A V3 sharding lives on its own mesh; re-map it through its device assignment if that differs."""
    ms = hlo.mesh_sharding
    assert ms is not None
    dims = ms.dims
    # A single-device mesh takes the rank-0 sharding whatever the value's rank, as XLA's import writes
    # ``{maximal_mesh[device_id=0]}`` (docs/formats.md §2): like {maximal device=N}, it places the whole value.
    if rank is not None and len(dims) != rank and not ms.mesh.is_maximal:
        if dims:
            raise ShardingValidationError(f"{hlo} is for rank {len(dims)}, not {rank}")
        dims = (DimSharding(),) * rank  # no dims ({mesh[...], manual}): like {manual}, any rank fits
    own = TensorSharding(
        mesh=ms.mesh, dims=dims, replicated=ms.replicated, unreduced=ms.unreduced, unreduced_op=ms.unreduced_op
    )
    manual = tuple(r.name for r in ms.manual)
    if ms.mesh.axes == mesh.axes and ms.mesh.explicit_device_ids == mesh.explicit_device_ids:
        return replace(own, mesh=mesh.symbol), ManualAxes(manual)
    sharding, axes = _convert(to_hlo(own, ms.mesh, manual_axes=manual), mesh, rank)
    if isinstance(sharding, TensorSharding) and len(sharding.dims) == len(dims):
        # Open dims and priorities stay, as XLA's import keeps them when it moves a sharding onto a mesh
        # (sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir, frontend_attr_not_sharding).
        kept = tuple(replace(d, is_closed=o.is_closed, priority=o.priority) for d, o in zip(sharding.dims, dims))
        sharding = replace(sharding, dims=kept)
    return sharding, axes


def own_mesh(hlo: HloSharding) -> Mesh | None:
    """The mesh a V3 sharding carries, or a tuple whose V3 elements all carry (its other elements, V1/V2
    or flags, place devices on that mesh as on any other); None when there is none, or several."""
    if hlo.kind is Kind.MESH and hlo.mesh_sharding is not None:
        return hlo.mesh_sharding.mesh
    meshes = {m for m in map(own_mesh, hlo.elements) if m is not None}
    if len(meshes) > 1:  # a single-device element keeps its own mesh beside the others' (as XLA's import lifts it)
        meshes = {m for m in meshes if not m.is_maximal}
    return meshes.pop() if len(meshes) == 1 else None


def to_sdy(hlo: HloArg, mesh: MeshLike | None = None, *, rank: RankArg = None) -> SdyValue:
    """``hlo`` (an HloSharding or its text) as a Shardy sharding on the user's global ``mesh`` (docs/formats.md §3.3);
    a V3 sharding may leave ``mesh`` out (it carries its own). ``rank``: an int, or one per tuple element.

    Raises NotExpressibleError (with suggestions) when no sharding on ``mesh`` places the devices the
    same way, and when ``hlo`` is manual over some axes: use ``to_sdy_manual`` for those.
    """
    sharding, manual = _checked(hlo, mesh, rank, "to_sdy")
    if manual.axes:
        raise NotExpressibleError(
            f"{sharding} is manual over axes {', '.join(manual.axes)}: a Shardy sharding carries no manual axes "
            "(they belong to the enclosing sdy.manual_computation); use to_sdy_manual()"
        )
    return sharding


def to_sdy_manual(hlo: HloArg, mesh: MeshLike | None = None, *, rank: RankArg = None) -> tuple[SdyValue, ManualAxes]:
    """Like ``to_sdy``, also returning the manual axes (the ``manual_axes`` of a manual_computation)."""
    return _checked(hlo, mesh, rank, "to_sdy_manual")


def _checked(hlo: object, mesh: object, rank: RankArg, function: str) -> tuple[SdyValue, ManualAxes]:
    """The entry points' argument checks, and errors pointed into the text ``hlo`` was parsed from."""
    h = as_hlo(hlo, function, "hlo")
    if mesh is None:
        m = own_mesh(h)
        if m is None:  # what the sharding is decides that it needs one: not a wrong argument, a wrong value
            raise ShardingValidationError(f"{function}() needs the mesh for {h}: only a V3 sharding carries its own")
    else:
        m = as_mesh(mesh, function)
    with pointing_into(h):
        return _convert(h, m, rank)
