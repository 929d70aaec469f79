"""What would work instead when an HLO sharding has no form on the user's mesh."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import product

from shardconv.convert.to_hlo import export_layout, to_hlo
from shardconv.core.device_order import inverse_permutation, transposed
from shardconv.core.errors import Suggestion
from shardconv.core.model import AxisRef, DimSharding, HloSharding, Mesh, SubgroupType, TensorSharding

_MAX_CANDIDATES = 20_000
_SCORE_DEVICES = 1 << 14


def _whole_axis_candidates(counts: tuple[int, ...], mesh: Mesh, ref: str) -> Iterator[TensorSharding]:
    """Every assignment of whole mesh axes to dims (mesh order inside a dim) with these shard counts."""
    axes = [a for a in mesh.axes if a.size > 1]
    rank = len(counts)
    for n, choice in enumerate(product(range(rank + 1), repeat=len(axes))):
        if n >= _MAX_CANDIDATES:
            return
        got = [1] * rank
        for a, d in zip(axes, choice):
            if d < rank:
                got[d] *= a.size
        if tuple(got) != counts:
            continue
        dims = tuple(DimSharding(tuple(AxisRef(a.name) for a, d in zip(axes, choice) if d == i)) for i in range(rank))
        yield TensorSharding(mesh=ref, dims=dims)


def _score(candidate: HloSharding, hlo: HloSharding) -> int:
    """How many tiles hold the same device set in both."""
    a, b = candidate.tile, hlo.tile
    if a is None or b is None or a.dims != b.dims:
        return -1
    g = a.dims[-1] if candidate.subgroups and candidate.subgroups[-1] is SubgroupType.REPLICATED else 1
    da, db = a.devices, b.devices
    return sum(set(da[i : i + g]) == set(db[i : i + g]) for i in range(0, len(da), g))


def whole_axis_alternative(hlo: HloSharding, mesh: Mesh) -> TensorSharding | None:
    """The whole-axis sharding on ``mesh`` with ``hlo``'s per-dim shard counts that is closest to it."""
    if hlo.tile is None or hlo.rank is None or any(t is not SubgroupType.REPLICATED for t in hlo.subgroups):
        return None
    best: tuple[int, TensorSharding] | None = None
    for cand in _whole_axis_candidates(hlo.tile_counts, mesh, mesh.symbol):
        if hlo.tile.num_devices > _SCORE_DEVICES:
            return cand
        score = _score(to_hlo(cand, mesh), hlo)
        if best is None or score > best[0]:
            best = (score, cand)
    return best[1] if best else None


def mesh_for(hlo: HloSharding, sharding: TensorSharding, mesh: Mesh) -> Mesh:
    """``mesh`` with device_ids chosen so that ``sharding`` exports exactly as ``hlo``."""
    assert hlo.tile is not None
    lay = export_layout(sharding, Mesh.of(mesh.axes), ())
    shape = [lay.reshape_dims[p] for p in lay.perm]
    ids = transposed(hlo.tile.devices, shape, inverse_permutation(lay.perm))
    return Mesh.of(mesh.axes, device_ids=ids, name=mesh.name)


def per_dim_mesh(hlo: HloSharding, mesh: Mesh) -> tuple[Mesh, TensorSharding]:
    """A mesh with one axis per sharded tile dim (plus the replicas) whose device_ids are the tile array."""
    assert hlo.tile is not None and hlo.rank is not None
    axes: list[tuple[str, int]] = []
    dims = []
    for i, c in enumerate(hlo.tile.dims):
        name = f"dim{i}" if i < hlo.rank else hlo.subgroups[i - hlo.rank].value
        axes.append((name, c))
        if i < hlo.rank:
            dims.append(DimSharding((AxisRef(name),) if c > 1 else ()))
    new = Mesh.of(axes, device_ids=hlo.tile.devices, name=mesh.name)
    return new, TensorSharding(mesh=mesh.symbol, dims=tuple(dims))


def suggestions(hlo: HloSharding, mesh: Mesh) -> tuple[Suggestion, ...]:
    """The closest whole-axis sharding on ``mesh`` (with its HLO), and a mesh with device_ids that works."""
    if hlo.tile is None or hlo.rank is None:
        return ()
    out: list[Suggestion] = []
    alt = whole_axis_alternative(hlo, mesh)
    if alt is not None:
        out.append(
            Suggestion(
                f"the whole-axis sharding on {mesh.shape_str()} with the same shard counts "
                "(it places the shards on different devices)",
                f"{alt.to_text(attribute=False)}  =  {to_hlo(alt, mesh)}",
            )
        )
        if mesh.num_devices <= _SCORE_DEVICES:
            new = mesh_for(hlo, alt, mesh)
            why = "a mesh with explicit device_ids on which that sharding is exactly this one"
            out.append(Suggestion(why, str(new)))
    elif mesh.num_devices <= _SCORE_DEVICES and all(t is SubgroupType.REPLICATED for t in hlo.subgroups):
        new, sh = per_dim_mesh(hlo, mesh)
        why = "a mesh with one axis per tile dim and explicit device_ids"
        out.append(Suggestion(why, f"{new} with {sh.to_text(attribute=False)}"))
    return tuple(out)
