"""Shard dialect text -> model: ``shard.grid`` and ``shard.sharding`` as mlir-opt prints them (a leading
``%s =`` and the trailing ``: !shard.sharding`` are optional). Not verified here: see ``verify``."""

from __future__ import annotations

from shardconv.core.arguments import require_text
from shardconv.core.model import ShardGrid, ShardSharding
from shardconv.formats.grammar import parse
from shardconv.formats.shard.tree import TRANSFORMER


def parse_shard_grid(text: str) -> ShardGrid:
    """``shard.grid @g(shape = 2x?x4)`` (the keyword optional)."""
    grid: ShardGrid = parse("shard", "grid_start", require_text(text, "parse_shard_grid"), TRANSFORMER)
    return grid


def parse_shard_sharding(text: str) -> ShardSharding:
    """``[%s =] shard.sharding @g split_axes = [[0], []] [halo_sizes = [...]] [sharded_dims_offsets = [...]]
    [: !shard.sharding]``."""
    sharding: ShardSharding = parse(
        "shard", "sharding_start", require_text(text, "parse_shard_sharding"), TRANSFORMER
    )
    return sharding


__all__ = ["parse_shard_grid", "parse_shard_sharding"]
