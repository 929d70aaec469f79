"""HLO -> sdy the way XLA's importer does it with no mesh (docs/formats.md §3.2): the synthetic ``_axis_N`` mesh.

This reproduces the "distorted mesh" (seed distorted-mesh-on-replicate): each sharding's local mesh
comes from its own tile dims, so ``batch=2,model=4`` can come back as ``_axis_0=4,_axis_1=2``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from shardconv.convert.factoring import common_factor_walk, common_factors
from shardconv.convert.to_sdy import RankArg, SdyValue, maximal_mesh, to_sdy_manual
from shardconv.core.arguments import rank_list, type_error
from shardconv.core.errors import NotExpressibleError, ShardingValidationError
from shardconv.core.model import (
    HloSharding,
    Kind,
    Mesh,
    SubgroupType,
    TensorSharding,
    TensorShardingPerValue,
    TileAssignment,
)
from shardconv.core.sources import pointing_into
from shardconv.formats.coerce import HloArg, as_hlo
from shardconv.formats.xla_versions import DEFAULT_XLA_VERSION


def local_mesh(hlo: HloSharding, *, iota_lists: bool = False) -> list[int]:
    """Axis sizes (device order) of the smallest mesh XLA's importer finds for one tiled V2 sharding
    (``iota_lists``: also a V1 list whose order is a plain iota, as XLA after 0.10.2 does)."""
    tile = (listed_iota(hlo) if iota_lists else hlo).tile
    assert tile is not None
    if not tile.is_iota:
        raise NotExpressibleError(
            f"XLA's importer aborts on explicit device lists ({hlo}); only iota (V2) shardings import"
            + ("" if iota_lists else " (newer XLA also imports a list in plain iota order: iota_lists=True)")
        )
    assert tile.reshape_dims is not None and tile.perm is not None
    shape = [tile.reshape_dims[p] for p in tile.perm]
    walk = common_factor_walk(tile.dims, shape)
    if walk is None:
        raise NotExpressibleError(
            f"XLA's importer cannot factor {hlo}: tile dims {list(tile.dims)} and device order {shape} "
            "have no common factors"
        )
    perm = tile.perm
    ordered = sorted(walk, key=lambda f: (perm[f.b_dim], f.a_dim))
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


def module_mesh(shardings: Sequence[HloSharding], *, iota_lists: bool = False) -> Mesh:
    """The one ``@mesh`` XLA builds for a module: every local mesh intersected by common factors."""
    sizes: list[int] | None = None
    for h in _tiled(shardings):
        local = local_mesh(h, iota_lists=iota_lists)
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


def _rank_at(ranks: RankArg, i: int) -> RankArg:
    if ranks is None or isinstance(ranks, int):
        return ranks
    return ranks[i]


def xla_import(
    shardings: Sequence[HloArg],
    *,
    ranks: RankArg | Sequence[RankArg] = None,
    unspecified_dims: Sequence[Sequence[int] | None] | None = None,
    iota_lists: bool = False,
    xla_version: str = DEFAULT_XLA_VERSION,
) -> tuple[Mesh, list[SdyValue]]:
    """The mesh and shardings XLA's importer builds for a module holding ``shardings`` (models or text).

    ``ranks`` (one per sharding, or one for all; a tuple's may be one per element) is needed for
    ``{replicated}`` / ``{unknown}``. ``unspecified_dims`` (one list per sharding: a ``Sharding`` custom
    call's ``backend_config="unspecified_dims=[...]"``) become open dims, as XLA's import makes them.
    ``{maximal device=N}`` refers to a mesh of its own, named as XLA ``xla_version`` names it
    (``maximal_mesh_N`` in jaxlib 0.10.2, the default; ``single_device_N`` at head).
    ``iota_lists=True`` follows XLA after 0.10.2, which imports a V1 list in plain iota order as that iota
    (0.10.2 aborts on every V1 list).
    """
    if isinstance(shardings, (str, bytes, HloSharding)):
        raise type_error("xla_import", "shardings", "a sequence of HloSharding (or HLO text)", shardings)
    hlos = [as_hlo(h, "xla_import", "shardings") for h in shardings]
    if unspecified_dims is not None and len(unspecified_dims) != len(hlos):
        raise ShardingValidationError(f"{len(unspecified_dims)} unspecified_dims lists for {len(hlos)} shardings")
    mesh = module_mesh(hlos, iota_lists=iota_lists)
    out: list[SdyValue] = []
    for i, h in enumerate(hlos):
        with pointing_into(h):
            rank = _rank_at(ranks, i)  # type: ignore[arg-type]  # a per-element rank list is a RankArg
            value = _import_one(h, mesh, rank, iota_lists, xla_version)
            out.append(open_dims(value, unspecified_dims[i] if unspecified_dims else None))
    return mesh, out


def _import_one(h: HloSharding, mesh: Mesh, rank: RankArg, iota_lists: bool, xla_version: str) -> SdyValue:
    if h.kind is Kind.TUPLE:
        ranks = rank_list(rank, len(h.elements), "xla_import")
        vals = [_import_one(e, mesh, r, iota_lists, xla_version) for e, r in zip(h.elements, ranks)]
        return TensorShardingPerValue(tuple(vals))  # type: ignore[arg-type]  # HLO tuples are flat: each leaf is one sharding
    if h.kind is Kind.MAXIMAL:
        return TensorSharding(mesh=maximal_mesh(h.device or 0, xla_version), dims=())
    return to_sdy_manual(listed_iota(h) if iota_lists else h, mesh, rank=rank)[0]


def listed_iota(hlo: HloSharding) -> HloSharding:
    """``hlo`` with a V1 list in plain iota order (``0,1,...,n-1``) written as that iota, as XLA after
    0.10.2 imports it (each element of a tuple likewise); any other sharding unchanged."""
    if hlo.kind is Kind.TUPLE:
        return replace(hlo, elements=tuple(map(listed_iota, hlo.elements)))
    tile = hlo.tile
    listed = hlo.kind is Kind.TILED and tile is not None and not tile.is_iota
    if listed and tile is not None and tile.devices == tuple(range(tile.num_devices)):
        return replace(hlo, tile=TileAssignment.iota(tile.dims))
    return hlo


def open_dims(value: SdyValue, dims: Sequence[int] | None) -> SdyValue:
    """``value`` with ``dims`` open (``{?}``, axes kept): the dims a Sharding custom call leaves unspecified
    (``backend_config="unspecified_dims=[1]"``), as XLA's import opens them."""
    if not dims:
        return value
    if not isinstance(value, TensorSharding):
        raise NotExpressibleError("unspecified_dims apply to one sharding, not to a tuple")
    bad = [d for d in dims if not 0 <= d < value.rank]
    if bad:
        raise ShardingValidationError(f"unspecified dim {bad[0]} is out of range for rank {value.rank}")
    opened = tuple(replace(d, is_closed=False) if i in set(dims) else d for i, d in enumerate(value.dims))
    return replace(value, dims=opened)
_SYNTHETIC_AXIS = re.compile(r"_?axis_\d+")


def is_synthetic(mesh: Mesh) -> bool:
    """A mesh this importer invented: every axis named ``_axis_N`` (``axis_N`` in older XLA releases)."""
    return bool(mesh.axes) and all(_SYNTHETIC_AXIS.fullmatch(a.name) for a in mesh.axes)
