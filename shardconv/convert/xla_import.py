"""HLO -> sdy the way XLA's importer does it with no mesh (FORMATS §3.2): the synthetic ``_axis_N`` mesh.

This reproduces the "distorted mesh" (seed distorted-mesh-on-replicate): each sharding's local mesh
comes from its own tile dims, so ``batch=2,model=4`` can come back as ``_axis_0=4,_axis_1=2``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shardconv.core.errors import NotExpressibleError
from shardconv.core.model import HloSharding, Kind, Mesh, SubgroupType, TensorShardingPerValue
from shardconv.convert.factoring import common_factor_walk, common_factors
from shardconv.convert.to_sdy import SdyValue, to_sdy_manual

RankArg = int | Sequence[int | None] | None


def local_mesh(hlo: HloSharding) -> list[int]:
    """Axis sizes (device order) of the smallest mesh XLA's importer finds for one tiled V2 sharding."""
    tile = hlo.tile
    assert tile is not None
    if not tile.is_iota:
        raise NotExpressibleError(
            f"XLA's importer aborts on explicit device lists ({hlo}); only iota (V2) shardings import"
        )
    assert tile.reshape_dims is not None and tile.perm is not None
    shape = [tile.reshape_dims[p] for p in tile.perm]
    walk = common_factor_walk(tile.dims, shape)
    if walk is None:
        raise NotExpressibleError(
            f"XLA's importer cannot factor {hlo}: tile dims {list(tile.dims)} and device order {shape} "
            "have no common factors"
        )
    ordered = sorted(walk, key=lambda f: (tile.perm[f.b_dim], f.a_dim))  # type: ignore[index]
    return [f.size for f in ordered]


def _tiled(shardings: Sequence[HloSharding]) -> list[HloSharding]:
    out: list[HloSharding] = []
    for h in shardings:
        if h.kind is Kind.TUPLE:
            out.extend(_tiled(h.elements))
        elif h.kind is Kind.TILED:
            if SubgroupType.MANUAL in h.subgroups:
                raise NotExpressibleError(
                    f"{h} is manual over some devices: XLA imports it into an sdy.manual_computation, "
                    "which has no per-value form (use to_sdy_manual on the real mesh)"
                )
            out.append(h)
        elif h.kind is Kind.MESH:
            raise NotExpressibleError(f"{h} is a V3 sharding: it carries its own mesh (use to_sdy)")
    return out


def module_mesh(shardings: Sequence[HloSharding]) -> Mesh:
    """The one ``@mesh`` XLA builds for a module: every local mesh intersected by common factors."""
    sizes: list[int] | None = None
    for h in _tiled(shardings):
        local = local_mesh(h)
        if sizes is None:
            sizes = local
            continue
        merged = common_factors(sizes, local)
        if merged is None:
            raise NotExpressibleError(
                f"XLA's importer cannot intersect the meshes {sizes} and {local} (from {h}): no common factors"
            )
        sizes = merged
    sizes = [s for s in sizes or [] if s > 1]
    return Mesh.of([(f"_axis_{i}", s) for i, s in enumerate(sizes)], name="mesh")


def _rank_at(ranks: RankArg, i: int) -> int | None:
    if ranks is None or isinstance(ranks, int):
        return ranks
    return ranks[i]


def xla_import(shardings: Sequence[HloSharding], *, ranks: RankArg = None) -> tuple[Mesh, list[SdyValue]]:
    """The mesh and shardings XLA's importer builds for a module holding ``shardings``.

    ``ranks`` (one per sharding, or one for all) is needed for ``{replicated}`` / ``{unknown}``.
    ``{maximal device=N}`` refers to a mesh of its own named ``maximal_mesh_N`` (this jaxlib's name).
    """
    mesh = module_mesh(shardings)
    out: list[SdyValue] = []
    for i, h in enumerate(shardings):
        if h.kind is Kind.TUPLE:
            vals = [to_sdy_manual(e, mesh, rank=None)[0] for e in h.elements]
            out.append(TensorShardingPerValue(tuple(vals)))  # type: ignore[arg-type]
        elif h.kind is Kind.MAXIMAL:
            out.append(to_sdy_manual(h, Mesh.of([], device_ids=[h.device or 0]), rank=None)[0])
        else:
            out.append(to_sdy_manual(h, mesh, rank=_rank_at(ranks, i))[0])
    return mesh, out


_SYNTHETIC_AXIS = re.compile(r"_?axis_\d+")


def is_synthetic(mesh: Mesh) -> bool:
    """A mesh this importer invented: every axis named ``_axis_N`` (``axis_N`` in older XLA releases)."""
    return bool(mesh.axes) and all(_SYNTHETIC_AXIS.fullmatch(a.name) for a in mesh.axes)
