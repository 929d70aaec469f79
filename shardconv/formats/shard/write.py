"""Model -> shard dialect text, as mlir-opt prints it (``split_axes = [[0], []]``, ``shape = 2x?x4``)."""

from __future__ import annotations

from shardconv.core.model import ShardGrid, ShardIndex, ShardSharding
from shardconv.core.printing import printer
from shardconv.formats.sdy.write import print_symbol


def _indices(items: tuple[ShardIndex, ...]) -> str:
    return "[" + ", ".join(map(str, items)) + "]"


@printer(ShardGrid)
def print_shard_grid(grid: ShardGrid) -> str:
    """``shard.grid @g(shape = 2x?x4)``; a grid of rank 0 prints ``shape = []`` (which its verifier rejects)."""
    shape = "x".join("?" if d is None else str(d) for d in grid.shape) or "[]"
    return f"shard.grid {print_symbol(grid.name)}(shape = {shape})"


@printer(ShardSharding)
def print_shard_sharding(sharding: ShardSharding) -> str:
    """``shard.sharding @g split_axes = [[0], []] halo_sizes = [1, 2] : !shard.sharding``."""
    split = "[" + ", ".join("[" + ", ".join(map(str, axes)) + "]" for axes in sharding.split_axes) + "]"
    text = f"shard.sharding {print_symbol(sharding.grid)} split_axes = {split}"
    if sharding.halo_sizes:
        text += f" halo_sizes = {_indices(sharding.halo_sizes)}"
    if sharding.sharded_dims_offsets:
        text += f" sharded_dims_offsets = {_indices(sharding.sharded_dims_offsets)}"
    return text + " : !shard.sharding"


__all__ = ["print_shard_grid", "print_shard_sharding"]
