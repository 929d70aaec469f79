"""MLIR's ``shard`` dialect <-> Shardy (and through Shardy, HLO): a grid's axes are a mesh's axes by
position. What the dialect says and Shardy cannot (halos, uneven shard offsets, dynamic grid sizes) is
refused with the reason, and so is what Shardy says and the dialect cannot (sub-axes, unreduced axes,
device orders)."""

from __future__ import annotations

from itertools import pairwise

from shardconv.core.errors import NotExpressibleError, ShardingValidationError
from shardconv.core.model import AxisRef, DimSharding, Mesh, ShardGrid, ShardSharding, TensorSharding
from shardconv.formats.sdy.verify import verify_on
from shardconv.formats.shard.verify import verify_shard_sharding

GRID_AXIS_NAME = "axis_{}"  # the Shardy name of grid axis i when no mesh names it


def grid_mesh(grid: ShardGrid, names: tuple[str, ...] | None = None) -> Mesh:
    """The Shardy mesh of ``grid``: its sizes, its axes named ``names`` (default ``axis_0``, ...)."""
    if any(d is None for d in grid.shape):
        raise NotExpressibleError(
            f"{grid} has a dynamic size (?): a Shardy or HLO mesh needs every axis size to know its devices"
        )
    names = names or tuple(GRID_AXIS_NAME.format(i) for i in range(len(grid.shape)))
    return Mesh.of([(n, d or 0) for n, d in zip(names, grid.shape, strict=True)], name=grid.name)


def mesh_grid(mesh: Mesh, name: str | None = None) -> ShardGrid:
    """The grid of ``mesh`` (axes by position); a mesh whose device_ids are not iota has none, as a grid
    numbers its devices row-major."""
    if mesh.explicit_device_ids is not None:
        raise NotExpressibleError(
            f"mesh {mesh} lists its devices in another order (device_ids); a shard.grid numbers them "
            "row-major and has no device list"
        )
    return ShardGrid(name or mesh.name or "mesh", mesh.axis_sizes)


def _even(values: tuple[int | str, ...]) -> bool:
    """Upstream's canonicalizer (NormalizeSharding) drops static offsets that are evenly spaced."""
    static = [v for v in values if isinstance(v, int)]
    if len(static) != len(values) or len(static) <= 2:
        return False
    step = static[1] - static[0]
    return all(b - a == step for a, b in pairwise(static))


def shard_to_sdy(sharding: ShardSharding, mesh: Mesh, *, rank: int | None = None) -> TensorSharding:
    """The Shardy sharding of ``sharding`` on ``mesh`` (grid axis i is the mesh's axis i; the grid's name
    is not the mesh's), with ``rank`` dims when given (split_axes may leave trailing dims out)."""
    halos, offsets = sharding.halo_sizes, sharding.sharded_dims_offsets
    if halos and all(h == 0 for h in halos):  # the canonicalizer drops all-zero halos
        halos = ()
    if _even(offsets):
        offsets = ()
    verify_shard_sharding(sharding, ShardGrid(sharding.grid, mesh.axis_sizes))
    if halos:
        raise NotExpressibleError(
            f"halo_sizes = [{', '.join(map(str, halos))}]: Shardy and HLO give each device its shard only, "
            "with no halo of its neighbours' elements"
        )
    if offsets:
        raise NotExpressibleError(
            f"sharded_dims_offsets = [{', '.join(map(str, offsets))}]: Shardy and HLO cut a dim into equal "
            "shards (padding the last), not at given offsets"
        )
    dims = [DimSharding(tuple(AxisRef(mesh.axes[a].name) for a in axes)) for axes in sharding.split_axes]
    if rank is not None:
        if any(d.axes for d in dims[rank:]):
            raise ShardingValidationError(
                f"split_axes shards dim {max(i for i, d in enumerate(dims) if d.axes)}; the tensor has rank {rank}"
            )
        dims = dims[:rank] + [DimSharding()] * (rank - len(dims))
    return TensorSharding(mesh=mesh.name or "mesh", dims=tuple(dims))


def sdy_to_shard(sharding: TensorSharding, mesh: Mesh) -> ShardSharding:
    """The shard dialect's sharding of ``sharding`` on the grid of ``mesh`` (``mesh_grid``). Open dims and
    priorities, which only guide propagation, are dropped as HLO drops them; trailing unsharded dims are
    left out as mlir-opt prints them (``[[]]`` at least)."""
    verify_on(sharding, mesh)
    grid = mesh_grid(mesh, sharding.mesh if isinstance(sharding.mesh, str) else None)
    if sharding.unreduced:
        raise NotExpressibleError(
            f"unreduced={{{', '.join(str(a) for a in sharding.unreduced)}}}: the shard dialect has no "
            "partial (unreduced) state"
        )
    split: list[tuple[int, ...]] = []
    for dim in sharding.dims:
        sub = next((a for a in dim.axes if a.sub_axis is not None), None)
        if sub is not None:
            raise NotExpressibleError(
                f"sub-axis {sub}: a grid axis is used whole; declare a grid whose axis is split in two "
                "(and its mesh likewise) to shard by part of it"
            )
        split.append(tuple(mesh.axis_names.index(a.name) for a in dim.axes))
    while len(split) > 1 and not split[-1]:
        split.pop()
    return ShardSharding(grid.name, tuple(split) or ((),))


__all__ = ["GRID_AXIS_NAME", "grid_mesh", "mesh_grid", "sdy_to_shard", "shard_to_sdy"]
